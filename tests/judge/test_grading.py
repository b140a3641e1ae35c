"""Grading through the LLM door, against the fake server at the wire (real HTTP)."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest

from lasagna_judge import (
    GRADE_FIELDS,
    LLM,
    Grade,
    GradeItem,
    JudgeError,
    build_prompt,
    grade,
    grade_batch,
    load_rubric,
    make_llm,
    summarize_grades,
)
from lasagna_judge.testing import FakeLLMServer, Fault, Reply

T = TypeVar("T")
BINARY = load_rubric("binary")
SCALE = load_rubric("scale")


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def make(server: FakeLLMServer, **kwargs: Any) -> LLM:
    options: dict[str, Any] = {"api_key": "test", "cache": False, "max_retries": 0}
    options.update(kwargs)
    return make_llm("openai/fake", base_url=server.base_url, **options)


async def grade_one(llm: LLM, rubric: Any = BINARY, **kwargs: Any) -> Grade:
    fields = {"question": "Where?", "references": ["Paris"], "prediction": "In Paris."}
    fields.update(kwargs)
    try:
        return await grade(llm, rubric, **fields)
    finally:
        await llm.aclose()


def user_text(request: dict[str, Any]) -> str:
    return str(request["messages"][-1]["content"])


# -- one grade, each path ------------------------------------------------------------------


def test_schema_path_records_everything(fake_llm_server: FakeLLMServer) -> None:
    fake_llm_server.reply = '{"reasoning": "Same city.", "score": 4}'
    g = run(grade_one(make(fake_llm_server)))
    assert (g.score, g.status, g.path) == (4, "ok", "schema")
    assert g.reasoning == "Same city."
    assert (g.rubric_id, g.rubric_version) == ("binary", BINARY.version)
    expected = build_prompt(BINARY, question="Where?", references=["Paris"], prediction="In Paris.")
    assert g.prompt_sha256 == expected.sha256
    assert g.model == "openai/fake"
    assert json.loads(g.raw) == {"reasoning": "Same city.", "score": 4}
    assert g.input_tokens > 0 and g.output_tokens > 0
    assert g.latency_s >= 0 and g.cached is False and g.error is None
    # what went over the wire is exactly the built prompt
    request = fake_llm_server.requests[0]
    assert [{"role": m["role"], "content": m["content"]} for m in request["messages"]] == list(
        expected.as_list()
    )
    assert fake_llm_server.calls == 1


def test_schema_scores_out_of_scale_follow_the_rubric(fake_llm_server: FakeLLMServer) -> None:
    fake_llm_server.reply = '{"reasoning": "close", "score": 3}'
    assert run(grade_one(make(fake_llm_server))).score == 0  # binary: anything but 4 is 0
    fake_llm_server.reply = '{"reasoning": "great", "score": 9}'
    g = run(grade_one(make(fake_llm_server), SCALE))
    assert (g.score, g.path) == (4, "schema")  # scale: clamped


def test_a_reply_that_ignores_the_schema_falls_back_to_the_raw_text(
    fake_llm_server: FakeLLMServer,
) -> None:
    fake_llm_server.reply = Reply("The answer names the same city.\nScore: 3", tool_call=False)
    g = run(grade_one(make(fake_llm_server), SCALE))
    assert (g.score, g.status, g.path) == (3, "ok", "regex")
    assert g.raw.endswith("Score: 3")
    assert g.input_tokens > 0  # usage of the re-asks is kept, not lost


def test_fenced_json_in_plain_text_takes_the_json_path(fake_llm_server: FakeLLMServer) -> None:
    fake_llm_server.reply = Reply(
        '```json\n{"reasoning": "wrong year", "score": 1}\n```', tool_call=False
    )
    g = run(grade_one(make(fake_llm_server), SCALE))
    assert (g.score, g.status, g.path, g.reasoning) == (1, "ok", "json", "wrong year")


def test_arguments_that_fail_validation_still_parse(fake_llm_server: FakeLLMServer) -> None:
    # The tool call's arguments carry a score pydantic rejects ("4 points"); the regex finds it.
    fake_llm_server.reply = '{"reasoning": "fine", "score": "4 points"}'
    g = run(grade_one(make(fake_llm_server), BINARY))
    assert (g.score, g.status, g.path) == (4, "ok", "regex")


def test_nothing_parsable_is_unparsed_never_zero(fake_llm_server: FakeLLMServer) -> None:
    fake_llm_server.reply = Reply("I would rather not say.", tool_call=False)
    g = run(grade_one(make(fake_llm_server)))
    assert (g.score, g.status, g.path) == (None, "unparsed", None)
    assert g.raw == "I would rather not say."
    assert g.error is None


def test_transport_failure_is_an_error_grade(fake_llm_server: FakeLLMServer) -> None:
    fake_llm_server.reply = Fault(status=500)
    g = run(grade_one(make(fake_llm_server, max_retries=1)))
    assert (g.score, g.status, g.path) == (None, "error", None)
    assert g.error and "500" in g.error
    assert "test" not in g.error.split()  # the API key never shows
    assert fake_llm_server.calls == 2  # one try and one retry, then the error


def test_both_refusals_score_top_with_no_call(fake_llm_server: FakeLLMServer) -> None:
    llm = make(fake_llm_server)
    g = run(
        grade_one(
            llm,
            SCALE,
            question="What is the CEO's shoe size?",
            references=["Not mentioned in the documents."],
            prediction="I don't know; the context does not contain that information.",
        )
    )
    assert (g.score, g.status, g.path) == (4, "ok", "refusal-heuristic")
    assert g.prompt_sha256 is None and g.raw == ""
    assert fake_llm_server.calls == 0


def test_without_the_refusal_heuristic_the_model_is_asked(
    fake_llm_server: FakeLLMServer,
) -> None:
    """For a tool whose own refusal rule differs (OpenViking's run.py asks every time)."""
    fake_llm_server.reply = '{"reasoning": "Says nothing.", "score": 1}'
    g = run(
        grade_one(
            make(fake_llm_server),
            SCALE,
            references=["Not mentioned"],
            prediction="I cannot answer that.",
            refusal_heuristic=False,
        )
    )
    assert (g.score, g.path) == (1, "schema")
    assert fake_llm_server.calls == 1


def test_a_refusal_against_a_real_reference_is_graded_by_the_model(
    fake_llm_server: FakeLLMServer,
) -> None:
    fake_llm_server.reply = '{"reasoning": "No answer given.", "score": 0}'
    g = run(grade_one(make(fake_llm_server), prediction="I don't know."))
    assert (g.score, g.path) == (0, "schema")
    assert fake_llm_server.calls == 1


def test_any_reference_may_be_the_refusal(fake_llm_server: FakeLLMServer) -> None:
    g = run(
        grade_one(make(fake_llm_server), references=["Paris", "unknown"], prediction="Unknown.")
    )
    assert g.path == "refusal-heuristic"


def test_bad_input_raises_before_any_call(fake_llm_server: FakeLLMServer) -> None:
    with pytest.raises(JudgeError, match="at least one reference"):
        run(grade_one(make(fake_llm_server), references=[]))
    assert fake_llm_server.calls == 0


def test_a_cached_grade_costs_no_call(fake_llm_server: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm_server.reply = '{"reasoning": "Same city.", "score": 4}'
    first = run(grade_one(make(fake_llm_server, cache=tmp_path / "c.sqlite")))
    second = run(grade_one(make(fake_llm_server, cache=tmp_path / "c.sqlite")))
    assert fake_llm_server.calls == 1
    assert second.cached and not first.cached
    assert (second.score, second.path, second.raw) == (first.score, first.path, first.raw)


def test_grade_to_dict_has_every_field_in_order(fake_llm_server: FakeLLMServer) -> None:
    fake_llm_server.reply = '{"reasoning": "ok", "score": 4}'
    row = run(grade_one(make(fake_llm_server))).to_dict()
    assert tuple(row) == GRADE_FIELDS
    assert GRADE_FIELDS[:3] == ("score", "status", "path")
    json.dumps(row)  # JSON-ready


# -- batches -------------------------------------------------------------------------------


def by_prediction(scores: dict[str, int], **fault: Any) -> Callable[[dict[str, Any]], Any]:
    """A reply function: the score is looked up from the prediction in the prompt, after
    a random short delay so that completion order differs from submission order."""
    rng = random.Random(7)

    def reply(request: dict[str, Any]) -> Any:
        text = user_text(request)
        for prediction, score in scores.items():
            if f"Answer to grade: {prediction}\n" in text:
                if score < 0:
                    return Fault(**fault)
                body = json.dumps({"reasoning": prediction, "score": score})
                return Fault(delay=rng.uniform(0, 0.03), content=body)
        return Fault(status=400)

    return reply


def items_for(predictions: list[str]) -> list[dict[str, Any]]:
    return [{"question": "q?", "references": "ref", "prediction": p} for p in predictions]


def test_batch_keeps_input_order(fake_llm_server: FakeLLMServer) -> None:
    predictions = [f"answer {i}" for i in range(30)]
    scores = {p: i % 5 for i, p in enumerate(predictions)}
    fake_llm_server.reply = by_prediction(scores)

    async def go() -> list[Grade]:
        llm = make(fake_llm_server, concurrency=10)
        try:
            return await grade_batch(llm, SCALE, items_for(predictions), concurrency=10)
        finally:
            await llm.aclose()

    grades = run(go())
    assert [g.score for g in grades] == [i % 5 for i in range(30)]
    assert [g.reasoning for g in grades] == predictions


def test_batch_bounds_concurrency_and_reports_progress(fake_llm_server: FakeLLMServer) -> None:
    fake_llm_server.reply = '{"reasoning": "ok", "score": 4}'
    fake_llm_server.latency = 0.05
    progress: list[tuple[int, int]] = []
    seen: dict[int, Grade] = {}

    async def go() -> list[Grade]:
        llm = make(fake_llm_server, concurrency=50)  # the batch's bound is the tighter one
        try:
            items = items_for([f"p{i}" for i in range(12)])
            return await grade_batch(
                llm,
                BINARY,
                items,
                concurrency=3,
                on_progress=lambda d, t: progress.append((d, t)),
                on_grade=seen.__setitem__,
            )
        finally:
            await llm.aclose()

    grades = run(go())
    assert len(grades) == 12 and all(g.score == 4 for g in grades)
    assert 2 <= fake_llm_server.max_in_flight <= 3
    assert progress == [(i, 12) for i in range(1, 13)]
    assert [seen[i] for i in range(12)] == grades


def test_one_failing_item_does_not_stop_the_others(fake_llm_server: FakeLLMServer) -> None:
    predictions = ["good one", "bad one", "good two", "bad two", "good three"]
    scores = {"good one": 4, "bad one": -1, "good two": 0, "bad two": -1, "good three": 4}
    fake_llm_server.reply = by_prediction(scores, status=503)

    async def go() -> list[Grade]:
        llm = make(fake_llm_server)
        try:
            return await grade_batch(llm, BINARY, items_for(predictions), concurrency=2)
        finally:
            await llm.aclose()

    grades = run(go())
    assert [g.status for g in grades] == ["ok", "error", "ok", "error", "ok"]
    assert [g.score for g in grades] == [4, None, 0, None, 4]
    assert all("503" in (g.error or "") for g in grades if g.status == "error")


def test_batch_accepts_objects_and_string_references(fake_llm_server: FakeLLMServer) -> None:
    fake_llm_server.reply = '{"reasoning": "ok", "score": 4}'

    async def go() -> list[Grade]:
        llm = make(fake_llm_server)
        try:
            items = [GradeItem("q", "ref", "a"), GradeItem("q", ["r1", "r2"], "b")]
            return await grade_batch(llm, BINARY, items)
        finally:
            await llm.aclose()

    assert [g.score for g in run(go())] == [4, 4]
    assert "Reference answer(s): r1 | r2" in user_text(fake_llm_server.requests[1]) or (
        "Reference answer(s): r1 | r2" in user_text(fake_llm_server.requests[0])
    )


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        ({"question": "q", "prediction": "p"}, r"item 1: missing 'references'"),
        ({"question": "q", "references": [], "prediction": "p"}, "item 1: references"),
        ({"question": "q", "references": "r", "prediction": 3}, "item 1: prediction"),
        (object(), "item 1: object has no attribute 'question'"),
    ],
)
def test_a_bad_item_fails_the_batch_before_any_call(
    fake_llm_server: FakeLLMServer, item: object, expected: str
) -> None:
    async def go() -> list[Grade]:
        llm = make(fake_llm_server)
        try:
            return await grade_batch(llm, BINARY, [items_for(["fine"])[0], item])
        finally:
            await llm.aclose()

    with pytest.raises(JudgeError, match=expected):
        run(go())
    assert fake_llm_server.calls == 0


