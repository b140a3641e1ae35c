"""`benchmark run` end to end: plan, run the tasks, write manifest.json and results.json.

Order matters for the user: everything that can be refused (data, splits, filters, tracks,
the output folder, a missing model key) is refused before an index is built or a model is
asked anything. Each finished task is its own file under `<out>/tasks/`, so a run killed at
any moment loses only the tasks in flight, and `resume` picks up the rest. results.json is
rebuilt from the task records at the end.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from lasagna_cli.engine._errors import EngineUsageError
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
from lasagna_cli.engine.run._scoring import load_judge_rubric
from lasagna_cli.engine.run._system_tasks import SystemState

if TYPE_CHECKING:
    from lasagna_cli.engine.config import Servers
    from lasagna_cli.engine.run import ExecutorChoice


@dataclass
class BenchmarkRun:
    results: dict[str, Any]
    outcome: RunOutcome
    out: Path


Door = Literal["openviking", "benchmark", "data"]


def door_of(path: str | None, config: Path | None) -> Door:
    """Which door `benchmark run` goes through, from what PATH is: OpenViking's staged
    pipeline for `--config CONFIG.yaml` ("openviking"), the staged pipeline of a registered
    benchmark for a NAME that is not a file or folder here ("benchmark"), else the engine's
    run of a data path or sweep file ("data"). Neither PATH nor --config, both, or an
    OpenViking config given as PATH are usage errors."""
    if config is not None:
        if path is not None:
            raise EngineUsageError(
                f"give PATH ({path}) or --config {config}, not both: the config names its "
                "dataset (paths.dataset_path)"
            )
        return "openviking"
    if path is None:
        raise EngineUsageError(
            "lasagna benchmark run needs PATH (data, a sweep file or a benchmark name) or "
            "--config CONFIG.yaml (OpenViking's config)"
        )
    from lasagna_cli.engine.benchmarks import is_benchmark
    from lasagna_cli.engine.staged import is_openviking_config

    if is_openviking_config(Path(path)):
        raise EngineUsageError(
            f"{path} is OpenViking's config, not a sweep file: run it with --config {path} "
            f"(or `lasagna benchmark openviking {path}`)"
        )
    return "benchmark" if not Path(path).exists() and is_benchmark(path) else "data"


def check_run_flags(
    path: str, values: Mapping[str, Any], given: Mapping[str, str], env: Mapping[str, str]
) -> tuple[ExecutorChoice, tuple[float | None, float | None]]:
    """`benchmark run PATH`'s flags (by parameter name; `given`: those the command line
    gave -> their flag) checked before any file is read, in this order: no staged-pipeline
    option, --data-format and --format, --executor and --ray-address (`env`: the Ray
    variables the command read), --rpm and --tpm, --predictions-from-data. Returns the
    executor chosen and the two limits."""
    from lasagna_cli.engine.config import check_data_format, check_predictions_from_data
    from lasagna_cli.engine.run import check_rate, executor_choice
    from lasagna_cli.engine.staged import refuse_pipeline_options

    refuse_pipeline_options(given, path)
    check_data_format(values["data_format"], output_format=values["output_format"])
    chosen = executor_choice(values["executor"], values["ray_address"], env)
    limits = check_rate(values["rpm"], "--rpm"), check_rate(values["tpm"], "--tpm")
    if values["predictions_from_data"]:
        check_predictions_from_data(path)
    return chosen, limits


def run_config(
    path: str,
    values: Mapping[str, Any],
    given: Mapping[str, str],
    env: Mapping[str, str],
    *,
    servers: Servers,
    judge: str | None,
    jury: tuple[str, ...],
    limits: tuple[float | None, float | None],
) -> RunConfig:
    """`benchmark run PATH`'s config from its flags' values (`config.run_flags`) with the
    judge and jury, and `limits` (--rpm, --tpm) checked, built and located at `servers`
    (`config.build_config`)."""
    from lasagna_cli.engine.config import build_config, run_flags

    rates = {"requests_per_minute": limits[0], "tokens_per_minute": limits[1]}
    flags = run_flags(path, values, given, env, judge=judge, jury=jury, **rates)
    return build_config(path, flags, servers=servers, env=env)


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


def gap_lines(results: Sequence[Mapping[str, Any]], out: Path) -> tuple[list[str], bool]:
    """The lines `benchmark run` ends with when part of what it was asked did not come in:
    questions a predictions file left out (--allow-missing), claims cut, grades that failed
    or came back unparsed, tasks that failed; and True when the run fails: a task or a
    judge's call failed (`--resume -o OUT` does them again), or no answer got a grade."""
    lines: list[str] = []
    reasons = [q["missing"] for r in results for q in r["per_query"] if q.get("missing")]
    if reasons:
        from lasagna_cli.engine.systems._predictions import count_reasons

        lines.append(
            f"{len(reasons)} question(s) not scored (--allow-missing), counted as missing "
            f"in results.json: {count_reasons(reasons)}"
        )
    cut = sum(
        int(r["metrics"].get("diagnostics", {}).get("calls", {}).get("claims_cut") or 0)
        for r in results
    )
    if cut:
        from lasagna_judge import MAX_CLAIM_CHARS, MAX_CLAIMS

        lines.append(
            f"{cut:,} claim(s) of the judge's diagnosis cut to its bounds (at most "
            f"{MAX_CLAIMS} an answer, {MAX_CLAIM_CHARS} characters each); the diagnosis "
            "reads the claims kept (claims_cut in results.json)"
        )
    grades, grades_failed = grades_line(results, out)
    if grades is not None:
        lines.append(grades)
    not_scored = sum(r["counts"]["failed"] + r["counts"]["not_run"] for r in results)
    if not_scored:
        lines.append(
            f"{not_scored} task(s) failed and are not scored; see their files, then run "
            f"again with --resume -o {out} to retry them"
        )
    return lines, bool(not_scored) or grades_failed


def grades_line(results: Sequence[Mapping[str, Any]], out: Path) -> tuple[str | None, bool]:
    """What the judge's grades came to (None: every grade is in), and whether that fails
    the run. Unparsed grades beside graded ones are said, not failed: they are missing
    values in the judge's mean, never zeros."""
    found = {"ok": 0, "unparsed": 0, "error": 0}
    for result in results:
        for track in result["metrics"].values():
            statuses = track.get("judge_status") if isinstance(track, Mapping) else None
            for status in found:
                found[status] += int((statuses or {}).get(status, 0))
    total = sum(found.values())
    unparsed = (
        "the judge's replies held no score the rubric allows (each task file's judge \"raw\" "
        "says what it sent); check --judge and --rubric"
    )
    if found["error"]:
        line = (
            f'{found["error"]} of {total} grade(s) failed (each task file\'s judge "error" '
            f"says why); run again with --resume -o {out} to grade them again"
        )
        if found["unparsed"]:
            line += f"; {found['unparsed']} more unparsed: {unparsed}"
        return line, True
    if found["unparsed"] and not found["ok"]:
        return f"none of the {total} answers got a grade: {unparsed}", True
    if found["unparsed"]:
        return (
            f"{found['unparsed']} of {total} grade(s) unparsed, missing from the judge's mean "
            f"(not zeros): {unparsed}"
        ), False
    return None, False
