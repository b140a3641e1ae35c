"""The plain case of a structured call, read without instructor, gives exactly what
instructor gives: the same request bytes, and for every reply the same outcome (or the
reply is handed to instructor)."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import enum
import json
import subprocess
import sys
from typing import Annotated, Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field, StringConstraints, field_validator

from lasagna_judge import GradeModel, make_llm
from lasagna_judge._plain import native_extras, native_outcome, request_json
from lasagna_judge._providers import StructuredMode
from lasagna_judge._structured import (
    _openai_handlers,
    _prepare_request,
    _prepared_model,
    drive_structured,
)
from lasagna_judge.testing import FakeLLMServer


class NoDoc(BaseModel):
    answer: str
    score: int = 0


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Item(BaseModel):
    """An item."""

    name: str = Field(description="Its name.")
    tags: list[str] = Field(default_factory=list)


class Rich(BaseModel):
    """Everything at once: nested models, enums, literals, optionals, constraints.

    Second paragraph of the docstring, kept in the description.
    """

    items: list[Item]
    best: Item | None = None
    colour: Colour = Colour.RED
    verdict: Literal["yes", "no", "unclear"]
    text: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
    ratio: float = Field(default=0.5, ge=0, le=1)
    aliased: str = Field(default="", alias="Aliased")


class DocParams(BaseModel):
    """A model whose docstring describes its fields.

    Args:
        answer: the answer, from the docstring.
    """

    answer: str


class DocProse(BaseModel):
    """Is the answer supported? The verdict says whether it is."""

    verdict: Literal["yes", "no"]
    supported: bool = False


class DocRest(BaseModel):
    """A model described in reST.

    :param verdict: from the docstring.
    """

    verdict: str


class DocNumpy(BaseModel):
    """A model described in numpydoc.

    Parameters
    ----------
    verdict
        from the docstring.
    """

    verdict: str


class DocGoogleTyped(BaseModel):
    """A model described in Google style.

    Attributes:
        verdict (str): from the docstring.
    """

    verdict: str


class Node(BaseModel):
    """A tree."""

    children: list[Node] = []


class Shouting(BaseModel):
    """Validation that changes the value."""

    word: str

    @field_validator("word")
    @classmethod
    def upper(cls, value: str) -> str:
        return value.upper()


MODELS = [
    GradeModel, NoDoc, Item, Rich, DocParams, DocProse, DocRest, DocNumpy, DocGoogleTyped, Node,
    Shouting,
]  # fmt: skip
LEFT_TO_INSTRUCTOR = (DocParams, DocRest, DocNumpy, DocGoogleTyped, Node)
MODES: list[StructuredMode] = ["tools", "json_schema"]
KWARGS = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 0.0}


def instructor_request(mode: StructuredMode, model: type[BaseModel]) -> dict[str, Any]:
    _, request = _prepare_request(_openai_handlers(mode), mode, _prepared_model(model), KWARGS)
    return request


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_the_request_is_instructors_byte_for_byte(
    mode: StructuredMode, model: type[BaseModel]
) -> None:
    extras = native_extras(mode, model)
    if extras is None:
        # left to instructor: only where its docstring or recursion rules could differ
        assert model in LEFT_TO_INSTRUCTOR
        return
    assert model not in LEFT_TO_INSTRUCTOR
    fields, encoded = extras
    assert json.loads(encoded) == fields
    want = json.dumps(instructor_request(mode, model), ensure_ascii=False)
    assert request_json(KWARGS, encoded) == want


def test_the_judges_own_schema_takes_the_plain_path() -> None:
    assert native_extras("tools", GradeModel) is not None
    assert native_extras("json_schema", GradeModel) is not None
    assert native_extras("json", GradeModel) is None
    assert native_extras("md_json", GradeModel) is None


def reply(arguments: Any, *, content: Any = None, tools: bool = True) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tools:
        message["tool_calls"] = [
            {"id": "call_1", "type": "function", "function": {"name": "X", "arguments": arguments}}
        ]
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
    }


def instructor_outcome(
    mode: StructuredMode, data: dict[str, Any], model: type[BaseModel]
) -> tuple[Any, str, tuple[str, ...]] | str:
    """What instructor makes of `data` as the only reply (no re-ask): (value, raw, errors),
    or the text of the failure when openai's ChatCompletion cannot read it."""
    from openai.types.chat import ChatCompletion

    async def send(request: dict[str, Any]) -> Any:
        body = copy.deepcopy(data)
        body.setdefault("id", "")
        body.setdefault("object", "chat.completion")
        body.setdefault("created", 0)
        body.setdefault("model", "m")
        for index, choice in enumerate(body["choices"]):
            if isinstance(choice, dict):
                choice.setdefault("index", index)
                choice.setdefault("finish_reason", "stop")
        return ChatCompletion.model_validate(body)

    try:
        outcome = asyncio.run(drive_structured(model, mode, dict(KWARGS), send, 0))
    except Exception as exc:  # the reply is not a chat completion
        return f"{type(exc).__name__}"
    value = outcome.value.model_dump() if outcome.value is not None else None
    return value, outcome.raw, outcome.errors


