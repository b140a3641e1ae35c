"""`lasagna benchmark compare RUN [RUN_B] [--setup A --setup B]`: paired differences with
their bootstrap interval and sign-flip p-value."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from lasagna_cli.commands._errors import check_format, user_errors
from lasagna_cli.commands._groups import benchmark_app
from lasagna_cli.commands._report import DatasetsOption, PricesOption, read_runs


def _fmt(value: Any, spec: str = ".3f") -> str:
    return "-" if value is None else format(value, spec)


def render_text(comparisons: Sequence[Mapping[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(soft_wrap=True)
    if not console.is_terminal:  # a pipe or a file: lines as long as the table needs
        console = Console(soft_wrap=True, width=200)
    for found in comparisons:
        a, b = found["a"], found["b"]
        where = a["run"] if a["run"] == b["run"] else f"{a['run']} vs {b['run']}"
        console.print(
            f"{a['dataset']}: B {b['setup']} - A {a['setup']}  ({where})", highlight=False
        )
        if found["compared_settings"]:
            fields = sorted({line.split(":")[0] for line in found["compared_settings"]})
            console.print("the setups differ in " + ", ".join(fields), style="dim", highlight=False)
        if found["differs"]:
            console.print(
                "compared with --force, though they differ: " + "; ".join(found["differs"]),
                style="bold red",
                highlight=False,
            )
        table = Table(show_edge=False, pad_edge=False)
        headings = ("metric", "n", "A", "B", "B - A", "95% interval", "p", "detectable",
                    "needs n", "left out")  # fmt: skip
        for heading in headings:
            table.add_column(
                heading, justify="left" if heading in ("metric", "left out") else "right"
            )
        for row in found["metrics"]:
            left_out = ", ".join(f"{n} {why}" for why, n in row["left_out"].items()) or "none"
            interval = f"[{row['ci95_low']:.3f}, {row['ci95_high']:.3f}]" if row["n"] else "-"
            table.add_row(
                row["metric"],
                str(row["n"]),
                _fmt(row.get("mean_a")),
                _fmt(row.get("mean_b")),
                _fmt(row.get("difference"), "+.3f"),
                interval,
                _fmt(row.get("p_value"), ".4f"),
                _fmt(row.get("detectable")),
                _fmt(row.get("questions_needed"), ","),
                left_out,
            )
        console.print(table)
    console.print(
        "paired over the questions both scored: bootstrap interval of the mean difference "
        f"({comparisons[0]['bootstrap_resamples']} resamples) and two-sided sign-flip test "
        f"({comparisons[0]['permutation_resamples']} resamples, exact when small), seed "
        f"{comparisons[0]['seed']}; detectable: the smallest difference these questions detect "
        "(80% power, alpha 0.05, from the observed spread); needs n: the questions the "
        "observed difference would need",
        style="dim",
        highlight=False,
    )


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
    output_format: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
    datasets: DatasetsOption = None,
    prices: PricesOption = None,
) -> None:
    """Compare setups on the questions both scored: for each metric the mean difference
    B - A, its paired bootstrap interval (seeded), a sign-flip test p-value and its power
    (the smallest difference these questions detect; the questions the observed difference
    would need), with the questions left out (failed, missing, unparsed) counted. Results
    whose comparability keys differ are refused unless --force."""
    with user_errors():
        check_format(output_format)
        from lasagna_cli.engine.reports import compare_runs

        runs = read_runs(folders, datasets, prices, texts=False)
        found = compare_runs(runs, setups or [], seed=seed, force=force, metrics=metrics)
        if output_format == "json":
            typer.echo(json.dumps({"comparisons": found}, indent=1, ensure_ascii=False))
        else:
            render_text(found)
        for item in found:
            if item["differs"]:
                typer.echo(
                    f"warning: {item['a']['setup']} and {item['b']['setup']} were compared "
                    f"with --force; they differ in {'; '.join(item['differs'])}",
                    err=True,
                )
