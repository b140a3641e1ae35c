"""`--batch` for a run: before its tasks run, their generations go through each
generator's batch API, then the judge's grades of those answers through the judge's; the
tasks then run as always, on cache hits, and call directly only what a batch could not
answer. `BatchingExecutor` does it around the executor a run is given, so the runner
knows nothing of it.

`prefill(llm, requests, state)` answers the requests into the LLM's cache, following the
batch in a state file (`batch_state_path`: beside a command's output file, or in a run's
folder), so a command killed while a batch is in flight follows the same batch when run
again; `batch_prefill` is the one a run uses, with a state file per model role in its
folder. `check_batchable` refuses, before any work, what no batch API can answer. The claim
diagnostics are not batched: they call directly.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from lasagna_cli.engine.records._records import ANSWER_SECTIONS
from lasagna_cli.engine.run._executor import Executor, OnOutcome
from lasagna_cli.engine.run._scoring import gradable, judge_references, too_long_to_grade
from lasagna_cli.engine.run._tasks import (
    TaskContext,
    TaskWorker,
    Work,
    generation_call,
    ranked,
    section_question,
)

if TYPE_CHECKING:
    from lasagna_cli.engine._data import Question
    from lasagna_judge import LLM, BatchReport, BatchRequest, BatchStatus

T = TypeVar("T")
R = TypeVar("R")
Prefill = Callable[["LLM", Sequence["BatchRequest"], str], Awaitable[object]]


def batch_state_path(beside: Path, role: str = "") -> Path:
    """The state file of a batch job whose output is `beside` (a file, or a run folder)."""
    name = f"batch{'-' + role if role else ''}.json"
    if beside.is_dir():
        return beside / f".lasagna-{name}"
    return beside.with_name(f"{beside.name}.{name}")


async def prefill(
    llm: LLM,
    requests: Sequence[BatchRequest],
    state: Path,
    *,
    poll_interval: float,
    on_status: Callable[[LLM, BatchStatus, Path], None] = lambda llm, status, state: None,
) -> BatchReport:
    """Answer `requests` through `llm`'s batch API into its cache, the batch's id kept in
    `state` (written atomically); `on_status(llm, status, state)` as its status is read."""
    from lasagna_judge import BatchState, run_batch
    from lasagna_synth import write_bytes_atomic

    return await run_batch(
        llm,
        requests,
        state=BatchState(state, write_bytes_atomic),
        poll_interval=poll_interval,
        on_status=lambda status: on_status(llm, status, state),
    )


def check_batch(llm: LLM, no_cache: bool = False) -> None:
    """An EngineUsageError when `llm` has no batch API, or `no_cache` (--no-cache) turns
    off the response cache where the batch's answers wait."""
    from lasagna_cli.engine._errors import EngineUsageError
    from lasagna_judge import BatchError, batch_api

    if no_cache:
        raise EngineUsageError(
            "--batch keeps the batch's answers in the response cache: leave out --no-cache"
        )
    try:
        batch_api(llm)
    except BatchError as exc:
        raise EngineUsageError(f"--batch: {exc}") from None


def check_batchable(models: Sequence[str], systems: int, executor: str) -> None:
    """`benchmark run | sweep --batch`: an EngineUsageError before any work when a setup
    asks a system or a model whose provider has no batch API, or when the tasks run on
    another executor (the batch's answers are in this machine's cache)."""
    from lasagna_cli.engine._errors import EngineUsageError
    from lasagna_judge import has_batch_api

    if executor != "local":
        raise EngineUsageError(f"--batch runs the tasks here: leave out --executor {executor}")
    if systems:
        raise EngineUsageError(
            f"--batch: {systems} setup(s) ask a system of your own, which has no batch API; "
            "run them without --batch"
        )
    for model in models:
        if not has_batch_api(model):
            raise EngineUsageError(
                f"--batch: {model} has no batch API: batches go through OpenAI's Batch API "
                "(openai/ models) or Anthropic's Message Batches (anthropic/ models); run it "
                "without --batch"
            )


def batch_prefill(
    folder: Path,
    *,
    poll_interval: float,
    on_status: Callable[[LLM, BatchStatus, Path], None] = lambda llm, status, state: None,
    on_report: Callable[[LLM, BatchReport], None] = lambda llm, report: None,
) -> Prefill:
    """The `prefill` of a run or sweep writing into `folder`: one state file per model role
    there (`.lasagna-batch-<role>.json`), polled every `poll_interval` seconds;
    `on_status(llm, status, state file)` as a batch's status is read, `on_report(llm,
    report)` after each role's batch that had requests. A model whose provider has no batch
    API is a usage error."""

    async def prefill_role(llm: LLM, requests: Sequence[BatchRequest], role: str) -> None:
        check_batch(llm)
        state = folder / f".lasagna-batch-{role}.json"
        report = await prefill(
            llm, requests, state, poll_interval=poll_interval, on_status=on_status
        )
        if report.requests:
            on_report(llm, report)

    return prefill_role


