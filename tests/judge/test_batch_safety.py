"""A batch never pays twice and never loses a paid result (issue 43), at the wire against
the fake server for both providers: replies with every documented field, a create answered
500 or cut after the batch exists, kill -9 at every step and a resume, the providers'
limits, a results file larger than any reply cap, a results_url elsewhere, a malformed
status, a cancel."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from lasagna_judge import (
    BatchError,
    BatchRequest,
    BatchState,
    GradeModel,
    cancel_batch,
    grade_batch,
    grade_requests,
    load_rubric,
    make_llm,
    run_batch,
)
from lasagna_judge.testing import FakeLLMServer, Reply

ITEMS = [
    {"question": f"Capital number {i}?", "references": ["Paris"], "prediction": f"City {i}"}
    for i in range(6)
]
REPLY = json.dumps({"reasoning": "fine", "score": 4})
PROVIDERS = ["openai", "anthropic"]


def write(path: Path, data: bytes) -> None:
    path.write_bytes(data)


def base(server: FakeLLMServer, provider: str) -> str:
    return server.base_url if provider == "openai" else server.url


def llm_of(server: FakeLLMServer, provider: str, tmp_path: Path) -> Any:
    if provider == "anthropic":
        pytest.importorskip("anthropic")
    return make_llm(
        f"{provider}/judge", base_url=base(server, provider), api_key="k", cache=tmp_path / "c"
    )


def batch(server: FakeLLMServer, provider: str, tmp_path: Path, requests: Any = None) -> Any:
    """run_batch of the grading of ITEMS (or `requests`), then the grading itself."""
    rubric = load_rubric("binary")

    async def go() -> Any:
        async with llm_of(server, provider, tmp_path) as judge:
            report = await run_batch(
                judge,
                requests if requests is not None else grade_requests(rubric, ITEMS),
                state=BatchState(tmp_path / "job.json", write),
                poll_interval=0.01,
            )
            if requests is not None:
                return report, []
            return report, await grade_batch(judge, rubric, ITEMS)

    return asyncio.run(go())


@pytest.mark.parametrize("provider", PROVIDERS)
def test_documented_replies_parse_and_nothing_is_paid_twice(provider: str, tmp_path: Path) -> None:
    # The fake server's replies carry every documented field (service_tier,
    # message.annotations, system_fingerprint, the usage details; Anthropic's cache counts
    # and service tier) and one no SDK knows: every item is read from the batch.
    reply = Reply(REPLY, extra={"lasagna_next": {"a": 1}})
    with FakeLLMServer(reply=reply) as server:
        report, grades = batch(server, provider, tmp_path)
        assert report.answered == len(ITEMS) and report.failed == 0
        assert server.calls == 0  # no direct call paid again
        assert all(g.score == 4 and g.batch for g in grades)
        again, _ = batch(server, provider, tmp_path)
        assert again.cached == len(ITEMS) and server.batches.created == 1


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("fault", ["500", "cut"])
def test_a_create_that_fails_after_the_batch_exists_makes_one_batch(
    provider: str, fault: Any, tmp_path: Path
) -> None:
    with FakeLLMServer(reply=REPLY) as server:
        server.batches.create_fault = (fault, 1)
        report, grades = batch(server, provider, tmp_path)
        assert server.batches.created == 1 and len(report.batch_ids) == 1
        assert report.answered == len(ITEMS) and server.calls == 0
        assert all(g.score == 4 for g in grades)


CHILD = """
import asyncio, sys
from pathlib import Path
from lasagna_judge import BatchState, grade_requests, load_rubric, make_llm, run_batch
provider, url, folder = sys.argv[1], sys.argv[2], Path(sys.argv[3])
ITEMS = [
    {"question": f"Capital number {i}?", "references": ["Paris"], "prediction": f"City {i}"}
    for i in range(6)
]
async def go():
    async with make_llm(f"{provider}/judge", base_url=url, api_key="k",
                        cache=folder / "c") as judge:
        report = await run_batch(
            judge, grade_requests(load_rubric("binary"), ITEMS),
            state=BatchState(folder / "job.json", lambda p, b: p.write_bytes(b)),
            poll_interval=0.05,
        )
    print(report.answered, report.resumed, ",".join(report.batch_ids))
