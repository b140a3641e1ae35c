"""`lasagna benchmark sweep`: every setup on every question, resumably, in parallel."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from lasagna_cli.commands import _batch
from lasagna_cli.commands._batch import BatchOption
from lasagna_cli.commands._errors import INTERRUPTED, USAGE_ERROR, CliError, user_errors
from lasagna_cli.commands._executors import ExecutorOption, RayAddressOption
from lasagna_cli.commands._groups import benchmark_app
from lasagna_cli.commands._rates import RpmOption, TpmOption, rate_limits
from lasagna_cli.commands._sweep_llms import make_setup_llms

if TYPE_CHECKING:
    from collections.abc import Iterable

    from lasagna_cli.commands._executors import ExecutorChoice
    from lasagna_cli.engine.config import ModelSpec, Setup
    from lasagna_judge import LLM

DEFAULT_OUTPUT = Path(".")  # kag's default: the working directory
MAX_LOGGED_ERRORS = 5


def _with_endpoint(setup: Setup) -> Setup:
    """A built-in provider's setup with the server its calls go to (OPENAI_BASE_URL, ...):
    recorded in its result files, part of its fingerprint. A config.toml provider names its
    own `base_url`, recorded as it is."""
    from dataclasses import replace

    from lasagna_cli.commands._embedders import with_embedder_endpoint
    from lasagna_cli.commands._llm import endpoint_of
    from lasagna_cli.engine.config import BUILTIN_PROVIDERS

    setup = with_embedder_endpoint(setup)
    model = setup.generator
    builtin = (
        model is not None
        and model.provider is not None
        and (model.provider == BUILTIN_PROVIDERS.get(model.provider.name))
    )
    if model is None or not builtin:
        return setup
    return replace(setup, generator=replace(model, endpoint=endpoint_of(model.name)))


def _key_variables(setups: Iterable[Setup]) -> set[str]:
    """The variables config.toml's providers read their keys from (`api_key_env`)."""
    return {
        s.generator.provider.api_key_env
        for s in setups
        if s.generator is not None
        and s.generator.provider is not None
        and s.generator.provider.api_key_env
    }


def _split_names(text: str | None) -> list[str]:
    return [name.strip() for name in (text or "").split(",") if name.strip()]


