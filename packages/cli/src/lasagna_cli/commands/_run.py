"""`lasagna benchmark run PATH|SWEEP.yaml`: measure retrieval and generation on your data,
then draw the leaderboard (`engine.reports.leaderboard_tables`)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from lasagna_cli.commands._batch import BatchOption, refuse_named_batch
from lasagna_cli.commands._errors import DATA_ERROR, user_errors
from lasagna_cli.commands._executors import ExecutorOption, RayAddressOption, ray_variables
from lasagna_cli.commands._grade_summary import DiagnosticsOption, JudgeMaxCharsOption
from lasagna_cli.commands._groups import benchmark_app
from lasagna_cli.commands._llm import concurrency_option, load_prices
from lasagna_cli.commands._rates import RpmOption, TpmOption
from lasagna_cli.commands._run_engine import run_engine
from lasagna_cli.commands._run_options import (
    ChunkerOption,
    ChunkOverlapOption,
    ChunkSizeOption,
    CollectionOption,
    CorpusOption,
    DryRunOption,
    EmbedderOption,
    IngestModeOption,
    IngestWorkersOption,
    JudgesOption,
    PricesOption,
    RetrieverOption,
    RubricOption,
    VectorStoreOption,
    given_flags,
)
from lasagna_cli.commands._validate import DataFormat, DropUnknownJudgments
from lasagna_cli.engine.config import DEFAULT_TOP_K, JUDGE_MAX_CHARS


@benchmark_app.command("run")
def run(
    ctx: typer.Context,
    path: Annotated[
        str | None,
        typer.Argument(
            help="A .jsonl, .csv or SQuAD .json file, a BEIR folder, or a sweep file "
            "(.yaml/.yml/.toml) listing benchmarks and setups; or NAME, a registered public "
            "benchmark (`lasagna benchmark list`), run by the staged pipeline with --data-dir.",
            show_default=False,
        ),
    ] = None,
    config_file: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="OpenViking's config.yaml, instead of PATH: run as `lasagna benchmark "
            "openviking CONFIG` (with --step and --base-url).",
        ),
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url",
            help="The server of --generator and --judge (openai/: any OpenAI-compatible "
            "endpoint; ollama/, anthropic/) instead of OPENAI_BASE_URL, OLLAMA_HOST or "
            "ANTHROPIC_BASE_URL; local/ models run in-process. With --config: instead of "
            "llm.base_url.",
        ),
    ] = None,
    profile: Annotated[
        str, typer.Option("--profile", help="speed: BM25 retrieval, no model and no key needed.")
    ] = "speed",
    tracks: Annotated[
        str | None,
        typer.Option(
            "--tracks",
            help="Comma-separated: retrieval, generation, closed-book [default: retrieval, plus "
            "generation when --generator is given, as far as the data supports them].",
            show_default=False,
        ),
    ] = None,
    generator: Annotated[
        str | None,
        typer.Option(
            "--generator",
            help="provider/model that answers the questions, e.g. local/smollm2 (offline, no "
            "key) or openai/gpt-4o-mini.",
        ),
    ] = None,
    judges: JudgesOption = None,
    rubric: RubricOption = "binary",
    max_chars: JudgeMaxCharsOption = JUDGE_MAX_CHARS,
    diagnostics: DiagnosticsOption = False,
    n_samples: Annotated[
        int | None,
        typer.Option("-n", help="Questions to draw per benchmark (seeded) [default: all]."),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the draw and the bootstrap.")] = 42,
    split: Annotated[str, typer.Option("--split", help="Split of a BEIR folder.")] = "test",
    top_k: Annotated[
        int,
        typer.Option(
            "--top-k",
            help="Passages retrieved per question (recall@k, hit@k, what the generator reads); "
            "the same default for every door, as OpenViking's and kag's.",
        ),
    ] = DEFAULT_TOP_K,
    retriever: RetrieverOption = "bm25",
    embedder: EmbedderOption = None,
    vector_store: VectorStoreOption = None,
    collection: CollectionOption = None,
    ingest_mode: IngestModeOption = "directory",
    ingest_workers: IngestWorkersOption = 8,
    filters: Annotated[
        list[str] | None,
        typer.Option(
            "--filter",
            help="key=value on the rows' metadata, e.g. question_type=multihop; repeatable.",
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--output",
            help="Run folder [default: a new runs/<file name>-<date-time>; with --resume, the "
            "latest of them].",
        ),
    ] = None,
    resume: Annotated[
        bool,
        typer.Option("--resume", help="Continue the run in the folder: skip finished tasks."),
    ] = False,
    concurrency: Annotated[
        int | None, concurrency_option("Tasks (and model calls) in flight at most; 8 with --system")
    ] = None,
    rpm: RpmOption = None,
    tpm: TpmOption = None,
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = None,
    output_format: Annotated[
        str, typer.Option("--format", help="text (the leaderboard) or json.")
    ] = "text",
    drop_unknown_judgments: DropUnknownJudgments = False,
    data_format: DataFormat = None,
    corpus: CorpusOption = None,
    chunker: ChunkerOption = "words",
    chunk_size: ChunkSizeOption = 200,
    chunk_overlap: ChunkOverlapOption = 0,
    data_dir: Annotated[
        Path | None,
        typer.Option("--data-dir", help="NAME: the benchmark's raw files (nothing is downloaded)."),
    ] = None,
    step: Annotated[
        str, typer.Option("--step", help="NAME: all, gen (index, retrieve, generate), eval or del.")
    ] = "all",
    max_queries: Annotated[
        int | None, typer.Option("--max-queries", help="NAME: the first N questions only.")
    ] = None,
    retrieval_instruction: Annotated[
        str | None,
        typer.Option("--retrieval-instruction", help="NAME: text put before each query."),
    ] = None,
    predictions: Annotated[
        str | None,
        typer.Option(
            "--predictions",
            help="Score outputs made elsewhere: a JSONL file of {id, answer?, retrieved?} "
            "rows (retrieved: document ids or passage texts, best first).",
            show_default=False,
        ),
    ] = None,
    predictions_from_data: Annotated[
        bool,
        typer.Option(
            "--predictions-from-data",
            help="Score the system outputs the data file records: RAGAS response and "
            "retrieved_contexts, DeepEval actual_output and retrieval_context (passage "
            "texts, matched to the corpus); rows without them have no prediction.",
        ),
    ] = False,
    allow_missing: Annotated[
        bool,
        typer.Option(
            "--allow-missing",
            help="--predictions: questions without a (single) prediction are counted and "
            "reported, not scored; unknown ids are ignored.",
        ),
    ] = False,
    system: Annotated[
        str | None,
        typer.Option(
            "--system",
            help="Benchmark your own system: package.module:attr (a function, async or not; "
            "a LangChain retriever or runnable; or a factory returning one) or an "
            "http(s):// endpoint taking {question, id, top_k} and replying {answer, retrieved}.",
            show_default=False,
        ),
    ] = None,
    system_timeout: Annotated[
        float | None,
        typer.Option(
            "--system-timeout",
            help="Seconds: per attempt of an http --system [default: 60]; per question of a "
            "Python --system [default: no limit]. A question past it fails, never scored.",
        ),
    ] = None,
    system_retries: Annotated[
        int | None,
        typer.Option(
            "--system-retries",
            help="http --system: retries on 408/429/5xx, timeouts and connection errors, with "
            "backoff [default: 3].",
        ),
    ] = None,
    system_headers: Annotated[
        list[str] | None,
        typer.Option(
            "--system-header",
            help="http --system: 'Name: value' sent with each request (${VAR} is read from the "
            "environment; values are never recorded); repeatable.",
        ),
    ] = None,
    prices: PricesOption = None,
    dry_run: DryRunOption = False,
    batch: BatchOption = False,
) -> None:
    """Measure retrieval (BM25) and generation on your data or a sweep of benchmarks.

    Writes one JSON file per task to the run folder, then results.json (every metric with
    its mean, 95% bootstrap interval and counts, and the per-query rankings) and prints a
    leaderboard. Exit 0 when every task is scored, 1 when data is bad or a task failed
    (run again with --resume to retry it), 2 for bad usage.
    """
    from lasagna_cli.engine import door_of

    with user_errors():
        door = door_of(path, config_file)
    if door == "openviking":  # `benchmark openviking CONFIG`, an option the config sets refused
        from lasagna_cli.commands._openviking import run_openviking
        from lasagna_cli.engine.staged import refuse_config_options

        assert config_file is not None  # the door of --config
        with user_errors():
            refuse_config_options(given_flags(ctx))
        return run_openviking(config_file, step, base_url, rpm, tpm)
    assert path is not None  # door_of refuses a run with neither PATH nor --config
    from lasagna_cli.engine.config import checked_base_url, jury_flags

    with user_errors():
        judge, jury = jury_flags(judges or [])
        base_url = checked_base_url(base_url, path, generator, judges or [])
        refuse_named_batch(batch, path)
    from lasagna_cli.commands._staged import run_named_benchmark

    if door == "benchmark":
        return run_named_benchmark(ctx, path, judge, jury, base_url)
    with user_errors():
        from lasagna_cli.commands._llm import servers
        from lasagna_cli.engine import check_run_flags, run_config

        given, env = given_flags(ctx), os.environ
        chosen, limits = check_run_flags(path, ctx.params, given, ray_variables())
        price_table = load_prices(prices) if prices is not None else None  # before any work
        found = servers(None, base_url)
        config = run_config(
            path, ctx.params, given, env, servers=found, judge=judge, jury=jury, limits=limits
        )
        if dry_run:
            from lasagna_cli.commands._llm import text_cache
            from lasagna_cli.engine import dry_run_lines
            from lasagna_cli.engine.datasets import DatasetLoader

            typer.echo("\n".join(dry_run_lines(config, DatasetLoader(text_cache()), price_table)))
            return
        from lasagna_cli.engine.records import new_run_folder

        out = output if output is not None else new_run_folder(path, resume=resume)
        run = run_engine(config, out, resume, price_table, chosen, base_url, (batch, prices))
        results = run.results["results"]
        if output_format == "json":
            from lasagna_cli.engine.reports import leaderboard_json

            typer.echo(json.dumps(leaderboard_json(results, out), indent=1, ensure_ascii=False))
        else:
            print_leaderboard(results)
            if price_table is not None:
                from lasagna_cli.engine.reports import cost_line

                typer.echo(cost_line(results))
            typer.echo(f"results: {out / 'results.json'}  (task records in {out / 'tasks'})")
        if say_gaps(results, out):
            raise typer.Exit(DATA_ERROR)


def print_leaderboard(results: Sequence[Mapping[str, Any]]) -> None:
    """The leaderboard: a table per comparability group and track, each with its title and
    key as lines of their own (as a table's title and caption rich would wrap them to the
    table's width, which is narrow), then the jury lines and the scripted-model note."""
    import sys

    from rich.console import Console, Group
    from rich.table import Table
    from rich.text import Text

    from lasagna_cli.commands._terminal import shown
    from lasagna_cli.engine.reports import (
        leaderboard_jury_lines,
        leaderboard_tables,
        scripted_note_of,
    )

    # Off a terminal (a log, a pipe) rich would squeeze the tables into 80 columns.
    console = Console() if sys.stdout.isatty() else Console(width=200)
    for i, found in enumerate(leaderboard_tables(results)):
        table = Table()
        table.add_column("setup", style="bold", no_wrap=True)
        for heading in found.headings:
            table.add_column(heading, justify="right")
        for name, *cells in found.rows:
            table.add_row(Text(shown(name)), *cells)
        if i:
            console.print()
        title = Text(shown(found.title), style="bold")
        console.print(Group(title, table, Text(shown(found.caption), style="dim")))
    for line in leaderboard_jury_lines(results):
        console.print(line, markup=False, highlight=False)
    note = scripted_note_of(results)
    if note:
        console.print(note, style="bold yellow", markup=False, highlight=False)


def say_gaps(results: list[dict[str, object]], out: Path) -> bool:
    """Each gap of the run's results (`engine.gap_lines`) in one line on stderr; True when
    the run fails."""
    from lasagna_cli.engine import gap_lines

    lines, fails = gap_lines(results, out)
    for line in lines:
        typer.echo(line, err=True)
    return fails
