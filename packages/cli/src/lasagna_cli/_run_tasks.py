"""Tasks: one (dataset, item, setup) each, computed and written as one JSON file.

A task file is written atomically (`_store`), so it is whole or absent. It carries a
fingerprint of everything that decides its numbers (dataset revision, split, setup, tracks,
judge, prompt, metrics version); `--resume` restores a file only when its fingerprint matches
and it holds no error, so a result computed on an old revision or with other settings is
never restored, and failed tasks (and failed grades) are tried again.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lasagna_cli._run_plan import PlannedBenchmark, PlannedSetup, task_path

if TYPE_CHECKING:
    from lasagna_cli._run_config import RetrieverSpec
    from lasagna_cli._systems._run import SystemState
    from lasagna_judge import LLM, Rubric
    from lasagna_synth import BenchmarkData, BenchmarkRow

RUN_METRICS_VERSION = "run-metrics-1"
TASK_FORMAT = "lasagna-task/1"


def metrics_version() -> str:
    """The metric definitions in force: the runner's and lasagna-metrics' versions."""
    return f"{RUN_METRICS_VERSION}; lasagna-metrics {version('lasagna-metrics')}"


@dataclass(frozen=True)
class Task:
    bench: PlannedBenchmark
    planned: PlannedSetup
    row: BenchmarkRow
    path: Path
    fingerprint: str

    @property
    def label(self) -> dict[str, str]:
        return {"dataset": self.bench.name, "item": self.row.id, "setup": self.planned.setup.name}


def fingerprint(
    bench: PlannedBenchmark, planned: PlannedSetup, row_id: str, judge: Mapping[str, Any] | None
) -> str:
    from lasagna_cli._generation import prompt_sha256

    setup = planned.setup
    blob: dict[str, Any] = {
        "dataset": bench.name,
        "revision": bench.data.revision,
        "split": bench.split,
        "item": row_id,
        "setup": setup.name,
        "retriever": setup.retriever.to_dict() if planned.needs_retrieval else None,
        "generator": setup.generator
        if planned.generation_mode or "closed-book" in planned.tracks
        else None,
        "tracks": list(planned.tracks),
        "judge": dict(judge) if judge and planned.tracks != ("retrieval",) else None,
        "prompt_sha256": prompt_sha256(),
        "metrics_version": metrics_version(),
    }
    corpus_rule = getattr(bench.data, "corpus_rule", None)
    if corpus_rule:  # a registered benchmark's passages (path data keeps its fingerprints)
        blob["corpus"] = corpus_rule
    if planned.system_identity is not None:  # only then: BM25 tasks keep their fingerprints
        blob["system"] = dict(planned.system_identity)
        blob["top_k"] = setup.retriever.top_k
    return hashlib.sha256(json.dumps(blob, sort_keys=True).encode()).hexdigest()


def make_tasks(
    plan: Sequence[PlannedBenchmark], out: Path, judge: Mapping[str, Any] | None
) -> list[Task]:
    tasks = []
    for bench in plan:
        for planned in bench.setups:
            for row in bench.rows:
                tasks.append(
                    Task(
                        bench=bench,
                        planned=planned,
                        row=row,
                        path=task_path(out, bench, planned.setup, row.id),
                        fingerprint=fingerprint(bench, planned, row.id, judge),
                    )
                )
    return tasks


def is_done(task: Task) -> bool:
    """Finished with these very settings, with no error and no failed grade."""
    from lasagna_cli._store import is_finished, read_json

    if not is_finished(task.path):
        return False
    record = read_json(task.path)
    if not isinstance(record, dict) or record.get("fingerprint") != task.fingerprint:
        return False
    if record.get("error") is not None:
        return False
    for track in ("generation", "closed-book"):
        section = record.get(track)
        grade = section.get("judge") if isinstance(section, dict) else None
        if isinstance(grade, dict) and grade.get("status") == "error":
            return False
    return True


def ranking_metrics(row: BenchmarkRow, ranking: Sequence[str], k: int) -> dict[str, float | None]:
    """recall@k, nDCG@10, MRR and hit rate@k of one judged question."""
    from lasagna_metrics import hit_rate_at_k, ndcg_at_k, recall_at_k, reciprocal_rank

    judgments = dict(row.judgments)
    return {
        f"recall@{k}": recall_at_k(ranking, judgments, k),
        "ndcg@10": ndcg_at_k(ranking, judgments, 10),
        "mrr": reciprocal_rank(ranking, judgments),
        f"hit_rate@{k}": hit_rate_at_k(ranking, judgments, k),
    }


def retrieval_metrics(
    row: BenchmarkRow,
    ranking: Sequence[str],
    texts: Sequence[str],
    spec: RetrieverSpec,
    data: BenchmarkData | None = None,
) -> dict[str, float | None] | None:
    """Ranking metrics of one question (None when it has no relevant document); a registered
    benchmark's `data` scores its evidence too (`_run_named`)."""
    from lasagna_cli._run_named import NamedBenchmarkData
    from lasagna_metrics import evidence_recall

    if isinstance(data, NamedBenchmarkData):
        return data.retrieval_metrics(row, ranking, texts, spec)
    if not row.relevant:
        return None
    k = spec.top_k
    metrics = ranking_metrics(row, ranking, k)
    if row.contexts:  # evidence: the row's own passages, looked for in the top-k texts
        top = list(texts[:k])
        metrics["evidence_recall"] = evidence_recall(top, row.contexts)
        metrics["evidence_recall_strict"] = evidence_recall(
            top, row.contexts, min_soft_match_tokens=sys.maxsize
        )
    return metrics


