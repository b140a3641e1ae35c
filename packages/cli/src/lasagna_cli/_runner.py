"""`lasagna benchmark run`, end to end: plan, index, run the tasks, write the results.

Order matters for the user: everything that can be refused (data, splits, filters, tracks,
the output folder, a missing model key) is refused before an index is built or a model is
asked anything. Tasks then run with bounded concurrency; each finished task is its own file,
so a run killed at any moment loses only the tasks in flight, and `--resume` picks up the
rest. results.json and the leaderboard are rebuilt from the task files at the end.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import platform
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lasagna_cli._errors import USAGE_ERROR, CliError
from lasagna_cli._run_config import RunConfig
from lasagna_cli._run_plan import PlannedBenchmark, build_plan
from lasagna_cli._run_tasks import Task, TaskContext, is_done, make_tasks, run_task, write_failure

if TYPE_CHECKING:
    from lasagna_cli._retrieval import BM25Index
    from lasagna_cli._systems._run import SystemState
    from lasagna_judge import LLM, Rubric

MANIFEST_FORMAT = "lasagna-run-manifest/1"
# Task files are fsync'd on threads (fsync releases the GIL): a slow disk then delays only
# the task being written, not every task in flight.
_WRITER_THREADS = 8
_VERSIONED = (
    "lasagna-cli",
    "lasagna-metrics",
    "lasagna-judge",
    "lasagna-synth",
    "numpy",
    "scipy",
    "PyStemmer",
)


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def package_versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for dist in _VERSIONED:
        try:
            found[dist] = version(dist)
        except PackageNotFoundError:
            found[dist] = "not installed"
    return found


def _judge_info(config: RunConfig, rubric: Rubric | None) -> dict[str, Any] | None:
    if config.judge is None or rubric is None:
        return None
    return {"model": config.judge, "rubric": rubric.id, "rubric_version": rubric.version}


def manifest(
    config: RunConfig, plan: Sequence[PlannedBenchmark], judge: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The run's configuration (never a secret: model names only), versions and seeds."""
    from lasagna_cli._run_named import NamedBenchmarkData

    config_part = {
        "profile": config.profile,
        "seed": config.seed,
        "judge": dict(judge) if judge else None,
        "benchmarks": [
            {
                "name": b.name,
                "revision": b.data.revision,
                "kind": b.data.kind,
                "given_as": b.entry.where,
                # A registered benchmark's passages (path data keeps its config hash).
                **(
                    {"corpus": b.data.corpus_rule} if isinstance(b.data, NamedBenchmarkData) else {}
                ),
                "split": b.split,
                "n_samples": b.entry.n_samples,
                "filters": {k: list(v) for k, v in b.entry.filters.items()},
                "drop_unknown_judgments": b.entry.drop_unknown_judgments,
                "questions": len(b.rows),
                "sample_ids_sha256": b.sample_ids_sha256,
                "setups": [
                    {
                        "name": p.setup.name,
                        "tracks": list(p.tracks),
                        "generation_mode": p.generation_mode,
                        **({"system": dict(p.system_identity)} if p.system_identity else {}),
                    }
                    for p in b.setups
                ],
            }
            for b in plan
        ],
        "setups": [
            {
                "name": s.name,
                # A system ranks for itself: of the retriever settings only top_k applies.
                "retriever": s.retriever.to_dict()
                if s.system is None
                else {"top_k": s.retriever.top_k},
                "generator": s.generator,
                "tracks": list(s.tracks) if s.tracks else None,
                # Present only for a system: the built-in setups keep their config hash.
                **({"system": s.system.describe()} if s.system is not None else {}),
            }
            for s in config.setups
        ],
    }
    blob = json.dumps(config_part, sort_keys=True).encode()
    return {
        "format": MANIFEST_FORMAT,
        "config_hash": hashlib.sha256(blob).hexdigest(),
        "config": config_part,
        "source": config.source,
        "seeds": {"sampling": config.seed, "bootstrap": config.seed},
        "versions": package_versions(),
    }


