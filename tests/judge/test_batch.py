"""Batches at the wire: OpenAI's Batch API and Anthropic's Message Batches on the fake
server, their answers in the cache under a direct call's key, failed items left to direct
calls, a kill's batch resumed instead of paid twice."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from lasagna_judge import (
    BatchError,
    BatchState,
    GradeModel,
    grade_batch,
    grade_requests,
    load_rubric,
    make_llm,
    run_batch,
)
from lasagna_judge.testing import FakeLLMServer

ITEMS = [
    {"question": f"Capital number {i}?", "references": ["Paris"], "prediction": f"City {i}"}
    for i in range(6)
]
REPLY = json.dumps({"reasoning": "fine", "score": 4})


def write(path: Path, data: bytes) -> None:  # the tests' writer; commands pass the atomic one
    path.write_bytes(data)


def grade_with_batch(server: FakeLLMServer, tmp_path: Path, **llm: Any) -> Any:
    rubric = load_rubric("binary")
    state = BatchState(tmp_path / "job.batch.json", write)

    async def run() -> Any:
        async with make_llm(
            "openai/judge", base_url=server.base_url, api_key="t", cache=tmp_path / "c", **llm
        ) as judge:
            report = await run_batch(
                judge, grade_requests(rubric, ITEMS), state=state, poll_interval=0.01
            )
            grades = await grade_batch(judge, rubric, ITEMS)
            return report, grades, judge.batch_usage, judge.usage

    return asyncio.run(run())


def test_a_batch_answers_every_grade_and_a_rerun_without_it_is_free(tmp_path: Path) -> None:
    with FakeLLMServer(reply=REPLY) as server:
        server.batches.delay = 0.05
        report, grades, batch_usage, usage = grade_with_batch(server, tmp_path)
        assert server.batches.created == 1 and len(server.batches.requests) == 6
        assert server.batches.polls >= 2  # submitted, then polled until it ended
        assert server.calls == 0  # no direct call: every grade came from the batch
        assert [g.score for g in grades] == [4] * 6 and all(g.path == "schema" for g in grades)
        assert report.answered == 6 and report.failed == 0 and not report.resumed
        assert batch_usage == usage and usage.input_tokens > 0
        # Read back from the cache, yet this run's (it paid for them), and the batch's.
        assert all(g.batch and not g.cached for g in grades)
        assert not (tmp_path / "job.batch.json").exists()  # done: no batch left to follow
        # The batch request is the direct call's: the same tools, the same messages.
        body = server.batches.requests[0]
        assert body["tools"][0]["function"]["name"] == "GradeModel"

        async def direct() -> list[Any]:
            async with make_llm(
                "openai/judge", base_url=server.base_url, api_key="t", cache=tmp_path / "c"
            ) as judge:
                return await grade_batch(judge, load_rubric("binary"), ITEMS)

        again = asyncio.run(direct())
        assert server.calls == 0 and all(g.cached and g.batch for g in again)


def test_failed_items_are_retried_directly(tmp_path: Path) -> None:
    failures = iter(["errored", "expired", None, "canceled", None, None])
    with FakeLLMServer(reply=REPLY) as server:
        server.batches.fail = lambda body: next(failures)
        report, grades, _, _ = grade_with_batch(server, tmp_path)
        assert report.answered == 3 and report.failed == 3
        assert sorted(report.failures) == ["batch_cancelled", "batch_expired", "errored (HTTP 500)"]
        assert server.calls == 3  # the three failed ones, outside the batch
        assert [g.score for g in grades] == [4] * 6
        assert sum(g.batch for g in grades) == 3 and not any(g.cached for g in grades)


def test_a_reply_that_does_not_parse_is_asked_again_directly(tmp_path: Path) -> None:
    with FakeLLMServer(reply=["not json at all"] + [REPLY] * 10) as server:
        report, grades, _, _ = grade_with_batch(server, tmp_path)
        assert report.failed == 1 and report.failures == ("the reply did not parse",)
        assert server.calls == 1 and all(g.score == 4 for g in grades)


def test_a_saved_batch_is_followed_not_submitted_again(tmp_path: Path) -> None:
    rubric = load_rubric("binary")
    with FakeLLMServer(reply=REPLY) as server:
        server.batches.delay = 60.0
        state = BatchState(tmp_path / "job.batch.json", write)

        async def start() -> None:
            async with make_llm(
                "openai/judge", base_url=server.base_url, api_key="t", cache=tmp_path / "c"
            ) as judge:
                requests = grade_requests(rubric, ITEMS)
                await asyncio.wait_for(
                    run_batch(judge, requests, state=state, poll_interval=0.01), 0.5
                )

        with pytest.raises(TimeoutError):
            asyncio.run(start())
        [saved] = json.loads(state.path.read_text())["parts"]
        assert saved["batch_id"] and len(saved["keys"]) == 6
        server.batches.delay = 0.0
        report, grades, _, _ = grade_with_batch(server, tmp_path)
        assert report.resumed and report.batch_ids == (saved["batch_id"],)
        assert server.batches.created == 1 and server.calls == 0
        assert all(g.score == 4 for g in grades)


def test_a_model_without_a_batch_api_says_so(tmp_path: Path) -> None:
    async def run() -> None:
        async with make_llm(
            "ollama/llama3.2", base_url="http://127.0.0.1:9/v1", cache=tmp_path / "c"
        ) as judge:
            await run_batch(
                judge,
                grade_requests(load_rubric("binary"), ITEMS),
                state=BatchState(tmp_path / "s.json", write),
            )

    with pytest.raises(BatchError, match=r"^ollama/llama3.2 has no batch API: batches go"):
        asyncio.run(run())


def test_anthropic_message_batches_answer_grades(tmp_path: Path) -> None:
    pytest.importorskip("anthropic")
    rubric = load_rubric("binary")
    with FakeLLMServer(reply=REPLY) as server:
        server.batches.fail = lambda body: "expired" if "number 1?" in json.dumps(body) else None

        async def run() -> Any:
            async with make_llm(
                "anthropic/claude", base_url=server.url, api_key="t", cache=tmp_path / "c"
            ) as judge:
                requests = grade_requests(rubric, ITEMS)
                report = await run_batch(
                    judge,
                    requests,
                    state=BatchState(tmp_path / "s.json", write),
                    poll_interval=0.01,
                )
                return report, await grade_batch(judge, rubric, ITEMS)

        report, grades = asyncio.run(run())
        assert server.batches.created == 1 and report.answered == 5
        assert report.failures == ("expired",) and server.calls == 1
        assert all(g.score == 4 for g in grades)
        assert [g.batch for g in grades] == [True, False, True, True, True, True]
        assert GradeModel.__name__ in json.dumps(server.batches.requests[0])
