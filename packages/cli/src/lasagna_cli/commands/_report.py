"""`lasagna benchmark report RUN_DIR [RUN_DIR ...] [-o report.html]`: one self-contained
HTML file over any run folders (run, staged pipeline, sweep)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from lasagna_cli.commands._errors import user_errors
from lasagna_cli.commands._groups import benchmark_app

if TYPE_CHECKING:
    from lasagna_cli.engine.reports import RunData

RunFolders = Annotated[
    list[Path],
    typer.Argument(
        help="Run folders: of `benchmark run` (results.json), of the staged pipeline, or of "
        "`benchmark sweep` (with --datasets).",
        show_default=False,
    ),
]
DatasetsOption = Annotated[
    Path | None,
    typer.Option(
        "-d",
        "--datasets",
        help="The DATASETS.json a `benchmark sweep` folder ran (its files keep the answers, "
        "not the questions).",
    ),
]
PricesOption = Annotated[
    Path | None,
    typer.Option(
        "--prices",
        help="JSON or TOML {model: [USD per 1M input, per 1M output tokens]}: the cost of "
        "every answer and grade [default: the table the run was given, if any].",
    ),
]


def read_runs(
    folders: list[Path], datasets: Path | None, prices: Path | None, *, texts: bool = True
) -> list[RunData]:
    from lasagna_cli.commands._llm import load_prices, text_cache
    from lasagna_cli.engine.reports import read_run

    table = load_prices(prices) if prices is not None else None
    return [
        read_run(folder, datasets=datasets, prices=table, texts=texts, text_cache=text_cache())
        for folder in folders
    ]


@benchmark_app.command("report")
def report(
    folders: RunFolders,
    output: Annotated[
        Path | None,
        typer.Option("-o", "--output", help="The HTML file [default: RUN_DIR/report.html]."),
    ] = None,
    datasets: DatasetsOption = None,
    prices: PricesOption = None,
    title: Annotated[str | None, typer.Option("--title", help="The page's title.")] = None,
) -> None:
    """Write one self-contained HTML report (no network needed to open it): leaderboards
    with 95% intervals and charts, breakdowns, paired comparisons, and every question with
    each setup's answer, grade, ranking and errors."""
    from lasagna_cli.engine import collector_paused

    with user_errors(), collector_paused():
        # In a function of its own, so that the run's millions of objects are freed before
        # the collector resumes: its first pass over them, still alive, took 0.14 s.
        _write_report(folders, output, datasets, prices, title)


def _write_report(
    folders: list[Path],
    output: Path | None,
    datasets: Path | None,
    prices: Path | None,
    title: str | None,
) -> None:
    from lasagna_cli.engine.records import check_output_file
    from lasagna_cli.engine.reports import write_report

    target = output if output is not None else folders[0] / "report.html"
    runs = read_runs(folders, datasets, prices)  # reads only: a bad folder, nothing made
    check_output_file(target, f"-o {target}")
    for run in runs:
        for note in run.notes:
            typer.echo(f"note: {run.label}: {note}", err=True)
    typer.echo(write_report(runs, target, title=title))