@benchmark_app.command("sweep")
def sweep(
    datasets: Annotated[
        Path,
        typer.Option(
            "-d", "--datasets", help="DATASETS.json: dataset -> question -> {input, output?}."
        ),
    ],
    benchmark: Annotated[
        Path,
        typer.Option(
            "-b", "--benchmark", help="SETUPS.toml: the setups to compare (MiniJinja-rendered)."
        ),
    ],
    config: Annotated[
        Path | None,
        typer.Option(
            "-c",
            "--config",
            help="config.toml with providers, databases and retrievers [default: "
            "./config.toml as kag's; if absent, config.toml beside SETUPS.toml; if absent "
            "too, the built-in providers only].",
        ),
    ] = None,
    concurrency: Annotated[
        int,
        typer.Option(
            "--concurrency", "-p", "--parallel", min=1, help="Tasks in flight at most (kag's 1)."
        ),
    ] = 1,
    rpm: RpmOption = None,
    tpm: TpmOption = None,
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = None,
    resume: Annotated[
        bool,
        typer.Option(
            "--resume",
            "--continue",
            help="Skip tasks whose result file holds their result (kag's --continue).",
        ),
    ] = False,
    retry_errors: Annotated[
        bool,
        typer.Option("--retry-errors", help='With --resume, run failed tasks ({"error"}) again.'),
    ] = False,
    overwrite: Annotated[
        bool,
        typer.Option(
            "--overwrite",
            help="Run every task again over the result files already there, as kag does "
            "without --continue (lasagna refuses by default).",
        ),
    ] = False,
    missing_as_errors: Annotated[
        bool,
        typer.Option(
            "--missing-as-errors",
            help="A setup naming a provider, retriever or database missing from the config: "
            'record each of its tasks as {"error": ...} and run the others, as kag does '
            "(default: refuse before any call).",
        ),
    ] = False,
    output: Annotated[
        Path, typer.Option("-o", "--output", help="The results folder (kag's: .).")
    ] = DEFAULT_OUTPUT,
    prefix: Annotated[
        str, typer.Option("--prefix", help="Prepended to every result file name.")
    ] = "",
    skip: Annotated[str | None, typer.Option("--skip", help="Setups to leave out: a,b.")] = None,
    prices: Annotated[
        Path | None,
        typer.Option(
            "--prices",
            help="JSON or TOML {model: [USD per 1M input, per 1M output tokens]}: the cost "
            "of the answers and grades, kept in the folder for the report and the export.",
        ),
    ] = None,
    batch: BatchOption = False,
) -> None:
    """Run every setup on every question: one result file per task, resumable."""
    with user_errors():
        from lasagna_cli.commands._collector import fewer_collections
        from lasagna_cli.commands._executors import executor_choice
        from lasagna_cli.commands._llm import load_prices

        chosen = executor_choice(executor, ray_address)
        limits = rate_limits(rpm, tpm)
        price_table = load_prices(prices) if prices is not None else None  # before any call
        with fewer_collections():  # from the reading of the files: thousands of objects
            exit_code = _sweep(
                datasets,
                benchmark,
                config,
                concurrency,
                resume,
                retry_errors,
                output,
                prefix,
                _split_names(skip),
                chosen,
                overwrite=overwrite,
                missing_as_errors=missing_as_errors,
                limits=limits,
                batch=(batch, price_table, prices),
            )
        if price_table is not None:
            from lasagna_cli.commands._costs import sweep_costs

            sweep_costs(output, datasets, price_table)
    if exit_code:
        raise typer.Exit(exit_code)


