"""`lasagna benchmark run NAME --data-dir DIR [--step all|gen|eval|del]`: the staged
pipeline's door, handed over by `benchmark run` when PATH is a registered benchmark name."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from lasagna_cli.commands._errors import DATA_ERROR, INTERRUPTED, USAGE_ERROR, CliError, user_errors
from lasagna_cli.commands._llm import auto_concurrency
from lasagna_cli.commands._rates import rate_limits
from lasagna_cli.commands._terminal import echo

if TYPE_CHECKING:
    from lasagna_cli.commands._executors import ExecutorChoice
    from lasagna_cli.engine.config import ModelSpec
    from lasagna_cli.engine.staged import PipelineOptions
    from lasagna_judge import LLM

#: Options of `benchmark run` that mean nothing to the staged pipeline.
_NOT_FOR_PIPELINE = (
    "tracks",
    "n_samples",
    "seed",
    "filters",
    "drop_unknown_judgments",
    "data_format",
    "prices",  # a staged folder is priced by `report` and `export --prices`
    "max_chars",  # its eval holds judge grade's default limit
    "dry_run",  # its steps are priced by what they record; a dry run is for data files
)
#: Options of `benchmark run` for the user's own system, which the pipeline does not take.
_SYSTEM_OPTIONS = (
    "predictions",
    "predictions_from_data",
    "allow_missing",
    "system",
    "system_timeout",
    "system_retries",
    "system_headers",
)
#: Options only the staged pipeline reads.
_PIPELINE_ONLY = (
    "data_dir",
    "step",
    "max_queries",
    "retrieval_instruction",
    "ingest_mode",
    "ingest_workers",
)


def _given(ctx: typer.Context, name: str) -> bool:
    # By name: typer may carry its own copy of click, whose enum is not click's.
    source = ctx.get_parameter_source(name)
    return source is not None and source.name != "DEFAULT"


def _flag(ctx: typer.Context, name: str) -> str:
    return next(p.opts[0] for p in ctx.command.params if p.name == name)


def _endpoints(base_url: str | None) -> dict[str, str]:
    """Provider -> the server its calls go to: --base-url, or the environment's (see
    `endpoint_of`)."""
    from lasagna_cli.commands._llm import endpoint_of

    found = {
        p: endpoint_of(f"{p}/model", None, base_url) for p in ("openai", "anthropic", "ollama")
    }
    return {p: url for p, url in found.items() if url is not None}


def refuse_pipeline_options(ctx: typer.Context, path: str) -> None:
    """`benchmark run DATA`: the options only a registered benchmark's pipeline takes are
    refused, naming the benchmarks."""
    from lasagna_cli.engine.benchmarks import benchmark_names

    given = [name for name in _PIPELINE_ONLY if _given(ctx, name)]
    if given:
        hint = "; -n N draws questions from your data" if "max_queries" in given else ""
        raise CliError(
            f"{_flag(ctx, given[0])} is for registered benchmarks "
            f"({', '.join(benchmark_names())}); {path!r} is not one of them"
            + (" (it is a file or folder here)" if Path(path).exists() else "")
            + hint,
            USAGE_ERROR,
        )


def run_named_benchmark(ctx: typer.Context, path: str, **options: Any) -> None:
    """`lasagna benchmark run NAME`, NAME a registered benchmark: its staged pipeline. The
    options `run` shares with it take the same defaults (--top-k 5, like every door);
    --split and --rubric, when not given, are the benchmark's own."""
    with user_errors():
        for name in _NOT_FOR_PIPELINE:
            if _given(ctx, name):
                raise CliError(
                    f"{_flag(ctx, name)} does not apply to the staged pipeline of {path!r}; see "
                    "`lasagna benchmark run --help` for the NAME options",
                    USAGE_ERROR,
                )
        for name in _SYSTEM_OPTIONS:
            if _given(ctx, name):
                raise CliError(
                    f"{_flag(ctx, name)}: the staged pipeline of {path!r} measures lasagna's "
                    "BM25 and --generator, not your own system; a system is benchmarked on "
                    "data files and BEIR folders: lasagna benchmark run DATA --system ... (or "
                    "--predictions ...)",
                    USAGE_ERROR,
                )
        if options.get("jury"):
            raise CliError(
                f"--judge is given {len(options['jury']) + 1} times: a jury grades data files, "
                f"BEIR folders and sweep files; the staged pipeline of {path!r} takes one judge",
                USAGE_ERROR,
            )
        from lasagna_cli.commands._embedders import embedder_endpoint
        from lasagna_cli.commands._run_folders import default_output
        from lasagna_cli.engine.staged import PipelineOptions

        output: Path | None = options.get("output")
        from lasagna_cli.commands._executors import executor_choice

        chosen = executor_choice(options.get("executor") or "local", options.get("ray_address"))
        requests_per_minute, tokens_per_minute = rate_limits(options.get("rpm"), options.get("tpm"))
        _run_pipeline(
            PipelineOptions(
                name=path,
                data_dir=options.get("data_dir"),
                out=output if output is not None else default_output(path),
                step=options.get("step") or "all",
                split=options.get("split") if _given(ctx, "split") else None,
                profile=options.get("profile") or "speed",
                top_k=options["top_k"],
                max_queries=options.get("max_queries"),
                retrieval_instruction=options.get("retrieval_instruction"),
                generator=options.get("generator"),
                judge=options.get("judge"),
                rubric=options.get("rubric") if _given(ctx, "rubric") else None,
                concurrency=options.get("concurrency")
                or auto_concurrency(
                    [m for m in (options.get("generator"), options.get("judge")) if m],
                    options.get("base_url"),
                ),
                requests_per_minute=requests_per_minute,
                tokens_per_minute=tokens_per_minute,
                endpoints=_endpoints(options.get("base_url")),
                retriever=options.get("retriever") or "bm25",
                embedder=options.get("embedder"),
                embedder_endpoint=embedder_endpoint(options["embedder"])
                if options.get("embedder")
                else None,
                vector_store=options.get("vector_store"),
                collection=options.get("collection"),
                ingest_mode=options.get("ingest_mode") or "directory",
                ingest_workers=options.get("ingest_workers", 8),
            ),
            chosen,
            base_url=options.get("base_url"),
        )


