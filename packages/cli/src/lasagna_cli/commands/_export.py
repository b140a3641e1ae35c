"""`lasagna benchmark export RUN_DIR --format csv|jsonl|parquet|trec|qrels [-o FILE]`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lasagna_cli.commands._errors import USAGE_ERROR, CliError, user_errors
from lasagna_cli.commands._groups import benchmark_app
from lasagna_cli.commands._report import DatasetsOption, PricesOption, read_runs
from lasagna_cli.engine import counted


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
        from lasagna_cli.engine.reports import export_formats

        if export_format not in export_formats():
            raise CliError(
                f"--format: expected one of {', '.join(export_formats())}, found {export_format!r}",
                USAGE_ERROR,
            )
        if export_format == "parquet" and output is None:
            raise CliError("--format parquet: give the file with -o FILE.parquet", USAGE_ERROR)
        from lasagna_cli.engine.records import check_output_file
        from lasagna_cli.engine.reports import export_text, flat_rows, to_parquet
        from lasagna_synth import write_bytes_atomic

        if output is not None:
            check_output_file(output, f"-o {output}")
        (run,) = read_runs([folder], datasets, prices, texts=False)
        if export_format == "parquet":
            assert output is not None
            rows = list(flat_rows(run.results, run.label))
            to_parquet(rows, output)
            typer.echo(f"export: {output} ({counted(len(rows), 'row')})", err=True)
            return
        text = export_text(run.results, export_format, run=run.label, setup=setup, dataset=dataset)
        if output is None:
            typer.echo(text, nl=False)
        else:
            write_bytes_atomic(output, text.encode("utf-8"))
            typer.echo(f"export: {output} ({text.count(chr(10)):,} lines)", err=True)