def _sweep(
    datasets_path: Path,
    setups_path: Path,
    config_path: Path | None,
    parallel: int,
    resume: bool,
    retry_errors: bool,
    output: Path,
    prefix: str,
    skip: list[str],
    chosen: ExecutorChoice,
    *,
    overwrite: bool = False,
    missing_as_errors: bool = False,
    limits: tuple[float | None, float | None] = (None, None),
    batch: tuple[bool, dict[str, tuple[float, float]] | None, Path | None] = (False, None, None),
) -> int:
    import asyncio
    import os
    import time

    from lasagna_cli.commands._executors import make_executor
    from lasagna_cli.commands._progress import TaskProgress
    from lasagna_cli.engine.kag import (
        KagStore,
        broken_tasks,
        check_prefix,
        load_databases,
        load_sweep,
        record_broken,
        refuse_overwrite,
        sweep_tasks,
        task_count,
    )
    from lasagna_cli.engine.records import FolderLock, check_writable, remove_stale_temp_files
    from lasagna_cli.engine.run import Models, RunOptions, SystemState, execute, prepare

    if retry_errors and not resume:
        raise CliError("--retry-errors goes with --continue", USAGE_ERROR)
    if overwrite and resume:
        raise CliError(
            "--overwrite runs every task again and --continue keeps finished ones; choose one",
            USAGE_ERROR,
        )
    check_prefix(prefix)
    if output.exists() and not output.is_dir():
        raise CliError(
            f"--output {output}: exists and is not a folder; choose another", USAGE_ERROR
        )
    # Everything is read and checked before any model is called.
    loaded = load_sweep(
        datasets_path,
        setups_path,
        config_path,
        skip,
        os.environ,
        missing_as_errors=missing_as_errors,
    ).with_setups(_with_endpoint)
    for note in loaded.notes:
        typer.echo(note, err=True)
    store = KagStore(output, prefix, loaded.setups)
    broken = len(broken_tasks(loaded))
    total = task_count(loaded.plan) + broken
    if not resume and not overwrite:
        refuse_overwrite(loaded, store, output)
    check_writable(output, f"--output {output}")
    # Held until the sweep ends: a second sweep in this folder would pay for every call again.
    with FolderLock(output, f"--output {output}"):
        # Only the sweep's own folders: --output defaults to the working directory.
        removed = sum(remove_stale_temp_files(output / b.name) for b in loaded.plan)
        if removed:
            typer.echo(f"removed {removed} temporary files left by an interrupted sweep", err=True)

        from lasagna_cli.commands._embedders import build_embedder, vector_folder

        options = RunOptions(
            resume=resume,
            retry_failed=retry_errors,
            probe_systems=False,
            concurrency=parallel,
            vector_folder=vector_folder(),
        )
        by_model = {s.generator.key: s for s in loaded.setups.values() if s.generator is not None}

        def make(spec: ModelSpec, role: str) -> LLM:
            # Asked for by the runner only for pending tasks, each before any call is made.
            return make_setup_llms([by_model[spec.key]], parallel, limits, batch[0])[spec.key]

        logged = [0]

        def failure(path: Path, error: str) -> None:
            if logged[0] < MAX_LOGGED_ERRORS:
                typer.echo(f"task {path}: {error}", err=True)
            elif logged[0] == MAX_LOGGED_ERRORS:
                typer.echo("more tasks failed; their errors are in their result files", err=True)
            logged[0] += 1

        runner = make_executor(parallel, chosen, also=_key_variables(loaded.setups.values()))
        batch_lines: list[str] = []
        if batch[0]:  # the answers, then the grades, through the batch APIs first
            runner = _batch.batching(
                list(loaded.setups.values()), runner, chosen.kind, output, batch_lines, *batch[1:]
            )
        progress = TaskProgress(total, "sweep")
        start = time.perf_counter()
        interrupted = False
        nothing = [False]

        async def main() -> None:
            state = SystemState()
            models = Models(make, make_embedder=build_embedder)
            try:
                written = record_broken(loaded, store, resume) if broken else 0
                if broken:
                    for _ in range(written):
                        progress.advance("failed")
                    for _ in range(broken - written):
                        progress.advance("skipped")
                    for setup in loaded.broken.values():
                        typer.echo(f"setup {setup.name}: {setup.error} (recorded)", err=True)
                if not loaded.plan:
                    nothing[0] = written == 0
                    return
                plan = await prepare(loaded.plan, options, state, lambda line: None)
                databases = {
                    s.database.name: s.database for s in loaded.setups.values() if s.database
                }
                if databases:
                    typer.echo(f"indexing {len(databases)} database(s)...", err=True)
                options.databases = load_databases(databases.values())

                def started(finished: int, total: int) -> None:
                    nothing[0] = finished == total and written == 0

                await execute(
                    plan,
                    sweep_tasks(plan),
                    store,
                    runner,
                    models,
                    options,
                    state,
                    on_progress=progress.advance,
                    on_failure=failure,
                    say=lambda line: None,
                    before_start=started,
                )
            finally:
                await models.aclose()
                await state.aclose()

        with progress:
            try:
                asyncio.run(main())
            except KeyboardInterrupt:
                interrupted = True
        if nothing[0] and not interrupted:
            typer.echo(f"nothing to do: all {total} results exist in {output}", err=True)
            return 0
        for line in batch_lines:
            typer.echo(line, err=True)
        seconds = time.perf_counter() - start
        ran = progress.done + progress.failed
        rate = ran / seconds if seconds > 0 else 0.0
        typer.echo(
            f"sweep: {progress.done} done, {progress.failed} failed, {progress.skipped} skipped "
            f"of {total} tasks in {seconds:.1f} s ({rate:.1f} tasks/s); results in {output}",
            err=True,
        )
        if interrupted:
            typer.echo("interrupted: finished results are kept; resume with --continue", err=True)
            return INTERRUPTED
        if progress.failed:
            typer.echo(
                f'{progress.failed} tasks failed (recorded as {{"error": ...}}); run them again '
                "with --continue --retry-errors",
                err=True,
            )
            return 1
        return 0