class BatchingExecutor(Executor):
    """`inner`, with a run's model calls sent through the batch APIs first."""

    def __init__(self, inner: Executor, prefill: Prefill) -> None:
        self._inner = inner
        self._prefill = prefill
        self.concurrency = inner.concurrency

    async def run(
        self, tasks: Iterable[T], fn: Callable[[T], Awaitable[R]], on_outcome: OnOutcome[T, R]
    ) -> None:
        listed = list(tasks)
        if isinstance(fn, TaskWorker):
            work = [item for item in listed if isinstance(item, Work)]
            await batch_pass(fn.ctx, work, self._prefill, self.concurrency)
        await self._inner.run(listed, fn, on_outcome)


def _calls(item: Work, ctx: TaskContext) -> list[tuple[LLM, BatchRequest]]:
    """The generator calls of one task (its answer, and its closed-book answer)."""
    from lasagna_judge import BatchRequest

    task = item.task
    if item.regrade is not None or task is None or task.setup.system is not None:
        return []
    planned = task.planned
    generator = planned.setup.generator
    llm = ctx.generators.get(generator.key) if generator is not None else None
    if llm is None:
        return []
    modes = [planned.generation_mode] if planned.generation_mode in ("rag", "closed-book") else []
    if "closed-book" in planned.tracks:
        modes.append("closed-book")
    calls = []
    for mode in modes:
        passages = None
        if mode == "rag" and planned.needs_retrieval:
            assert planned.setup.retriever is not None
            passages = ranked(task, ctx)[2][: planned.setup.retriever.top_k]
        messages, temperature, max_tokens = generation_call(task, passages)
        calls.append((llm, BatchRequest(messages, None, max_tokens, temperature)))
    return calls


async def batch_pass(
    ctx: TaskContext, work: Sequence[Work], prefill: Prefill, concurrency: int
) -> None:
    """The generations of `work` through their generators' batches, then the grades of
    the answers (read back from the cache, or asked directly where a batch failed)."""
    from lasagna_judge import JudgeError, grade_requests

    calls = {item.index: _calls(item, ctx) for item in work}
    by_model: dict[int, tuple[LLM, list[BatchRequest]]] = {}
    for listed in calls.values():
        for llm, request in listed:
            by_model.setdefault(id(llm), (llm, []))[1].append(request)
    for llm, requests in by_model.values():
        role = "generator-" + hashlib.sha256(llm.model.encode()).hexdigest()[:8]
        await prefill(llm, requests, role)
    judge, rubric = ctx.judge, ctx.rubric
    if judge is None or rubric is None:
        return
    bound = asyncio.Semaphore(max(1, concurrency))

    async def answers(item: Work) -> list[tuple[str, Question]]:
        if item.regrade is not None:  # a regrade: the answers the record holds
            question = item.task.question if item.task is not None else None
            sections = [item.regrade.get(name) for name in ANSWER_SECTIONS]
            return [
                (str(s["prediction"]), section_question(s, question))
                for s in sections
                if isinstance(s, dict)
            ]
        assert item.task is not None
        found = []
        for llm, request in calls[item.index]:
            async with bound:
                try:  # a cache hit, or the direct call of what the batch did not answer
                    done = await llm.complete(
                        request.messages, request.temperature, request.max_tokens
                    )
                except JudgeError:
                    continue  # the task fails on its own, and is counted
            found.append((done.text.strip(), item.task.question))
        return found

    items: list[dict[str, Any]] = []
    for answered in await asyncio.gather(*(answers(item) for item in work)):
        for prediction, question in answered:
            if gradable(question) and (
                too_long_to_grade(prediction, question, judge, rubric, ctx.judge_max_chars) is None
            ):
                references = judge_references(question)
                items.append(
                    {"question": question.text, "references": references, "prediction": prediction}
                )
    requests = []
    for item in items:  # one at a time: an answer grade() refuses is refused there too
        try:
            requests += grade_requests(rubric, [item])
        except JudgeError:
            continue
    for one in [judge, *ctx.jury]:  # a jury's judges each grade every answer
        role = "judge-" + hashlib.sha256(one.model.encode()).hexdigest()[:8]
        await prefill(one, requests, role)