def test_a_failing_progress_callback_is_raised_as_itself(fake_llm_server: FakeLLMServer) -> None:
    fake_llm_server.reply = '{"reasoning": "ok", "score": 4}'

    def boom(done: int, total: int) -> None:
        raise ValueError("progress broke")

    async def go() -> list[Grade]:
        llm = make(fake_llm_server)
        try:
            return await grade_batch(llm, BINARY, items_for(["a", "b"]), on_progress=boom)
        finally:
            await llm.aclose()

    with pytest.raises(ValueError, match="progress broke"):
        run(go())


def test_empty_batch_and_bad_concurrency(fake_llm_server: FakeLLMServer) -> None:
    async def go(concurrency: int) -> list[Grade]:
        llm = make(fake_llm_server)
        try:
            return await grade_batch(llm, BINARY, [], concurrency=concurrency)
        finally:
            await llm.aclose()

    assert run(go(4)) == []
    with pytest.raises(JudgeError, match="concurrency must be at least 1, got 0"):
        run(go(0))


# -- summaries -----------------------------------------------------------------------------


def a_grade(score: int | None, status: str, path: str | None, **extra: Any) -> Grade:
    fields: dict[str, Any] = {
        "score": score,
        "status": status,
        "path": path,
        "reasoning": "",
        "rubric_id": "scale",
        "rubric_version": "1",
        "prompt_sha256": None,
        "model": "openai/fake",
        "raw": "",
    }
    fields.update(extra)
    return Grade(**fields)


