"""`benchmark run` end to end: plan, run the tasks, write manifest.json and results.json.

Order matters for the user: everything that can be refused (data, splits, filters, tracks,
the output folder, a missing model key) is refused before an index is built or a model is
asked anything. Each finished task is its own file under `<out>/tasks/`, so a run killed at
any moment loses only the tasks in flight, and `resume` picks up the rest. results.json is
rebuilt from the task records at the end.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lasagna_cli.engine._errors import EngineError, EngineUsageError
from lasagna_cli.engine._steps import Step, no_step
from lasagna_cli.engine.config._config import RunConfig
from lasagna_cli.engine.datasets import DatasetLoader, duplicates_note
from lasagna_cli.engine.plan._plan import build_plan
from lasagna_cli.engine.records._records import is_current
from lasagna_cli.engine.records._store import RunStore, open_folder, write_json_atomic
from lasagna_cli.engine.reports._manifest import manifest
from lasagna_cli.engine.reports._results import build_results
from lasagna_cli.engine.run._executor import Executor
from lasagna_cli.engine.run._options import RunOptions, judge_identity
from lasagna_cli.engine.run._runner import Models, RunOutcome, execute, plan_tasks, prepare
from lasagna_cli.engine.run._system_tasks import SystemState

if TYPE_CHECKING:
    from lasagna_judge import Rubric


@dataclass
class BenchmarkRun:
    results: dict[str, Any]
    outcome: RunOutcome
    out: Path


def load_judge_rubric(name: str) -> Rubric:
    """The rubric --rubric names: a name that is neither built in nor a file is a usage
    error, a rubric file that cannot be used is bad content. The one reading of --rubric:
    every command and door takes its rubric from here."""
    from lasagna_judge import JudgeError, load_rubric

    try:
        return load_rubric(name)
    except JudgeError as exc:
        if Path(name).is_file():  # the file is there: what it holds is wrong (bad content)
            raise EngineError(f"--rubric: {exc}") from None
        raise EngineUsageError(f"--rubric: {exc}") from None


def check_output_folder(out: Path, resume: bool, label: str) -> None:
    """A folder that already holds a run is refused unless it is resumed."""
    if resume or not out.exists():
        return
    if not out.is_dir():
        raise EngineUsageError(f"{label}: exists and is not a folder; choose another")
    if (out / "manifest.json").exists() or (out / "tasks").exists():
        raise EngineUsageError(
            f"{out} already holds a run; add --resume to continue it, or choose another folder "
            "with -o"
        )


async def run_benchmarks(
    config: RunConfig,
    out: Path,
    *,
    resume: bool,
    executor: Executor,
    models: Models,
    loader: DatasetLoader | None = None,
    say: Callable[[str], None] = lambda line: None,
    on_progress: Callable[[str], None] = lambda status: None,
    on_start: Callable[[int, str], None] = lambda total, description: None,
    prices: Mapping[str, tuple[float, float]] | None = None,
    vector_folder: Path | None = None,
    on_step: Step = no_step,
) -> BenchmarkRun:
    loader = loader or DatasetLoader()
    options = RunOptions(
        judge=config.judge,
        judge_endpoint=config.judge_endpoint,
        jury=config.jury,
        rubric=load_judge_rubric(config.rubric) if config.judge is not None else None,
        judge_max_chars=config.judge_max_chars,
        diagnostics=config.diagnostics,
        resume=resume,
        concurrency=executor.concurrency,
        vector_folder=vector_folder,
    )
    loader.probe(config.benchmarks)
    plan = build_plan(config, loader)
    check_output_folder(out, resume, f"-o {out}")
    for bench in plan:  # also in results.json's notes
        if bench.dataset.duplicates:
            say(f"{bench.entry.where}: {duplicates_note(bench.dataset.duplicates)}")
    created = not out.exists()
    with open_folder(out, f"-o {out}", "the run folder") as removed:  # before any call
        if removed:
            say(f"removed {removed} partial file(s) a killed run left behind")
        state = SystemState()
        try:
            try:
                plan = await prepare(plan, options, state, say)
            except BaseException:
                if created and not any(out.iterdir()):  # refused before anything was written
                    out.rmdir()
                raise
            judge = judge_identity(options)
            run_manifest = manifest(config, plan, judge)
            write_json_atomic(out / "manifest.json", run_manifest)

            def started(finished: int, total: int) -> None:
                on_start(total, "tasks")
                if resume:
                    say(f"resuming: {finished:,} of {total:,} tasks already finished")

            outcome = await execute(
                plan,
                plan_tasks(plan, options),
                RunStore(out),
                executor,
                models,
                options,
                state,
                on_progress=on_progress,
                say=say,
                before_start=started,
                on_step=on_step,
            )
        finally:
            await state.aclose()
            await models.aclose()
        current = [
            (task, record if is_current(record, task) else None)
            for task, record in zip(outcome.tasks, outcome.records.values(), strict=True)
        ]
        results = build_results(
            plan,
            current,
            judge=judge,
            seed=config.seed,
            config_hash=run_manifest["config_hash"],
            prices=prices,
        )
        write_json_atomic(out / "results.json", results)
        return BenchmarkRun(results, outcome, out)
