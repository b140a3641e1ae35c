"""`fake/` models: the scripted model served in-process through the SDK path, free, marked,
and replying as a plausible model would, the same reply to the same request."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from lasagna_judge import (
    JudgeError,
    grade,
    is_scripted,
    load_rubric,
    make_llm,
    price_for,
    scripted_note,
)
from lasagna_judge.testing import _scripted_questions as questions
from lasagna_judge.testing import scripted_reply

PASSAGE = (
    "The railway reached the town in 1849. The station was placed on the hill above the "
    "harbour, and a lane, still called Barrel Lane, was laid for the carts. Today about "
    "2,400 people live in the town, and the ferry leaves from the south pier."
)
ANSWER_PROMPT = (
    "Passages:\n[1] Lasagna is a baked Italian dish. The classic version from Bologna layers "
    "green pasta with ragù and béchamel.\n\n[2] Penne are short tubes cut on a slant.\n\n"
    "Question: Which two sauces go into the classic lasagna from Bologna?\n\nAnswer from "
    'the passages only. If they do not contain the answer, reply exactly "Not mentioned".'
)


def test_a_fake_model_needs_no_key_records_no_endpoint_and_answers_from_the_context() -> None:
    async def main() -> tuple[str, str]:
        async with make_llm("fake/scripted", cache=False) as llm:
            messages = [{"role": "user", "content": ANSWER_PROMPT}]
            first = await llm.complete(messages)
            again = await llm.complete(messages)
            assert llm._endpoint is None  # the port changes from run to run
            assert first.model == "fake/scripted" and first.usage.input_tokens > 0
            return first.text, again.text

    first, again = asyncio.run(main())
    assert (
        first
        == again
        == ("The classic version from Bologna layers green pasta with ragù and béchamel.")
    )


def test_a_fake_model_takes_no_base_url() -> None:
    with pytest.raises(JudgeError, match="takes no base_url"):
        make_llm("fake/scripted", base_url="http://127.0.0.1:9/v1")


def test_a_fake_model_is_free_and_marked() -> None:
    assert price_for(None, "fake/scripted") == (0.0, 0.0)
    assert price_for({"fake/scripted": (5.0, 10.0)}, "fake/scripted") == (0.0, 0.0)
    assert price_for(None, "openai/gpt-4o-mini") is None
    assert is_scripted("fake/x") and not is_scripted("openai/fake") and not is_scripted(None)
    assert scripted_note(["openai/gpt-4o", None]) is None
    one = scripted_note("fake/scripted")
    assert one is not None and one.startswith("scripted: fake/scripted answers with canned")
    both = scripted_note(["fake/b", "fake/a", "openai/x"])
    assert both is not None and both.startswith("scripted: fake/a, fake/b answer with")
    assert "these figures mean nothing" in both


@pytest.mark.parametrize(
    ("rubric", "prediction", "score"),
    [
        ("binary", "Australia's capital city is Canberra.", 4),
        ("binary", "Sydney is the capital.", 0),
        ("binary", "I don't know.", 0),
        ("scale", "The capital is Canberra.", 4),
        ("scale", "Sydney.", 0),
    ],
)
def test_a_fake_judge_grades_through_the_schema_with_its_reasoning(
    rubric: str, prediction: str, score: int
) -> None:
    async def main() -> Any:
        async with make_llm("fake/scripted", cache=False) as llm:
            return await grade(
                llm,
                load_rubric(rubric),
                question="What is the capital of Australia?",
                references=["Canberra"],
                prediction=prediction,
            )

    found = asyncio.run(main())
    assert (found.status, found.path, found.score) == ("ok", "schema", score)
    assert "Canberra" in found.reasoning and found.model == "fake/scripted"


# The fields of lasagna-synth's schemas (this package's tests do not import it).
FIELDS = {
    "AnsweredQuestion": ("question", "answer"),
    "SupportCheck": ("reason", "supported"),
    "AnswerCheck": ("reason", "answered"),
}


def _tool_request(model: str, name: str, prompt: str) -> dict[str, Any]:
    """A tools-mode request as instructor sends it, for the schema of `name`."""
    fields = FIELDS[name]
    schema = {
        "type": "object",
        "properties": {f: {"type": "string"} for f in fields},
        "required": list(fields),
    }
    return {
        "model": model,
        "messages": [{"role": "user", "content": prompt}],
        "tools": [{"type": "function", "function": {"name": name, "parameters": schema}}],
        "tool_choice": {"type": "function", "function": {"name": name}},
    }


def _factoid(use: int, model: str = "scripted") -> dict[str, str]:
    variation = f"\n\nThis passage serves several questions; this is question {use} from it"
    prompt = f"Passage from town.md:\n<passage>\n{PASSAGE}\n</passage>\n\nWrite one.{variation}"
    reply: dict[str, str] = json.loads(
        scripted_reply(_tool_request(model, "AnsweredQuestion", prompt))
    )
    return reply


def test_questions_of_one_passage_differ_and_take_their_answer_from_it() -> None:
    written = [_factoid(use) for use in (1, 2, 3, 4)]
    assert len({w["question"] for w in written}) == 4
    for w in written:
        assert w["question"].endswith("?") and w["answer"] in PASSAGE
        assert w["answer"] not in w["question"]  # the question asks for it
    assert _factoid(1) == written[0]  # the same request, the same reply


def test_the_checks_support_what_the_passages_say_and_only_that() -> None:
    passages = f"<passage>\n{PASSAGE}\n</passage>"
    supported = json.loads(
        scripted_reply(
            _tool_request(
                "scripted",
                "SupportCheck",
                f"{passages}\n\nQuestion: When?\nReference answer: 1849\n\nIs it supported?",
            )
        )
    )
    invented = json.loads(
        scripted_reply(
            _tool_request(
                "scripted",
                "SupportCheck",
                f"{passages}\n\nQuestion: When?\nReference answer: 1901\n\nIs it supported?",
            )
        )
    )
    assert (supported["supported"], invented["supported"]) == ("yes", "no")
    open_question = questions.unanswerable(passages, "scripted")
    assert open_question is not None
    answered = json.loads(
        scripted_reply(
            _tool_request(
                "scripted",
                "AnswerCheck",
                f"{passages}\n\nQuestion: {open_question['question']}\n\nAnswered?",
            )
        )
    )
    assert answered["answered"] == "no"
