"""`lasagna benchmark sweep`: every setup on every question, resumably, in parallel."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from lasagna_cli._errors import INTERRUPTED, USAGE_ERROR, CliError, user_errors
from lasagna_cli._groups import benchmark_app

if TYPE_CHECKING:
    from lasagna_cli._sweep._config import Provider
    from lasagna_cli._sweep._setups import Setup
    from lasagna_judge import LLM

DEFAULT_OUTPUT = Path("results")


def provider_api_key(provider: Provider, setup: str) -> str | None:
    """The key of a config.toml provider, from the variable it names (CLI layer only)."""
    from lasagna_cli._llm_options import key_from_variable

    if provider.api_key_env is None:
        return None
    value = key_from_variable(provider.api_key_env)
    if value is None:
        raise CliError(
            f"setup {setup!r}: provider {provider.name!r} reads its API key from "
            f"${provider.api_key_env}, which is not set; export it, or point the setup at "
            "another provider (e.g. local, which needs no key)",
            USAGE_ERROR,
        )
    return value


def make_setup_llms(setups: list[Setup], parallel: int) -> dict[str, LLM]:
    """One LLM object per (provider, model), all built (and every key checked) before any
    call. Built-in providers go through `build_llm`, so they read the same variables as
    every other command (OPENAI_API_KEY, OPENAI_BASE_URL, ANTHROPIC_API_KEY, OLLAMA_HOST);
    config.toml providers use their base_url and the key variable they name."""
    from lasagna_cli._llm_options import build_llm
    from lasagna_cli._sweep._config import BUILTIN_PROVIDERS
    from lasagna_cli._sweep._runner import llm_key
    from lasagna_judge import make_llm

    llms: dict[str, LLM] = {}
    for setup in setups:
        key = llm_key(setup)
        if key in llms:
            continue
        # The result files are the sweep's record and --continue its resume: no LLM cache.
        if setup.provider is BUILTIN_PROVIDERS.get(setup.provider.name):
            try:
                llms[key] = build_llm(
                    setup.model_id, concurrency=parallel, cache=False, flag=None, base_url_flag=None
                )
            except CliError as exc:
                raise CliError(f"setup {setup.name!r}: {exc}", exc.exit_code) from None
        else:
            llms[key] = make_llm(
                setup.model_id,
                base_url=setup.provider.base_url,
                api_key=provider_api_key(setup.provider, setup.name),
                cache=False,
                concurrency=parallel,
            )
    return llms


def _split_names(text: str | None) -> list[str]:
    return [name.strip() for name in (text or "").split(",") if name.strip()]


def _check_prefix(prefix: str) -> None:
    if prefix and ("/" in prefix or "\\" in prefix or prefix.startswith(".") or "\x00" in prefix):
        raise CliError(
            f"--prefix: expected a file-name prefix without path separators or a leading dot, "
            f"found {prefix!r}",
            USAGE_ERROR,
        )


@benchmark_app.command("sweep")
def sweep(
    datasets: Annotated[
        Path,
        typer.Option("--datasets", help="DATASETS.json: dataset -> question -> {input, output?}."),
    ],
    benchmark: Annotated[
        Path,
        typer.Option(
            "--benchmark", help="SETUPS.toml: the setups to compare (MiniJinja-rendered)."
        ),
    ],
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="config.toml with providers, databases and retrievers "
            "[default: config.toml beside SETUPS.toml, if present].",
        ),
    ] = None,
    parallel: Annotated[
        int, typer.Option("--parallel", min=1, help="Tasks in flight at most.")
    ] = 8,
    resume: Annotated[
        bool,
        typer.Option("--continue", help="Skip tasks whose result file exists and is not empty."),
    ] = False,
    retry_errors: Annotated[
        bool,
        typer.Option("--retry-errors", help='With --continue, run failed tasks ({"error"}) again.'),
    ] = False,
    output: Annotated[Path, typer.Option("--output", help="The results folder.")] = DEFAULT_OUTPUT,
    prefix: Annotated[
        str, typer.Option("--prefix", help="Prepended to every result file name.")
    ] = "",
    skip: Annotated[str | None, typer.Option("--skip", help="Setups to leave out: a,b.")] = None,
) -> None:
    """Run every setup on every question: one result file per task, resumable."""
    with user_errors():
        exit_code = _sweep(
            datasets,
            benchmark,
            config,
            parallel,
            resume,
            retry_errors,
            output,
            prefix,
            _split_names(skip),
        )
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
) -> int:
    import asyncio
    import time

    from lasagna_cli._progress import TaskProgress
    from lasagna_cli._store import open_result_folder
    from lasagna_cli._sweep._config import load_config
    from lasagna_cli._sweep._corpus import build_indexes
    from lasagna_cli._sweep._datasets import load_datasets
    from lasagna_cli._sweep._runner import SweepContext, plan_tasks, run_sweep, split_finished
    from lasagna_cli._sweep._setups import load_setups, select_setups

    if retry_errors and not resume:
        raise CliError("--retry-errors goes with --continue", USAGE_ERROR)
    _check_prefix(prefix)
    if output.exists() and not output.is_dir():
        raise CliError(
            f"--output {output}: exists and is not a folder; choose another", USAGE_ERROR
        )
    # Everything is read and checked before any model is called.
    datasets = load_datasets(datasets_path)
    if config_path is None and (setups_path.parent / "config.toml").is_file():
        config_path = setups_path.parent / "config.toml"
    config = load_config(config_path)
    setups = select_setups(load_setups(setups_path, config, datasets), skip)
    if not setups:
        raise CliError("--skip leaves no setup to run", USAGE_ERROR)
    tasks = plan_tasks(datasets, setups, output, prefix)
    if not tasks:
        raise CliError(
            f"no task: no setup covers a dataset of {datasets_path} (check the setups' "
            "`datasets` lists)"
        )
    removed = open_result_folder(output, "--output")
    if removed:
        typer.echo(f"removed {removed} temporary files left by an interrupted sweep", err=True)
    plan = split_finished(tasks, resume=resume, retry_errors=retry_errors, output=output)
    if not plan.pending:
        typer.echo(f"nothing to do: all {plan.total} results exist in {output}", err=True)
        return 0

    active = list({t.setup.name: t.setup for t in plan.pending}.values())
    llms = make_setup_llms([s for s in active if s.system is None], parallel)
    databases = [s.database for s in active if s.database is not None]
    if databases:
        typer.echo(f"indexing {len({d.name for d in databases})} database(s)...", err=True)
    indexes = build_indexes(databases)

    context = SweepContext(llms, indexes, log=lambda line: typer.echo(line, err=True))
    progress = TaskProgress(plan.total, "sweep")
    start = time.perf_counter()
    interrupted = False
    with progress:
        for _ in range(plan.skipped):
            progress.advance("skipped")

        async def main() -> None:
            try:
                if any(s.system is not None for s in active):
                    from lasagna_cli._systems._sweep import load_sweep_systems

                    context.systems = await load_sweep_systems(active, parallel)
                await run_sweep(
                    plan.pending, context, parallel=parallel, on_status=progress.advance
                )
            finally:
                for llm in llms.values():
                    await llm.aclose()
                for system in context.systems.values():
                    await system.aclose()

        try:
            asyncio.run(main())
        except KeyboardInterrupt:
            interrupted = True
    seconds = time.perf_counter() - start
    ran = progress.done + progress.failed
    rate = ran / seconds if seconds > 0 else 0.0
    typer.echo(
        f"sweep: {progress.done} done, {progress.failed} failed, {progress.skipped} skipped "
        f"of {plan.total} tasks in {seconds:.1f} s ({rate:.1f} tasks/s); results in {output}",
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
