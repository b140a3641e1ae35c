"""`lasagna benchmark run NAME --data-dir DIR [--step all|gen|eval|del]`: the staged
pipeline's door, handed over by `benchmark run` when PATH is a registered benchmark name;
and the stages run, with their progress bars, for `benchmark openviking` too."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import typer

from lasagna_cli.commands._errors import DATA_ERROR, INTERRUPTED, user_errors
from lasagna_cli.commands._llm import auto_concurrency
from lasagna_cli.commands._run_options import given_flags
from lasagna_cli.commands._terminal import echo

if TYPE_CHECKING:
    from lasagna_cli.commands._executors import ExecutorChoice
    from lasagna_cli.engine.config import ModelSpec
    from lasagna_cli.engine.staged import PipelineOptions
    from lasagna_judge import LLM


def run_named_benchmark(
    ctx: typer.Context, path: str, judge: str | None, jury: tuple[str, ...], base_url: str | None
) -> None:
    """`lasagna benchmark run NAME`, NAME a registered benchmark: its staged pipeline, with
    the flags' values (`ctx.params`), the judge and --base-url `run` checked."""
    with user_errors():
        from lasagna_cli.commands._executors import ray_variables
        from lasagna_cli.commands._llm import servers
        from lasagna_cli.engine.staged import named_run

        values = ctx.params
        models = [m for m in (values["generator"], judge) if m]
        concurrency = values["concurrency"] or auto_concurrency(models, base_url)
        found, ray = servers(None, base_url), ray_variables()
        options, chosen = named_run(
            path, values, given_flags(ctx), ray, found, concurrency, judge=judge, jury=jury
        )
        run_stages(options, chosen, base_url=base_url)


def run_stages(
    options: PipelineOptions,
    chosen: ExecutorChoice | None = None,
    make_llm: Callable[[ModelSpec, str], LLM] | None = None,
    base_url: str | None = None,
) -> None:
    """Run the requested stage(s); exit 1 when a task failed (run again to retry it).
    `chosen` is the executor (default: local); `make_llm` builds the models (default: from
    the flags and the environment; `base_url`: --base-url)."""
    import asyncio

    from lasagna_cli.commands._embedders import build_embedder
    from lasagna_cli.commands._executors import make_executor
    from lasagna_cli.commands._llm import resolve_model, text_cache
    from lasagna_cli.commands._progress import TaskProgress
    from lasagna_cli.commands._run_engine import run_models
    from lasagna_cli.engine import fewer_collections
    from lasagna_cli.engine.run import Models, load_judge_rubric
    from lasagna_cli.engine.staged import REPORT_FILE, check_options, run_pipeline

    check_options(options)
    # A malformed model name fails now, before any stage runs.
    if options.generator is not None:
        resolve_model(options.generator, {}, "--generator")
    if options.judge is not None:
        resolve_model(options.judge, {}, "--judge")

    # A judge named only by the run's record (the generator) is named without a flag.
    limits = (options.requests_per_minute, options.tokens_per_minute)
    make = run_models(base_url, options.concurrency, limits, "--judge" if options.judge else None)
    models = Models(
        make if make_llm is None else make_llm,
        make_embedder=lambda spec: build_embedder(spec, concurrency=options.ingest_workers),
    )
    bars: list[TaskProgress] = []

    def reporter() -> TaskProgress:
        if bars:
            bars[-1].__exit__(None, None, None)
        bars.append(TaskProgress(0, "").__enter__())
        return bars[-1]

    try:
        with fewer_collections():
            failed = asyncio.run(
                run_pipeline(
                    options,
                    executor=make_executor(options.concurrency, chosen),
                    models=models,
                    load_rubric=load_judge_rubric,
                    text_cache=text_cache(),
                    say=echo,
                    reporter=reporter,
                    on_step=lambda stage, done, total: bars[-1].step(stage, done, total),
                )
            )
    except KeyboardInterrupt:
        # Each finished question is a whole file in gen/ or eval/: nothing is lost.
        typer.echo(
            f"interrupted: finished questions are kept in {options.out}; run the same command "
            "again to go on from there",
            err=True,
        )
        raise typer.Exit(INTERRUPTED) from None
    finally:
        if bars:
            bars[-1].__exit__(None, None, None)
    typer.echo(f"report: {options.out / REPORT_FILE}")
    if failed:
        typer.echo(
            f"{failed} question(s) failed and are not scored; run the same command again to "
            "retry them (finished ones are kept)",
        )
        raise typer.Exit(DATA_ERROR)