def _run_pipeline(
    options: PipelineOptions,
    chosen: ExecutorChoice | None = None,
    make_llm: Callable[[ModelSpec, str], LLM] | None = None,
    base_url: str | None = None,
) -> None:
    """Run the requested stage(s); exit 1 when a task failed (run again to retry it).
    `chosen` is the executor (default: local); `make_llm` builds the models (default: from
    the flags and the environment; `base_url`: --base-url)."""
    import asyncio

    from lasagna_cli.commands._collector import fewer_collections
    from lasagna_cli.commands._embedders import build_embedder
    from lasagna_cli.commands._executors import LOCAL, make_executor
    from lasagna_cli.commands._llm import resolve_model, run_llm, text_cache
    from lasagna_cli.commands._progress import TaskProgress
    from lasagna_cli.engine.run import Models, load_judge_rubric
    from lasagna_cli.engine.staged import REPORT_FILE, check_options, run_pipeline

    check_options(options)
    # A malformed model name fails now, before any stage runs.
    if options.generator is not None:
        resolve_model(options.generator, {}, "--generator")
    if options.judge is not None:
        resolve_model(options.judge, {}, "--judge")

    def make(spec: ModelSpec, role: str) -> LLM:
        # A judge named only by the run's record (the generator) is named without a flag.
        flag = "--generator" if role == "generator" else ("--judge" if options.judge else None)
        return run_llm(
            spec.name,
            base_url=base_url,
            concurrency=options.concurrency,
            requests_per_minute=options.requests_per_minute,
            tokens_per_minute=options.tokens_per_minute,
            flag=flag,
        )

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
                    executor=make_executor(options.concurrency, chosen or LOCAL),
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