asyncio.run(go())
"""

STEPS = {
    # the request the client is killed at (before the server answers it)
    "openai": {
        "before create": ("POST", "/v1/files"),
        "during create": ("POST", "/v1/batches"),
        "while polling": ("GET", "/v1/batches/"),
        "while downloading": ("GET", "/content"),
    },
    "anthropic": {
        "during create": ("POST", "/v1/messages/batches"),
        "while polling": ("GET", "/v1/messages/batches/"),
        "while downloading": ("GET", "/results"),
    },
}


@pytest.mark.parametrize(
    ("provider", "step"), [(p, s) for p, steps in STEPS.items() for s in steps]
)
def test_kill_9_at_every_step_then_resume_one_batch_every_row_once(
    provider: str, step: str, tmp_path: Path
) -> None:
    if provider == "anthropic":
        pytest.importorskip("anthropic")
    method, where = STEPS[provider][step]
    with FakeLLMServer(reply=REPLY) as server:
        server.batches.delay = 0.3
        child: list[subprocess.Popen[str]] = []

        def kill(seen_method: str, route: str) -> None:
            hit = route.endswith(where) if not where.endswith("/") else where in route + "/"
            if child and seen_method == method and hit and child[0].poll() is None:
                if where.endswith("/") and not route.rstrip("/").split("/")[-1].startswith(
                    ("batch_", "msgbatch_")
                ):
                    return  # a list, not a poll
                os.kill(child[0].pid, signal.SIGKILL)
                child[0].wait()

        server.batches.on_request = kill
        args = [sys.executable, "-c", CHILD, provider, base(server, provider), str(tmp_path)]
        child.append(subprocess.Popen(args, stdout=subprocess.PIPE, text=True))
        child[0].communicate(timeout=60)
        assert child[0].returncode == -signal.SIGKILL, f"not killed {step}"
        server.batches.on_request = None
        done = subprocess.run(args, capture_output=True, text=True, timeout=60, check=True)
        answered, resumed, ids = done.stdout.split()
        assert server.batches.created == 1, f"{server.batches.created} batches after a kill"
        assert answered == str(len(ITEMS)) and resumed == "True" and len(ids.split(",")) == 1
        assert server.calls == 0  # every row from the one batch, none called again
        items = [i for b in server.batches._batches.values() for i, _ in b.items]
        assert len(items) == len(set(items)) == len(ITEMS)  # every row once


def test_50001_requests_become_two_openai_batches(tmp_path: Path) -> None:
    requests = [
        BatchRequest([{"role": "user", "content": f"q{i}"}], max_tokens=1) for i in range(50_001)
    ]
    with FakeLLMServer(reply="a") as server:
        report, _ = batch(server, "openai", tmp_path, requests)
        sizes = sorted(len(b.items) for b in server.batches._batches.values())
        assert sizes == [1, 50_000] and report.answered == 50_001
        assert len(report.batch_ids) == 2


def test_an_80_mb_results_file_is_read(tmp_path: Path) -> None:
    content = "x" * 100_000
    requests = [BatchRequest([{"role": "user", "content": f"long {i}"}]) for i in range(840)]
    with FakeLLMServer(reply=content) as server:
        report, _ = batch(server, "openai", tmp_path, requests)
        [results] = [f for f in server.batches._files.values() if b'"long' not in f[:300]]
        assert len(results) > 80 * 1024 * 1024  # over the 64 MB a reply may take
        assert report.answered == 840 and server.calls == 0


def test_a_foreign_results_url_is_refused(tmp_path: Path) -> None:
    pytest.importorskip("anthropic")
    with FakeLLMServer(reply=REPLY) as server:
        server.batches.results_origin = "http://127.0.0.2:9"
        with pytest.raises(BatchError) as caught:
            batch(server, "anthropic", tmp_path)
        message = str(caught.value)
        assert "results_url is on http://127.0.0.2:9, not on http://127.0.0.1" in message
        assert "\n" not in message
        assert (tmp_path / "job.json").exists()  # kept: a rerun follows the same batch


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_malformed_status_is_a_failed_poll_in_one_line(provider: str, tmp_path: Path) -> None:
    with FakeLLMServer(reply=REPLY) as server:
        counts = {"completed": "abc"} if provider == "openai" else {"succeeded": "abc"}
        server.batches.status_patch = {"request_counts": counts}
        with pytest.raises(BatchError) as caught:
            batch(server, provider, tmp_path)
        message = str(caught.value)
        assert "is malformed (request_counts." in message and "'abc'" in message
        assert "\n" not in message
        server.batches.status_patch = None
        report, _ = batch(server, provider, tmp_path)
        assert report.resumed and server.batches.created == 1 and report.answered == 6


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_batch_left_running_can_be_cancelled(provider: str, tmp_path: Path) -> None:
    with FakeLLMServer(reply=REPLY) as server:
        server.batches.delay = 60.0
        rubric = load_rubric("binary")
        state = BatchState(tmp_path / "job.json", write)

        async def start() -> None:
            async with llm_of(server, provider, tmp_path) as judge:
                requests = grade_requests(rubric, ITEMS)
                await asyncio.wait_for(
                    run_batch(judge, requests, state=state, poll_interval=0.01), 1.0
                )

        with pytest.raises(TimeoutError):
            asyncio.run(start())

        async def cancel() -> Any:
            async with llm_of(server, provider, tmp_path) as judge:
                return await cancel_batch(judge, state)

        started = time.monotonic()
        [status] = asyncio.run(cancel())
        assert status.ended and time.monotonic() - started < 5
        report, grades = batch(server, provider, tmp_path)  # what is left, called directly
        assert report.resumed and server.batches.created == 1
        assert all(g.score == 4 for g in grades) and server.calls == len(ITEMS)
        assert GradeModel.__name__ in json.dumps(server.batches.requests[0])