def check_output_folder(out: Path, resume: bool) -> None:
    if resume or not out.exists():
        return
    if not out.is_dir():
        raise CliError(f"-o {out}: exists and is not a folder; choose another", USAGE_ERROR)
    if (out / "manifest.json").exists() or (out / "tasks").exists():
        raise CliError(
            f"{out} already holds a run; add --resume to continue it, or choose another folder "
            "with -o",
            USAGE_ERROR,
        )


def _make_llm(model: str, concurrency: int, flag: str) -> LLM:
    from lasagna_cli._llm_options import build_llm

    return build_llm(model, concurrency=concurrency, flag=flag, base_url_flag=None)


def _build_indexes(
    plan: Sequence[PlannedBenchmark], pending: Sequence[Task]
) -> dict[tuple[int, tuple[Any, ...], str], list[tuple[str, float]]]:
    """Index each (benchmark, BM25 settings) once and rank every pending question."""
    from lasagna_cli._retrieval import BM25Index

    position = {id(b): i for i, b in enumerate(plan)}
    wanted: dict[tuple[int, tuple[Any, ...]], tuple[Task, dict[str, str], int]] = {}
    for task in pending:
        if not task.planned.needs_retrieval:
            continue
        spec = task.planned.setup.retriever
        key = (position[id(task.bench)], spec.index_key())
        first, questions, depth = wanted.get(key, (task, {}, 0))
        questions[task.row.id] = task.row.question
        wanted[key] = (first, questions, max(depth, spec.depth))
    rankings: dict[tuple[int, tuple[Any, ...], str], list[tuple[str, float]]] = {}
    for (pos, index_key), (first, questions, depth) in wanted.items():
        bench, spec = first.bench, first.planned.setup.retriever
        started = time.perf_counter()
        index: BM25Index = BM25Index.build(
            list(bench.data.corpus),
            list(bench.data.corpus.values()),
            k1=spec.k1,
            b=spec.b,
            variant=spec.variant,  # type: ignore[arg-type]
            stemmer=spec.stemmer,
            stopwords=spec.stopwords,  # type: ignore[arg-type]
        )
        built = time.perf_counter() - started
        ids = list(questions)
        started = time.perf_counter()
        found = index.search_many([questions[i] for i in ids], depth)
        searched = time.perf_counter() - started
        _say(
            f"indexed {bench.name}: {len(index):,} documents in {built:.2f} s (BM25 "
            f"{spec.variant}, stemmer {spec.stemmer}); {len(ids):,} queries in {searched:.3f} s"
        )
        for row_id, ranking in zip(ids, found, strict=True):
            rankings[(pos, index_key, row_id)] = ranking
    return rankings


@dataclass
class RunOutcome:
    results: dict[str, Any]
    finished_before: int
    done: int
    failed: int
    out: Path


async def _execute(
    pending: Sequence[Task], ctx: TaskContext, concurrency: int, skipped: int, total: int
) -> tuple[int, int]:
    from lasagna_cli._executor import LocalExecutor, Outcome
    from lasagna_cli._progress import TaskProgress

    counts = {"done": 0, "failed": 0}
    progress = TaskProgress(total, "tasks")
    with progress:
        for _ in range(skipped):
            progress.advance("skipped")

        async def fn(task: Task) -> dict[str, Any]:
            return await run_task(task, ctx)

        def on_outcome(outcome: Outcome[Task, dict[str, Any]]) -> None:
            if outcome.error is None:
                counts["done"] += 1
                progress.advance("done")
            else:
                write_failure(outcome.task, outcome.error)
                counts["failed"] += 1
                progress.advance("failed")

        from concurrent.futures import ThreadPoolExecutor

        ctx.writer = ThreadPoolExecutor(_WRITER_THREADS, thread_name_prefix="lasagna-write")
        try:
            await LocalExecutor(concurrency).run(pending, fn, on_outcome)
        finally:
            # Writes in progress end whole even when the run is cancelled (Ctrl-C).
            ctx.writer.shutdown(wait=True)
            ctx.writer = None
            llms = [*ctx.generators.values(), *([ctx.judge] if ctx.judge else [])]
            for llm in llms:
                await llm.aclose()
    if not sys.stderr.isatty():
        _say(progress.summary())
    return counts["done"], counts["failed"]


