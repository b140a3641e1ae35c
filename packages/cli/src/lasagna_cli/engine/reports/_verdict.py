"""What a paired comparison means for a team's decision: one plain sentence per metric
(`verdict`), and the gate of `benchmark compare --fail-if-worse` (`check_gates`).

Both read a comparison row of `_compare` (B - A, its interval and p-value from one
sign-flip test, `_paired`), so they can never disagree with the table beside them:

- a difference is shown when the interval excludes 0 (equivalently p < 1 - confidence);
  then B is better or worse than A by the difference, the interval of that amount given;
  a metric where lower is better (hallucination, noise sensitivity, false refusals)
  counts a negative B - A as better;
- no difference shown: how many questions would detect one the size of the one observed
  (80% power, `_paired.power`), or, when the difference is 0, the smallest one these
  questions would detect;
- too few questions for any test, every difference equal, no question in common: said as
  such, never as figures that look like a result.

The gate: B is worse than A by more than MARGIN at the stated confidence when the whole
interval of the change lies beyond the margin on the worse side: for a higher-is-better
metric when the interval's high end is below -MARGIN, for a lower-is-better one when its
low end is above MARGIN. A gate of margin 0 thus fails exactly when B is shown worse.
Too few questions for a test never fail it (nothing is shown); a metric that no question
has in both fails it, as nothing can be checked.

`benchmark compare`'s text reads the same rows: each comparison's title, the settings its
setups differ in, its table's cells (`comparison_table`), and the note on the method.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lasagna_cli.engine._errors import EngineUsageError
from lasagna_cli.engine.reports._diagnosis import LOWER_IS_BETTER
from lasagna_cli.engine.reports._paired import level

#: Beside the claim diagnostics' (`_diagnosis.LOWER_IS_BETTER`): where fewer is better.
_LOWER = LOWER_IS_BETTER | {"false_refusal_rate"}


def lower_is_better(metric: str) -> bool:
    """Whether a lower value of the metric ("track/name") is the better one."""
    return metric.rsplit("/", 1)[-1] in _LOWER


def _p(value: float) -> str:
    return f"{value:.2g}"


def _questions(n: int) -> str:
    return "1 question" if n == 1 else f"{n:,} questions"


def _every(n: int) -> str:
    """The words for "on every one of the 12 questions", as English says them of 1 and 2."""
    return {1: "on the 1 question", 2: "on both questions"}.get(
        n, f"on every one of the {_questions(n)}"
    )


def _all_differ(n: int) -> str:
    return {1: "the 1 question differs", 2: "both questions differ"}.get(
        n, f"all {_questions(n)} differ"
    )


def side_labels(comparison: Mapping[str, Any]) -> tuple[str, str]:
    """How a sentence names A and B: their setups, with their runs when the names agree."""
    a, b = comparison["a"], comparison["b"]
    if a["setup"] != b["setup"]:
        return str(a["setup"]), str(b["setup"])
    if a["run"] != b["run"]:
        return f"{a['setup']} ({a['run']})", f"{b['setup']} ({b['run']})"
    return f"A ({a['setup']})", f"B ({b['setup']})"


def verdict(row: Mapping[str, Any], a: str, b: str, confidence: float) -> str:
    """One sentence: what the comparison row of one metric shows (the module docstring)."""
    metric = str(row["metric"])
    shown_metric = metric + (" (lower is better)" if lower_is_better(metric) else "")
    n = int(row["n"])
    if not n:
        return f"no question has a value of {metric} in both {a} and {b}: nothing to compare"
    difference = float(row["difference"])
    alpha = level(confidence)
    if row.get("all_equal") and difference == 0:
        return f"{a} and {b} score the same on {metric} {_every(n)}"
    low, high, p = row.get("ci95_low"), row.get("ci95_high"), float(row["p_value"])
    smallest = float(row.get("smallest_p", 0.0))
    if low is None or high is None or smallest >= alpha:
        few = (
            f"too few to test: {_questions(n)} cannot give p below {_p(alpha)} "
            f"(the smallest possible p is {_p(smallest)})"
        )
        if row.get("all_equal"):
            return f"{_all_differ(n)} by the same {difference:+.3f} on {metric} ({b} - {a}); {few}"
        return f"{b} - {a} on {metric} is {difference:+.3f} over {_questions(n)}; {few}"
    if low > 0 or high < 0:  # the interval excludes 0: p < alpha, by construction
        up = low > 0
        better = up != lower_is_better(metric)
        size = (low, high) if up else (-high, -low)
        how = f"{b} is {'better' if better else 'worse'} than {a} on {shown_metric}"
        if row.get("all_equal"):
            return f"{how} by {abs(difference):.3f} {_every(n)} (p = {_p(p)})"
        return (
            f"{how} by {abs(difference):.3f} [{size[0]:.3f}, {size[1]:.3f}] "
            f"(p = {_p(p)}, n = {n:,})"
        )
    said = (
        f"no difference between {b} and {a} is shown on {metric} ({b} - {a} = "
        f"{difference:+.3f} [{low:.3f}, {high:.3f}], p = {_p(p)}, n = {n:,})"
    )
    needed, detectable = row.get("questions_needed"), row.get("detectable")
    if needed is not None and difference != 0:
        return (
            f"{said}; about {needed:,} questions would detect a difference of "
            f"{abs(difference):.3f}, the one observed (80% power)"
        )
    if detectable is not None:
        return f"{said}; these questions would detect a difference of {detectable:.3f} or more"
    return said


@dataclass(frozen=True, slots=True)
class Gate:
    """`--fail-if-worse METRIC:MARGIN`: B may be worse than A on the metric by at most the
    margin (in the metric's own units)."""

    metric: str
    margin: float

    def __str__(self) -> str:
        return f"{self.metric}:{self.margin:g}"


@dataclass(frozen=True, slots=True)
class GateResult:
    """One gate checked on one comparison: whether it failed, and the line that says so."""

    gate: Gate
    metric: str
    """The metric the gate names, as "track/name"."""
    dataset: str
    failed: bool
    line: str


def resolve_metric(name: str, available: Sequence[str]) -> str:
    """A metric named "track/name", or by its name alone when one track has it."""
    if name in available:
        return name
    found = [m for m in available if m.split("/", 1)[-1] == name]
    if len(found) == 1:
        return found[0]
    if found:
        raise EngineUsageError(
            f"--fail-if-worse {name}: more than one metric has that name "
            f"({', '.join(found)}); give track/name"
        )
    raise EngineUsageError(
        f"--fail-if-worse {name}: not a metric of this comparison; it has "
        f"{', '.join(available) or 'none'}"
    )


def _gate_line(gate: Gate, row: Mapping[str, Any], a: str, b: str, dataset: str) -> GateResult:
    metric = str(row["metric"])
    head = f"gate {gate} on {dataset} ({b} against {a})"
    low, high, n = row.get("ci95_low"), row.get("ci95_high"), int(row["n"])
    if not n:
        line = f"{head}: failed: no question has a value of {metric} in both, nothing to check"
        return GateResult(gate, metric, dataset, True, line)
    interval = "unbounded" if low is None or high is None else f"[{low:.3f}, {high:.3f}]"
    change = f"{b} - {a} = {float(row['difference']):+.3f} {interval}, n = {n:,}"
    if low is None or high is None:
        line = f"{head}: passed: too few questions to show anything ({change})"
        return GateResult(gate, metric, dataset, False, line)
    # The interval's better and worse ends, as losses (the worse side positive).
    lower = lower_is_better(metric)
    least, most = (low, high) if lower else (-high, -low)
    if least > gate.margin:
        line = f"{head}: FAILED: worse by more than {gate.margin:g} ({change})"
        return GateResult(gate, metric, dataset, True, line)
    line = f"{head}: passed: not shown worse by more than {gate.margin:g} ({change})"
    if most > gate.margin:
        line += "; a loss beyond the margin is not ruled out either"
    return GateResult(gate, metric, dataset, False, line)


def check_gates(
    comparisons: Sequence[Mapping[str, Any]], gates: Sequence[Gate]
) -> list[GateResult]:
    """Each gate against each comparison that has its metric (the module docstring). A
    metric no comparison has is a usage error naming the metrics there are."""
    available: list[str] = []
    for comparison in comparisons:
        available += [r["metric"] for r in comparison["metrics"] if r["metric"] not in available]
    results = []
    for gate in gates:
        metric = resolve_metric(gate.metric, available)
        for comparison in comparisons:
            a, b = side_labels(comparison)
            for row in comparison["metrics"]:
                if row["metric"] == metric:
                    dataset = str(comparison["a"]["dataset"])
                    results.append(_gate_line(gate, row, a, b, dataset))
                    break
    return results


def parse_gates(values: Sequence[str]) -> list[Gate]:
    """`--fail-if-worse METRIC:MARGIN`, each; a bad one is a usage error."""
    gates = []
    for value in values:
        metric, colon, margin = value.rpartition(":")
        try:
            number = float(margin)
        except ValueError:
            number = -1.0
        if not colon or not metric or not 0 <= number < float("inf"):
            raise EngineUsageError(
                f"--fail-if-worse {value}: expected METRIC:MARGIN, e.g. "
                "retrieval/ndcg@10:0.02 (MARGIN a number >= 0, in the metric's own units)"
            )
        gates.append(Gate(metric, number))
    return gates


def compare_json(
    comparisons: Sequence[Mapping[str, Any]], checked: Sequence[GateResult] | None
) -> dict[str, Any]:
    """What `compare --format json` prints: the comparisons, and the gates checked when
    --fail-if-worse gave any (`checked` None: none given)."""
    shown: dict[str, Any] = {"comparisons": comparisons}
    if checked is not None:
        shown["gates"] = [
            {"gate": str(g.gate), "metric": g.metric, "dataset": g.dataset,
             "failed": g.failed, "line": g.line}
            for g in checked
        ]  # fmt: skip
    return shown


def forced_lines(comparisons: Sequence[Mapping[str, Any]]) -> list[str]:
    """A warning per comparison `--force` made though its results differ."""
    return [
        f"warning: {item['a']['setup']} and {item['b']['setup']} were compared "
        f"with --force; they differ in {'; '.join(item['differs'])}"
        for item in comparisons
        if item["differs"]
    ]


#: The columns of a comparison's table.
COMPARE_HEADINGS = ("metric", "n", "A", "B", "B - A", "95% interval", "p", "detectable",
                    "needs n", "left out")  # fmt: skip


def _fmt(value: Any, spec: str = ".3f") -> str:
    return "-" if value is None else format(value, spec)


def _interval(row: Mapping[str, Any]) -> str:
    if not row["n"]:
        return "-"
    if row.get("ci95_low") is None or row.get("ci95_high") is None:
        return "unbounded"  # too few questions for a test
    return f"[{row['ci95_low']:.3f}, {row['ci95_high']:.3f}]"


def compared_fields(found: Mapping[str, Any]) -> list[str]:
    """What the two setups differ in: their own settings, then the fields held fixed that
    differ between two runs."""
    named = list(found.get("varied") or ())
    for line in found["compared_settings"]:
        field = line.split(":")[0].split(".")[0]  # retriever.k1: the retriever's
        if field not in named:
            named.append(field)
    return named


def comparison_table(found: Mapping[str, Any]) -> tuple[str, list[tuple[str, ...]]]:
    """A comparison's title, and its table's rows (`COMPARE_HEADINGS`)."""
    a, b = found["a"], found["b"]
    where = a["run"] if a["run"] == b["run"] else f"{a['run']} vs {b['run']}"
    rows: list[tuple[str, ...]] = []
    for row in found["metrics"]:
        left_out = ", ".join(f"{n} {why}" for why, n in row["left_out"].items()) or "none"
        rows.append(
            (
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
        )
    return f"{a['dataset']}: B {b['setup']} - A {a['setup']}  ({where})", rows


def method_note(first: Mapping[str, Any]) -> str:
    """The line under the tables: how the figures were made (a comparison's seed and
    resamples)."""
    return (
        "paired over the questions both scored: a two-sided sign-flip test of the mean "
        f"difference ({first['permutation_resamples']} random sign patterns, every one when "
        f"there are fewer; seed {first['seed']}) and the {first['confidence']:.0%} interval "
        "that inverts it (every difference the test does not reject), so an interval "
        "without 0 always has p below 0.05; detectable: the smallest difference these "
        "questions detect (80% power, alpha 0.05, from the observed spread); needs n: the "
        "questions the observed difference would need"
    )
