"""`lasagna benchmark export RUN_DIR --format csv|jsonl|parquet|trec|qrels [-o FILE]`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from lasagna_cli.commands._errors import user_errors
from lasagna_cli.commands._groups import benchmark_app
from lasagna_cli.commands._report import DatasetsOption, PricesOption, read_runs


@benchmark_app.command("export")
def export(
    folder: Annotated[
        Path,
        typer.Argument(
            help="A run folder (run, staged pipeline, or sweep with --datasets).",
            show_default=False,
        ),
    ],
    export_format: Annotated[
        str,
        typer.Option(
            "--format",
            help="csv, jsonl or parquet (one row per benchmark, setup and question), trec (a "
            "run file: qid Q0 doc rank score tag) or qrels (the judgments).",
        ),
    ] = "csv",
    output: Annotated[
        Path | None,
        typer.Option("-o", "--output", help="The file [default: stdout; parquet needs -o]."),
    ] = None,
    setup: Annotated[
        str | None, typer.Option("--setup", help="trec/qrels: the setup whose rankings to write.")
    ] = None,
    dataset: Annotated[
        str | None, typer.Option("--dataset", help="trec/qrels: the benchmark (name or prefix).")
    ] = None,
    datasets: DatasetsOption = None,
    prices: PricesOption = None,
) -> None:
    """Write a run's results as flat rows (every metric, the answer, the judge's grade and
    status, tokens and cost) or as a TREC run file for trec_eval, ranx and ir_measures."""
    with user_errors():
        from lasagna_cli.engine.reports import check_export, export_text, write_export

        check_export(export_format, output)
        (run,) = read_runs([folder], datasets, prices, texts=False)
        options: dict[str, Any] = {"run": run.label, "setup": setup, "dataset": dataset}
        if output is None:
            typer.echo(export_text(run.results, export_format, **options), nl=False)
        else:
            typer.echo(write_export(run.results, export_format, output, **options), err=True)