VALID = ['{"reasoning": "fine", "score": 4}', '{"score": 3}', '{"score": 0, "extra": 1}']
ARGUMENTS = [
    *VALID * 3,
    '{"score": "3"}',  # strict: a string is not an int
    '{"score": 3.0}',
    '{"reasoning": 1, "score": 4}',
    '{"reasoning": "x"}',
    "not json",
    "",
    '{"score": 4} trailing',
    '{"score": 4, "extra": true}',
]
# Values a field may be changed to: odd ones, and the valid ones of some other field.
PLAUSIBLE = ["assistant", "chat.completion", "function", "stop", "length", "tool_calls", "x"]
VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 2),
    st.floats(allow_nan=False),
    st.text(max_size=5),
    st.sampled_from([*PLAUSIBLE, {}, [], {"prompt_tokens": 1, "completion_tokens": 1}]),
)
PATHS = [
    ("id",),
    ("object",),
    ("created",),
    ("model",),
    ("usage",),
    ("usage", "total_tokens"),
    ("usage", "prompt_tokens_details"),
    ("service_tier",),
    ("system_fingerprint",),
    ("choices",),
    ("choices", 0, "finish_reason"),
    ("choices", 0, "index"),
    ("choices", 0, "logprobs"),
    ("choices", 0, "message", "role"),
    ("choices", 0, "message", "content"),
    ("choices", 0, "message", "refusal"),
    ("choices", 0, "message", "function_call"),
    ("choices", 0, "message", "tool_calls"),
    ("choices", 0, "message", "tool_calls", 0, "id"),
    ("choices", 0, "message", "tool_calls", 0, "type"),
    ("choices", 0, "message", "tool_calls", 0, "function", "name"),
]


def mutate(data: dict[str, Any], path: tuple[Any, ...], value: Any, delete: bool) -> None:
    target: Any = data
    for step in path[:-1]:
        target = target[step]
    if delete:
        target.pop(path[-1], None)
    else:
        target[path[-1]] = value


@settings(max_examples=800, deadline=None)
@given(
    mode=st.sampled_from(MODES),
    arguments=st.sampled_from(ARGUMENTS),
    in_content=st.booleans(),
    changes=st.lists(
        st.tuples(st.sampled_from(PATHS), VALUES, st.booleans()),
        max_size=2,
        unique_by=lambda c: c[0],
    ),
)
def test_every_reply_read_here_is_read_as_instructor_reads_it(
    mode: StructuredMode, arguments: str, in_content: bool, changes: list[Any]
) -> None:
    content = arguments if in_content or mode == "json_schema" else None
    data = reply(arguments, content=content, tools=mode == "tools")
    for path, value, delete in changes:
        # (a path through a value that an earlier change replaced changes nothing)
        with contextlib.suppress(AttributeError, KeyError, IndexError, TypeError):
            mutate(data, path, value, delete)
    if not isinstance(data.get("choices"), list) or not data["choices"]:
        return  # `_post` refuses a reply without choices before either reader sees it
    ours = native_outcome(mode, copy.deepcopy(data), GradeModel)
    if ours is None:
        return  # handed to instructor, which reads this very reply
    assert instructor_outcome(mode, data, GradeModel) == (
        ours.value.model_dump() if ours.value is not None else None,
        ours.raw,
        ours.errors,
    )


def test_validation_that_changes_the_value_runs_as_often_as_before() -> None:
    # instructor validated, then the LLM validated the dump again: twice, here too.
    with FakeLLMServer(reply='{"word": "quiet"}') as server:

        async def go() -> Any:
            async with make_llm("openai/m", base_url=server.base_url, cache=False) as llm:
                return await llm.structured(KWARGS["messages"], Shouting)

        result = asyncio.run(go())
    assert result.value == Shouting(word="QUIET")


def test_a_reply_that_does_not_validate_is_re_asked_by_instructors_rules() -> None:
    with FakeLLMServer(reply=["not json", '{"score": 2}']) as server:

        async def go() -> Any:
            async with make_llm("openai/m", base_url=server.base_url, cache=False) as llm:
                return await llm.structured(KWARGS["messages"], GradeModel)

        result = asyncio.run(go())
        first, second = server.requests
    assert result.status == "ok" and result.value == GradeModel(score=2)
    assert result.attempts == 2
    assert first == instructor_request("tools", GradeModel) | {"model": "m"}
    assert len(second["messages"]) > len(first["messages"])  # instructor's re-ask
    assert second["tools"] == first["tools"]


def test_grading_imports_neither_openai_nor_instructors_handlers() -> None:
    script = """
import asyncio, json, sys
from lasagna_judge import grade_batch, load_rubric, make_llm
from lasagna_judge.testing import FakeLLMServer
with FakeLLMServer(reply=json.dumps({"reasoning": "ok", "score": 4})) as server:
    async def go():
        async with make_llm("openai/m", base_url=server.base_url, cache=False) as llm:
            items = [{"question": "q", "references": ["a"], "prediction": "a"}]
            return await grade_batch(llm, load_rubric("binary"), items)
    grades = asyncio.run(go())
assert grades[0].score == 4 and grades[0].path == "schema", grades
print(sorted(m for m in sys.modules if m == "openai" or m.startswith("instructor.v2.providers")))
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"


def test_plain_completions_import_no_pydantic(fake_llm_server: FakeLLMServer) -> None:
    # A sweep's calls are plain completions: pydantic (20 ms and 8 MB of every sweep's
    # start) loads with the first schema-enforced call, not before.
    script = f"""
import asyncio, sys
from lasagna_judge import make_llm
async def go():
    async with make_llm("openai/m", base_url={fake_llm_server.base_url!r}, cache=False) as llm:
        return await llm.complete([{{"role": "user", "content": "hi"}}])
assert asyncio.run(go()).text
print("pydantic" in sys.modules)
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "False"