def test_summary_never_averages_failures_as_zero() -> None:
    grades = [
        a_grade(4, "ok", "schema", input_tokens=10, output_tokens=2),
        a_grade(2, "ok", "regex", input_tokens=10, output_tokens=3, cached=True),
        a_grade(4, "ok", "refusal-heuristic"),
        a_grade(None, "unparsed", None, input_tokens=10, output_tokens=5),
        a_grade(None, "error", None, error="boom"),
    ]
    summary = summarize_grades(grades)
    assert summary.n == 5
    assert summary.scored == 3
    assert summary.mean_score == pytest.approx(10 / 3)  # not 10 / 5
    assert summary.score_counts == {2: 1, 4: 2}
    assert summary.by_status == {"ok": 3, "unparsed": 1, "error": 1}
    assert summary.by_path == {"schema": 1, "json": 0, "regex": 1, "refusal-heuristic": 1}
    assert (summary.input_tokens, summary.output_tokens, summary.cached) == (30, 10, 1)
    assert summary.rubric == "scale@1"
    assert summary.models == ("openai/fake",)
    # rows read back from JSONL summarise the same way
    assert summarize_grades([g.to_dict() for g in grades]) == summary
    json.dumps(summary.to_dict())


def test_summary_of_nothing_scored_has_no_mean() -> None:
    summary = summarize_grades([a_grade(None, "error", None), a_grade(None, "unparsed", None)])
    assert summary.mean_score is None and summary.scored == 0
    assert summarize_grades([]).n == 0
