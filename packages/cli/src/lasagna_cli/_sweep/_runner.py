"""The sweep itself: (dataset, question, setup) tasks, one atomic result file each.

A task's file is `<output>/<dataset>/<question>/<prefix><setup>.json` and holds
`{"ok": {"result": ..., "stats": {...}}}` or `{"error": "..."}`. It is written only once
the task is over, through a temporary file, fsync and rename, so a killed sweep leaves
whole files or none; the tasks in flight at the kill are simply run again by `--continue`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from lasagna_cli._errors import USAGE_ERROR, CliError
from lasagna_cli._executor import LocalExecutor, Outcome
from lasagna_cli._store import dump_task_json, is_finished, read_json, write_bytes_atomic
from lasagna_cli._sweep._datasets import Datasets, Question
from lasagna_cli._sweep._prompts import build_messages
from lasagna_cli._sweep._setups import Setup

if TYPE_CHECKING:
    from lasagna_cli._sweep._corpus import Index
    from lasagna_judge import LLM

Status = Literal["done", "failed"]
# File writes (two fsyncs each) run on threads: fsync releases the GIL, so writes overlap
# with each other and with the event loop instead of stalling every task in flight.
_WRITER_THREADS = 8


@dataclass(frozen=True, slots=True)
class Task:
    question: Question
    setup: Setup
    path: Path


def result_path(output: Path, dataset: str, question: str, prefix: str, setup: str) -> Path:
    return output / dataset / question / f"{prefix}{setup}.json"


def plan_tasks(
    datasets: Datasets, setups: dict[str, Setup], output: Path, prefix: str
) -> list[Task]:
    """Every task in dataset, question, setup order; a setup only meets its datasets."""
    tasks = []
    for dataset, questions in datasets.items():
        chosen = [s for s in setups.values() if s.covers(dataset)]
        if not chosen:
            continue
        for question in questions.values():
            folder = output / dataset / question.id
            for setup in chosen:
                tasks.append(Task(question, setup, folder / f"{prefix}{setup.name}.json"))
    return tasks


def is_error_result(path: Path) -> bool:
    data = read_json(path)
    return not (isinstance(data, dict) and "ok" in data)


@dataclass
class Plan:
    """The tasks to run now and how many were skipped as already finished."""

    pending: list[Task]
    skipped: int
    total: int


def split_finished(
    tasks: Sequence[Task], *, resume: bool, retry_errors: bool, output: Path
) -> Plan:
    """Without --continue, finished results are never overwritten: that would lose work."""
    finished = [t for t in tasks if is_finished(t.path)]
    if finished and not resume:
        raise CliError(
            f"{output} already holds {len(finished)} of these {len(tasks)} results (e.g. "
            f"{finished[0].path}); pass --continue to skip them, or choose another --output "
            "or --prefix",
            USAGE_ERROR,
        )
    done = {id(t) for t in finished}
    if retry_errors:
        done = {id(t) for t in finished if not is_error_result(t.path)}
    pending = [t for t in tasks if id(t) not in done]
    return Plan(pending, len(tasks) - len(pending), len(tasks))


@dataclass
class SweepContext:
    """What the tasks share: one LLM per (provider, model), one index per database."""

    llms: dict[str, LLM]
    indexes: dict[str, Index] = field(default_factory=dict)
    log: Callable[[str], None] = print
    max_logged_errors: int = 5
    logged_errors: int = 0
    _described: dict[str, dict[str, Any]] = field(default_factory=dict)
    systems: dict[str, Any] = field(default_factory=dict)
    """The user's systems under test, by setup name (`lasagna_cli._systems._sweep`)."""

    def llm_for(self, setup: Setup) -> LLM:
        return self.llms[llm_key(setup)]

    def description(self, setup: Setup) -> dict[str, Any]:
        described = self._described.get(setup.name)
        if described is None:
            described = self._described[setup.name] = setup.describe()
        return described


def llm_key(setup: Setup) -> str:
    return f"{setup.provider.name}\x00{setup.model}"


async def run_task(context: SweepContext, task: Task) -> dict[str, Any]:
    """The record of one task; a failure is a record too, never an exception."""
    setup, question = task.setup, task.question
    if setup.system is not None:
        from lasagna_cli._systems._sweep import run_system_task

        return await run_system_task(context, task)
    stats: dict[str, Any] = {}
    try:
        passages: list[str] = []
        if setup.retriever is not None and setup.database is not None:
            index = context.indexes[setup.database.name]
            start = time.perf_counter()
            hits = index.search(question.input, setup.retriever.top_k)
            stats["retrieval_time_s"] = time.perf_counter() - start
            stats["passages"] = [{"id": doc_id, "score": score} for doc_id, score in hits]
            passages = [index.text(doc_id) for doc_id, _ in hits]
        else:
            stats["retrieval_time_s"] = None
            stats["passages"] = None
        messages = build_messages(setup, question, passages)
        completion = await context.llm_for(setup).complete(
            messages, temperature=setup.temperature, max_tokens=setup.tokens
        )
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        from lasagna_judge import JudgeError

        message = str(exc) if isinstance(exc, JudgeError) else f"{type(exc).__name__}: {exc}"
        return {"error": message}
    stats.update(
        generation_time_s=completion.latency_s,
        input_tokens=completion.usage.input_tokens,
        output_tokens=completion.usage.output_tokens,
        context_length=sum(len(m["content"]) for m in messages),
        attempts=completion.attempts,
        cached=completion.cached,
        setup=context.description(setup),
    )
    return {"ok": {"result": completion.text, "stats": stats}}


async def run_sweep(
    tasks: Iterable[Task],
    context: SweepContext,
    *,
    parallel: int,
    on_status: Callable[[str], None],
) -> None:
    """Run the tasks, `parallel` at a time, writing each result as its task ends."""
    loop = asyncio.get_running_loop()
    writer = ThreadPoolExecutor(max_workers=_WRITER_THREADS, thread_name_prefix="lasagna-write")

    async def one(task: Task) -> Status:
        record = await run_task(context, task)
        # The write runs to the end on its thread even if we are cancelled meanwhile: the
        # file is then whole, and shutdown(wait=True) below waits for it.
        # Encoding stays here (CPU, holds the GIL anyway); the thread does only the I/O.
        await loop.run_in_executor(writer, write_bytes_atomic, task.path, dump_task_json(record))
        if "error" in record:
            if context.logged_errors < context.max_logged_errors:
                context.log(f"task {task.path}: {record['error']}")
            elif context.logged_errors == context.max_logged_errors:
                context.log("more tasks failed; their errors are in their result files")
            context.logged_errors += 1
            return "failed"
        return "done"

    def report(outcome: Outcome[Task, Status]) -> None:
        if outcome.error is not None:
            context.log(f"task {outcome.task.path}: could not be recorded: {outcome.error}")
            on_status("failed")
        else:
            assert outcome.result is not None
            on_status(outcome.result)

    try:
        await LocalExecutor(parallel).run(tasks, one, report)
    finally:
        writer.shutdown(wait=True)