def run_benchmarks(config: RunConfig, out: Path, *, resume: bool) -> RunOutcome:
    # One event loop for the whole run: a user's system (an async factory's client, an
    # HTTP session) is made while settling the tracks and used by the tasks after.
    with asyncio.Runner() as loop:
        opened: list[SystemState] = []
        try:
            return _run_benchmarks(config, out, resume, loop, opened)
        finally:
            for state in opened:
                loop.run(state.aclose())


def _run_benchmarks(
    config: RunConfig,
    out: Path,
    resume: bool,
    loop: asyncio.Runner,
    opened: list[SystemState],
) -> RunOutcome:
    from lasagna_cli._store import open_result_folder, read_json, write_json_atomic

    rubric: Rubric | None = None
    if config.judge is not None:
        from lasagna_judge import JudgeError, load_rubric

        try:
            rubric = load_rubric(config.rubric)
        except JudgeError as exc:
            raise CliError(f"--rubric: {exc}", USAGE_ERROR) from None
    plan = build_plan(config)
    check_output_folder(out, resume)
    judge = _judge_info(config, rubric)
    systems: SystemState | None = None
    if any(p.setup.system is not None for b in plan for p in b.setups):
        from lasagna_cli._systems._run import SystemState, settle_systems

        systems = SystemState()
        opened.append(systems)
        plan = loop.run(settle_systems(plan, config.concurrency, systems))
    removed = open_result_folder(out, "-o", "the run folder")
    if removed:
        _say(f"removed {removed} partial file(s) a killed run left behind")
    run_manifest = manifest(config, plan, judge)
    write_json_atomic(out / "manifest.json", run_manifest)

    tasks = make_tasks(plan, out, judge)
    pending = [t for t in tasks if not (resume and is_done(t))]
    finished_before = len(tasks) - len(pending)
    if resume:
        _say(f"resuming: {finished_before:,} of {len(tasks):,} tasks already finished")

    generators: dict[str, LLM] = {}
    judge_llm: LLM | None = None
    needs_model = [
        t for t in pending if t.planned.setup.generator and t.planned.tracks != ("retrieval",)
    ]
    for model in dict.fromkeys(t.planned.setup.generator for t in needs_model):
        assert model is not None
        generators[model] = _make_llm(model, config.concurrency, "--generator")
    answers = [t for t in pending if t.planned.generation_mode or "closed-book" in t.planned.tracks]
    if config.judge is not None and answers:
        judge_llm = _make_llm(config.judge, config.concurrency, "--judge")

    ctx = TaskContext(
        rankings=_build_indexes(plan, pending),
        generators=generators,
        judge=judge_llm,
        rubric=rubric,
        bench_index={id(b): i for i, b in enumerate(plan)},
        systems=systems,
    )
    done, failed = loop.run(_execute(pending, ctx, config.concurrency, finished_before, len(tasks)))

    from lasagna_cli._results import build_results

    records: dict[str, Any] = {}
    for task in tasks:
        record = read_json(task.path)
        # A file from other settings (or another revision) is not this task's result.
        ok = isinstance(record, dict) and record.get("fingerprint") == task.fingerprint
        records[str(task.path)] = record if ok else None
    results = build_results(
        plan,
        tasks,
        records,
        judge=judge,
        seed=config.seed,
        config_hash=run_manifest["config_hash"],
    )
    write_json_atomic(out / "results.json", results)
    return RunOutcome(results, finished_before, done, failed, out)