@dataclass
class TaskContext:
    """What the tasks of one run share: rankings, models, the judge."""

    rankings: dict[tuple[int, tuple[Any, ...], str], list[tuple[str, float]]]
    generators: dict[str, LLM]
    judge: LLM | None
    rubric: Rubric | None
    bench_index: dict[int, int]
    """id(PlannedBenchmark) -> its position in the plan (rankings are keyed by position)."""
    systems: SystemState | None = field(default=None)
    """The user's systems under test, when a setup has one."""
    writer: Executor | None = field(default=None)
    """Threads for the task files' fsyncs, which release the GIL: writes overlap each other
    and the event loop instead of stalling every task in flight (None: write inline)."""


async def save(task: Task, record: dict[str, Any], ctx: TaskContext) -> None:
    """The task's file, written atomically; on a writer thread when the context has one.

    Encoding stays on the loop; the thread only writes. A task cancelled meanwhile still
    gets its whole file (the runner waits for the writer before it reads the files)."""
    from lasagna_cli._store import dump_task_json, write_bytes_atomic

    data = dump_task_json(record)
    if ctx.writer is None:
        write_bytes_atomic(task.path, data)
        return
    await asyncio.get_running_loop().run_in_executor(
        ctx.writer, write_bytes_atomic, task.path, data
    )


async def run_task(task: Task, ctx: TaskContext) -> dict[str, Any]:
    """Compute one task and write its file; an exception propagates to the executor."""
    from lasagna_cli._generation import answer

    bench, planned, row = task.bench, task.planned, task.row
    spec = planned.setup.retriever
    record: dict[str, Any] = {
        "format": TASK_FORMAT,
        "task": task.label,
        "fingerprint": task.fingerprint,
        "revision": bench.data.revision,
        "split": bench.split,
        "error": None,
    }
    passages: list[str] | None = None
    if planned.setup.system is not None:
        from lasagna_cli._systems._run import system_sections

        assert ctx.systems is not None
        record.update(
            await system_sections(
                task,
                ctx.bench_index[id(bench)],
                ctx.systems,
                judge=ctx.judge,
                rubric=ctx.rubric,
            )
        )
        await save(task, record, ctx)
        return record
    if planned.needs_retrieval:
        key = (ctx.bench_index[id(bench)], spec.index_key(), row.id)
        ranking = ctx.rankings[key][: spec.depth]
        ids = [doc for doc, _ in ranking]
        texts = [bench.data.corpus[doc] for doc in ids]
        passages = texts[: spec.top_k]
        if "retrieval" in planned.tracks:
            record["retrieval"] = {
                "ranking": [[doc, score] for doc, score in ranking],
                "metrics": retrieval_metrics(row, ids, texts, spec, bench.data),
            }
    generator = ctx.generators.get(planned.setup.generator or "")
    if planned.generation_mode is not None:
        assert generator is not None
        started = time.perf_counter()
        record["generation"] = await answer(
            generator,
            row,
            passages if planned.generation_mode == "rag" else None,
            judge=ctx.judge,
            rubric=ctx.rubric,
        )
        record["generation"]["seconds"] = round(time.perf_counter() - started, 6)
    if "closed-book" in planned.tracks:
        assert generator is not None
        started = time.perf_counter()
        record["closed-book"] = await answer(
            generator, row, None, judge=ctx.judge, rubric=ctx.rubric
        )
        record["closed-book"]["seconds"] = round(time.perf_counter() - started, 6)
    await save(task, record, ctx)
    return record


def write_failure(task: Task, error: BaseException) -> None:
    """A failed task is recorded as its error and counted, never scored."""
    from lasagna_cli._store import dump_task_json, write_bytes_atomic

    message = f"{type(error).__name__}: {error}".strip()
    record = {
        "format": TASK_FORMAT,
        "task": task.label,
        "fingerprint": task.fingerprint,
        "revision": task.bench.data.revision,
        "split": task.bench.split,
        "error": message,
    }
    write_bytes_atomic(task.path, dump_task_json(record))
