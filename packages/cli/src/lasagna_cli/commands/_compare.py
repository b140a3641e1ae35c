"""`lasagna benchmark compare RUN [RUN_B] [--setup A --setup B] [--fail-if-worse M:MARGIN]`:
paired differences with the interval and p-value of one sign-flip test, a sentence per
metric saying what they show, and a gate for CI (exit 1 when B is worse beyond a margin)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from lasagna_cli.commands._errors import USAGE_ERROR, CliError, check_format, user_errors
from lasagna_cli.commands._groups import benchmark_app
from lasagna_cli.commands._report import DatasetsOption, PricesOption, read_runs


def _fmt(value: Any, spec: str = ".3f") -> str:
    return "-" if value is None else format(value, spec)


def _interval(row: Mapping[str, Any]) -> str:
    if not row["n"]:
        return "-"
    if row.get("ci95_low") is None or row.get("ci95_high") is None:
        return "unbounded"  # too few questions for a test
    return f"[{row['ci95_low']:.3f}, {row['ci95_high']:.3f}]"


def _settings(found: Mapping[str, Any]) -> list[str]:
    """What the two setups differ in: their own settings, then the fields held fixed that
    differ between two runs."""
    named = list(found.get("varied") or ())
    for line in found["compared_settings"]:
        field = line.split(":")[0].split(".")[0]  # retriever.k1: the retriever's
        if field not in named:
            named.append(field)
    return named


def render_text(comparisons: Sequence[Mapping[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    from lasagna_cli.commands._terminal import shown

    console = Console(soft_wrap=True)
    if not console.is_terminal:  # a pipe or a file: lines as long as the table needs
        console = Console(soft_wrap=True, width=200)
    for found in comparisons:
        a, b = found["a"], found["b"]
        where = a["run"] if a["run"] == b["run"] else f"{a['run']} vs {b['run']}"
        console.print(
            shown(f"{a['dataset']}: B {b['setup']} - A {a['setup']}  ({where})"),
            highlight=False,
            markup=False,
        )
        if _settings(found):
            console.print(
                "the setups differ in " + ", ".join(_settings(found)), style="dim", highlight=False
            )
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
            table.add_row(
                row["metric"] + (" (lower better)" if row.get("lower_is_better") else ""),
                str(row["n"]),
                _fmt(row.get("mean_a")),
                _fmt(row.get("mean_b")),
                _fmt(row.get("difference"), "+.3f"),
                _interval(row),
                _fmt(row.get("p_value"), ".4f"),
                _fmt(row.get("detectable")),
                _fmt(row.get("questions_needed"), ","),
                left_out,
            )
        console.print(table)
    first = comparisons[0]
    console.print(
        "paired over the questions both scored: a two-sided sign-flip test of the mean "
        f"difference ({first['permutation_resamples']} random sign patterns, every one when "
        f"there are fewer; seed {first['seed']}) and the {first['confidence']:.0%} interval "
        "that inverts it (every difference the test does not reject), so an interval "
        "without 0 always has p below 0.05; detectable: the smallest difference these "
        "questions detect (80% power, alpha 0.05, from the observed spread); needs n: the "
        "questions the observed difference would need",
        style="dim",
        highlight=False,
    )
    console.print("verdict:", style="bold", highlight=False)
    for found in comparisons:
        if len(comparisons) > 1:
            console.print(shown(f"{found['a']['dataset']}:"), highlight=False, markup=False)
        for row in found["metrics"]:
            console.print(shown(f"- {row['verdict']}"), highlight=False, markup=False)


def parse_gates(values: Sequence[str]) -> list[Any]:
    """`--fail-if-worse METRIC:MARGIN`, each; a bad one is a usage error (exit 2)."""
    from lasagna_cli.engine.reports import Gate

    gates = []
    for value in values:
        metric, colon, margin = value.rpartition(":")
        try:
            number = float(margin)
        except ValueError:
            number = -1.0
        if not colon or not metric or not 0 <= number < float("inf"):
            raise CliError(
                f"--fail-if-worse {value}: expected METRIC:MARGIN, e.g. "
                "retrieval/ndcg@10:0.02 (MARGIN a number >= 0, in the metric's own units)",
                USAGE_ERROR,
            )
        gates.append(Gate(metric, number))
    return gates


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
        gates = parse_gates(fail_if_worse or [])
        from lasagna_cli.engine.reports import check_gates, compare_runs

        runs = read_runs(folders, datasets, prices, texts=False)
        found = compare_runs(runs, setups or [], seed=seed, force=force, metrics=metrics)
        checked = check_gates(found, gates)
        if output_format == "json":
            shown: dict[str, Any] = {"comparisons": found}
            if gates:
                shown["gates"] = [
                    {"gate": str(g.gate), "metric": g.metric, "dataset": g.dataset,
                     "failed": g.failed, "line": g.line}
                    for g in checked
                ]  # fmt: skip
            typer.echo(json.dumps(shown, indent=1, ensure_ascii=False))
        else:
            render_text(found)
        for item in found:
            if item["differs"]:
                typer.echo(
                    f"warning: {item['a']['setup']} and {item['b']['setup']} were compared "
                    f"with --force; they differ in {'; '.join(item['differs'])}",
                    err=True,
                )
        for gate in checked:
            typer.echo(gate.line, err=output_format == "json")
    failed = sum(1 for gate in checked if gate.failed)
    if failed:
        typer.echo(f"compare: {failed} of {len(checked)} gates failed", err=True)
        raise typer.Exit(1)
