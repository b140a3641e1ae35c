"""A structured call through the openai SDK asks what instructor asks, for every kind of
response model and mode (the request at the wire is instructor's own), re-asks by its
rules, and reads every documented field of a reply."""

from __future__ import annotations

import asyncio
import copy
import enum
import json
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field, StringConstraints, field_validator

from lasagna_judge import GradeModel, make_llm
from lasagna_judge._providers import StructuredMode
from lasagna_judge.testing import FakeLLMServer, Reply


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
MODES: list[StructuredMode] = ["tools", "json_schema", "json", "md_json"]
MESSAGES = [{"role": "user", "content": "hi"}]


def instructor_request(mode: StructuredMode, model: type[BaseModel]) -> dict[str, Any]:
    """What instructor's own handler for `mode` makes of the call, as JSON."""
    import instructor
    from instructor.utils.providers import Provider
    from instructor.v2.core.registry import mode_registry
    from instructor.v2.core.response_model import prepare_response_model

    kind = {
        "tools": instructor.Mode.TOOLS,
        "json_schema": instructor.Mode.JSON_SCHEMA,
        "json": instructor.Mode.JSON,
        "md_json": instructor.Mode.MD_JSON,
    }[mode]
    handlers = mode_registry.get_handlers(Provider.OPENAI, kind)
    kwargs = {"model": "m", "messages": copy.deepcopy(MESSAGES), "temperature": 0.0}
    _, request = handlers.request_handler(
        response_model=prepare_response_model(model), kwargs=kwargs
    )
    return dict(json.loads(json.dumps(request)))


def structured(server: FakeLLMServer, model: type[BaseModel], mode: StructuredMode) -> Any:
    async def go() -> Any:
        llm = make_llm("openai/m", base_url=server.base_url, cache=False, mode=mode)
        async with llm:
            return await llm.structured(MESSAGES, model)

    return asyncio.run(go())


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_the_request_at_the_wire_is_instructors(
    mode: StructuredMode, model: type[BaseModel]
) -> None:
    with FakeLLMServer() as server:  # replies with a value of the schema
        structured(server, model, mode)
        assert server.requests[0] == instructor_request(mode, model)


def test_validation_that_changes_the_value_runs_as_often_as_before() -> None:
    with FakeLLMServer(reply='{"word": "quiet"}') as server:
        result = structured(server, Shouting, "tools")
    assert result.value == Shouting(word="QUIET")


def test_a_reply_that_does_not_validate_is_re_asked_by_instructors_rules() -> None:
    with FakeLLMServer(reply=["not json", '{"score": 2}']) as server:
        result = structured(server, GradeModel, "tools")
        first, second = server.requests
    assert result.status == "ok" and result.value == GradeModel(score=2)
    assert result.attempts == 2
    assert first == instructor_request("tools", GradeModel)
    assert len(second["messages"]) > len(first["messages"])  # instructor's re-ask
    assert second["tools"] == first["tools"]


@pytest.mark.parametrize("mode", MODES)
def test_a_reply_with_every_documented_field_parses(mode: StructuredMode) -> None:
    # The fake server's replies carry service_tier, message.annotations, system_fingerprint
    # and the usage details (test_fake_server checks it): the fields a hand-made reader
    # refused (issue 43); and here one no SDK knows yet.
    documented = Reply('{"reasoning": "same fact", "score": 4}', extra={"lasagna_next": [1]})
    with FakeLLMServer(reply=documented) as server:
        result = structured(server, GradeModel, mode)
        assert server.calls == 1
    assert result.status == "ok" and result.value == GradeModel(reasoning="same fact", score=4)
