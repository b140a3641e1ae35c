"""`benchmark run`'s engine run: the command's models (and their --base-url) and
embedders, progress bar and Ctrl-C message around `run_benchmarks`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from lasagna_cli.commands._errors import DATA_ERROR, INTERRUPTED, CliError
from lasagna_cli.commands._terminal import echo_err
from lasagna_cli.engine.config import OTHER_CONCURRENCY
from lasagna_cli.engine.run import ModelsUnreachable

if TYPE_CHECKING:
    from collections.abc import Callable

    from lasagna_cli.commands._executors import ExecutorChoice
    from lasagna_cli.engine import BenchmarkRun
    from lasagna_cli.engine.config import ModelSpec, RunConfig
    from lasagna_judge import LLM


def run_engine(
    config: RunConfig,
    out: Path,
    resume: bool,
    prices: dict[str, tuple[float, float]] | None = None,
    executor: ExecutorChoice | None = None,
    base_url: str | None = None,
    batch: tuple[bool, Path | None] = (False, None),
) -> BenchmarkRun:
    """The engine's run, with the command's models (`base_url`: --base-url, the server of
    those that call one), progress bar and Ctrl-C message. `batch`: --batch, and the
    --prices file (its table is `prices`) for the batch's lines."""
    import sys

    from lasagna_cli.commands._embedders import build_embedder, vector_folder
    from lasagna_cli.commands._executors import make_executor
    from lasagna_cli.commands._llm import text_cache
    from lasagna_cli.commands._progress import TaskProgress
    from lasagna_cli.engine import fewer_collections, run_benchmarks
    from lasagna_cli.engine.datasets import DatasetLoader
    from lasagna_cli.engine.run import Models
    from lasagna_synth import run_blocking

    concurrency = config.concurrency or OTHER_CONCURRENCY

    limits = (config.requests_per_minute, config.tokens_per_minute)
    make = run_models(base_url, concurrency, limits)
    runner = make_executor(concurrency, executor)
    batch_lines: list[str] = []
    if batch[0]:
        from lasagna_cli.commands._batch import batching

        kind = executor.kind if executor is not None else "local"
        judges = config.judges
        runner = batching(config.setups, runner, kind, out, batch_lines, prices, batch[1], judges)
    progress = TaskProgress(0, "tasks")
    try:
        with progress, fewer_collections():
            run = run_blocking(
                lambda: run_benchmarks(
                    config,
                    out,
                    resume=resume,
                    executor=runner,
                    models=Models(make, make_embedder=build_embedder),
                    loader=DatasetLoader(text_cache(), on_step=progress.step),
                    vector_folder=vector_folder(),
                    on_progress=progress.advance,
                    on_start=progress.start,
                    say=echo_err,
                    prices=prices,
                    on_step=progress.step,
                )
            )
    except ModelsUnreachable as exc:
        raise CliError(f"{exc} -o {out}", DATA_ERROR) from None
    except KeyboardInterrupt:
        # Finished task files are whole (the writers are waited for); say how to go on.
        typer.echo(
            f"interrupted: finished tasks are kept in {out / 'tasks'}; continue with "
            f"--resume -o {out}",
            err=True,
        )
        raise typer.Exit(INTERRUPTED) from None
    if not sys.stderr.isatty():
        typer.echo(progress.summary(), err=True)
    for line in batch_lines:
        typer.echo(line, err=True)
    return run


def run_models(
    base_url: str | None,
    concurrency: int,
    limits: tuple[float | None, float | None],
    judge_flag: str | None = "--judge",
) -> Callable[[ModelSpec, str], LLM]:
    """How a run makes its models (`run_llm`): at --base-url where they call a server, with
    its concurrency and --rpm, --tpm (`limits`); a judge named in messages as `judge_flag`."""
    from lasagna_cli.commands._llm import run_llm

    def make(spec: ModelSpec, role: str) -> LLM:
        return run_llm(
            spec.name,
            base_url=base_url,
            concurrency=concurrency,
            requests_per_minute=limits[0],
            tokens_per_minute=limits[1],
            flag="--generator" if role == "generator" else judge_flag,
        )

    return make
