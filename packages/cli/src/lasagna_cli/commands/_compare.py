"""`lasagna benchmark compare RUN [RUN_B] [--setup A --setup B] [--fail-if-worse M:MARGIN]`:
paired differences with the interval and p-value of one sign-flip test, a sentence per
metric saying what they show, and a gate for CI (exit 1 when B is worse beyond a margin)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from lasagna_cli.commands._errors import check_format, user_errors
from lasagna_cli.commands._groups import benchmark_app
from lasagna_cli.commands._report import DatasetsOption, PricesOption, read_runs


def render_text(comparisons: Sequence[Mapping[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    from lasagna_cli.commands._terminal import shown
    from lasagna_cli.engine.reports import (
        COMPARE_HEADINGS,
        compared_fields,
        comparison_table,
        method_note,
    )

    console = Console(soft_wrap=True)
    if not console.is_terminal:  # a pipe or a file: lines as long as the table needs
        console = Console(soft_wrap=True, width=200)
    for found in comparisons:
        title, rows = comparison_table(found)
        console.print(shown(title), highlight=False, markup=False)
        if compared_fields(found):
            fields = ", ".join(compared_fields(found))
            console.print("the setups differ in " + fields, style="dim", highlight=False)
        if found["differs"]:
            console.print(
                "compared with --force, though they differ: " + "; ".join(found["differs"]),
                style="bold red",
                highlight=False,
            )
        table = Table(show_edge=False, pad_edge=False)
        for heading in COMPARE_HEADINGS:
            table.add_column(
                heading, justify="left" if heading in ("metric", "left out") else "right"
            )
        for row in rows:
            table.add_row(*row)
        console.print(table)
    console.print(method_note(comparisons[0]), style="dim", highlight=False)
    console.print("verdict:", style="bold", highlight=False)
    for found in comparisons:
        if len(comparisons) > 1:
            console.print(shown(f"{found['a']['dataset']}:"), highlight=False, markup=False)
        for row in found["metrics"]:
            console.print(shown(f"- {row['verdict']}"), highlight=False, markup=False)


@benchmark_app.command("compare")
def compare(
    folders: Annotated[
        list[Path],
        typer.Argument(
            help="One run folder (compare its setups) or two (RUN_A RUN_B).", show_default=False
        ),
    ],
    setups: Annotated[
        list[str] | None,
        typer.Option(
            "--setup",
            help="One run: --setup A --setup B. Two runs: the setup in both, or A (first "
            "run) then B (second run). [default: one run, its first setup against each "
            "other; two runs, the setups of the same name]",
        ),
    ] = None,
    metrics: Annotated[
        list[str] | None,
        typer.Option("--metric", help="track/metric, e.g. retrieval/ndcg@10; repeatable."),
    ] = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Compare results whose comparability keys differ (and say what differs).",
        ),
    ] = False,
    seed: Annotated[
        int | None, typer.Option("--seed", help="[default: the first run's seed]")
    ] = None,
    fail_if_worse: Annotated[
        list[str] | None,
        typer.Option(
            "--fail-if-worse",
            metavar="METRIC:MARGIN",
            help="Exit 1 when B is worse than A on METRIC by more than MARGIN at 95% "
            "confidence (the whole interval beyond the margin), e.g. ndcg@10:0.02; "
            "repeatable. For a CI step.",
        ),
    ] = None,
    output_format: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
    datasets: DatasetsOption = None,
    prices: PricesOption = None,
) -> None:
    """Compare setups on the questions both scored: for each metric the mean difference
    B - A, its interval and p-value from one paired sign-flip test (seeded; the interval
    inverts the test, so they agree), its power (the smallest difference these questions
    detect; the questions the observed difference would need), with the questions left out
    (failed, missing, unparsed) counted, then one sentence per metric saying what it
    shows. Results whose comparability keys differ are refused unless --force.
    --fail-if-worse METRIC:MARGIN exits 1 when B is shown worse than A by more than MARGIN."""
    with user_errors():
        check_format(output_format)
        from lasagna_cli.engine.reports import (
            check_gates,
            compare_json,
            compare_runs,
            forced_lines,
            parse_gates,
        )

        gates = parse_gates(fail_if_worse or [])

        runs = read_runs(folders, datasets, prices, texts=False)
        found = compare_runs(runs, setups or [], seed=seed, force=force, metrics=metrics)
        checked = check_gates(found, gates)
        if output_format == "json":
            shown = compare_json(found, checked if gates else None)
            typer.echo(json.dumps(shown, indent=1, ensure_ascii=False))
        else:
            render_text(found)
        for line in forced_lines(found):
            typer.echo(line, err=True)
        for gate in checked:
            typer.echo(gate.line, err=output_format == "json")
    failed = sum(1 for gate in checked if gate.failed)
    if failed:
        typer.echo(f"compare: {failed} of {len(checked)} gates failed", err=True)
        raise typer.Exit(1)
