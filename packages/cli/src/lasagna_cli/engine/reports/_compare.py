"""Paired comparisons: setup B against setup A, metric by metric, on the questions both
scored (`benchmark compare` and the HTML report).

- Which results: between the setups of one run (`--setup A --setup B`, or the first setup
  of each benchmark against each other one), or between two runs (the results with the
  same benchmark and setup, one `--setup S` in both, or `--setup A --setup B`: A of the
  first run against B of the second).
- Each metric: the mean difference B - A over the questions whose value both have, its
  interval and p-value from one sign-flip test (`_paired`: the interval inverts the test,
  so the two agree), its power (the smallest difference these questions detect, and how
  many questions the observed difference would need), with how many questions were
  compared and why the others were left out (failed, missing, not run in either; an
  unparsed or failed grade; no value), and the sentence that says what it shows
  (`_verdict`).
- The settings the two setups differ in, read from their `setup` sections (`varied`,
  `_settings`), beside the fields held fixed that differ between two runs
  (`compared_settings`).
- Results are compared only when they measured the same questions the same way: their
  comparability keys are equal, or differ only in the setups' own settings (the retriever:
  what two runs compare, as results.json leaves the settings a run varies out of its key;
  listed as `compared_settings`). Other differences (questions, revision, split, corpus,
  judge, metrics version) refuse the comparison with what differs, unless `force`, which
  records what differs with it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lasagna_cli.engine._errors import EngineUsageError
from lasagna_cli.engine.reports._paired import (
    CONFIDENCE,
    PERMUTATION_RESAMPLES,
    compare_paired_many,
)
from lasagna_cli.engine.reports._run_data import RunData, metric_names
from lasagna_cli.engine.reports._settings import varied_settings
from lasagna_cli.engine.reports._verdict import lower_is_better, side_labels, verdict


@dataclass(frozen=True)
class Side:
    run: RunData
    result: Mapping[str, Any]

    def describe(self) -> dict[str, Any]:
        return {
            "run": self.run.label,
            "dataset": self.result["dataset"]["name"],
            "setup": self.result["setup"]["name"],
            "comparability_key": self.result["comparability_key"],
        }


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, Mapping) and value:
        flat: dict[str, Any] = {}
        for key, inner in value.items():
            flat.update(_flatten(inner, f"{prefix}{key}."))
        return flat
    return {prefix.rstrip("."): value}


#: Fields of `held_fixed` that are what two runs compare (their setups' settings), never
#: a reason to refuse: within one run results.json already leaves them out of the key.
COMPARED_FIELDS = ("retriever", "retrieval_instruction")


def differences(a: Mapping[str, Any], b: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """What the fields held fixed of two results disagree on, one "field: a vs b" each:
    those that make them incomparable, and the setups' settings being compared."""
    left = _flatten(a.get("held_fixed") or {})
    right = _flatten(b.get("held_fixed") or {})
    blocking: list[str] = []
    compared: list[str] = []
    for key in sorted(set(left) | set(right)):
        if left.get(key) != right.get(key):
            shown = [json.dumps(side.get(key), ensure_ascii=False) for side in (left, right)]
            line = f"{key}: {_short(shown[0])} vs {_short(shown[1])}"
            (compared if key.split(".")[0] in COMPARED_FIELDS else blocking).append(line)
    if not blocking and not compared and a.get("comparability_key") != b.get("comparability_key"):
        blocking.append("comparability_key (computed by another lasagna version)")
    return blocking, compared


def group_key(result: Mapping[str, Any]) -> str:
    """What results must share to be compared: their comparability key without the
    setups' own settings (`COMPARED_FIELDS`), as the report groups them."""
    from lasagna_cli.engine.reports._results import comparability_key

    fixed = result.get("held_fixed")
    if not isinstance(fixed, Mapping):
        return str(result.get("comparability_key"))
    return comparability_key({k: v for k, v in fixed.items() if k not in COMPARED_FIELDS})


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _results(run: RunData, setup: str | None = None) -> list[Mapping[str, Any]]:
    return [r for r in run.results if setup is None or r["setup"]["name"] == setup]


def _names(run: RunData) -> str:
    return ", ".join(f"{r['dataset']['name']} / {r['setup']['name']}" for r in run.results)


def pair_results(runs: Sequence[RunData], setups: Sequence[str]) -> list[tuple[Side, Side]]:
    """The (A, B) pairs to compare, as the module docstring says."""
    if not runs or len(runs) > 2:
        raise EngineUsageError(f"compare: give one or two run folders, found {len(runs)}")
    if len(setups) > 2:
        raise EngineUsageError(
            f"--setup: give one (the same setup in two runs) or two (A then B), found {len(setups)}"
        )
    first = runs[0]
    second = runs[-1]
    chosen = ((first, setups[0] if setups else None), (second, setups[-1] if setups else None))
    for run, name in chosen:
        if name is not None and not _results(run, name):
            raise EngineUsageError(
                f"--setup {name}: {run.label} has no such setup; it has {_names(run)}"
            )
    pairs: list[tuple[Side, Side]] = []
    if len(runs) == 1:
        if len(setups) == 1:
            raise EngineUsageError(
                "--setup: within one run give two setups (--setup A --setup B), or two runs"
            )
        by_dataset: dict[str, list[Mapping[str, Any]]] = {}
        for result in first.results:
            by_dataset.setdefault(result["dataset"]["name"], []).append(result)
        for results in by_dataset.values():
            names = [r["setup"]["name"] for r in results]
            if setups:
                if setups[0] in names and setups[1] in names:
                    a = results[names.index(setups[0])]
                    b = results[names.index(setups[1])]
                    pairs.append((Side(first, a), Side(first, b)))
            else:
                pairs += [(Side(first, results[0]), Side(first, r)) for r in results[1:]]
        if not pairs:
            raise EngineUsageError(
                f"{first.label}: nothing to compare: no benchmark has "
                + (f"both {setups[0]} and {setups[1]}" if setups else "two setups")
                + f" (it has {_names(first)}); give a second run folder or --setup A --setup B"
            )
        return pairs
    left = _results(first, setups[0] if setups else None)
    right = _results(second, setups[-1] if setups else None)
    for a in left:
        for b in right:
            same_dataset = a["dataset"]["name"] == b["dataset"]["name"]
            same_setup = bool(setups) or a["setup"]["name"] == b["setup"]["name"]
            if same_dataset and same_setup:
                pairs.append((Side(first, a), Side(second, b)))
    if not pairs and len(left) == 1 and len(right) == 1:
        pairs.append((Side(first, left[0]), Side(second, right[0])))  # one each: those two
    if not pairs:
        raise EngineUsageError(
            f"nothing to compare: no benchmark and setup are in both runs ({first.label}: "
            f"{_names(first)}; {second.label}: {_names(second)}); choose with --setup"
        )
    return pairs


def _left_out(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None, metric: str) -> str:
    for side, label in ((a, "A"), (b, "B")):
        if side is None:
            return f"not in {label}"
        if side.get("status") != "scored":
            return str(side.get("status"))
    track = metric.split("/", 1)[0]
    for side in (a, b):
        assert side is not None
        section = side.get(track)
        if track == "retrieval" and side.get("metrics") is None:
            return "not judged"  # nothing relevant to find: never averaged in
        if metric.endswith("/judge_score") and isinstance(section, Mapping):
            status = section.get("judge_status")
            if status in ("unparsed", "error"):
                return "unparsed grade" if status == "unparsed" else "failed grade"
    return "no value"


def compare_pair(
    a: Side,
    b: Side,
    *,
    seed: int,
    force: bool = False,
    metrics: Sequence[str] | None = None,
    permutation_resamples: int = PERMUTATION_RESAMPLES,
) -> dict[str, Any]:
    """One comparison, JSON-ready (see the module docstring)."""
    return compare_pairs(
        [(a, b, metrics)], seed=seed, force=force, permutation_resamples=permutation_resamples
    )[0]


Job = tuple[Side, Side, Sequence[str] | None]
"""Two results to compare, and the metrics to compare them on (None: all they share)."""


def compare_pairs(
    jobs: Sequence[Job],
    *,
    seed: int,
    force: bool = False,
    permutation_resamples: int = PERMUTATION_RESAMPLES,
) -> list[dict[str, Any]]:
    """`compare_pair` of each job, with the same seed: the statistics of all are drawn
    together (`compare_paired_many`), as the same sign patterns serve every metric and pair."""
    found = [_paired_rows(a, b, metrics, force) for a, b, metrics in jobs]
    cells = [(row, pairs) for _, rows in found for row, pairs in rows if pairs[0]]
    stats = compare_paired_many(
        [pairs for _, pairs in cells], seed=seed, permutation_resamples=permutation_resamples
    )
    for (row, _), figures in zip(cells, stats, strict=True):
        row.update(
            mean_a=figures.mean_a,
            mean_b=figures.mean_b,
            difference=figures.difference,
            ci95_low=figures.ci95_low,
            ci95_high=figures.ci95_high,
            p_value=figures.p_value,
            exact=figures.exact,
            smallest_p=figures.smallest_p,
            all_equal=figures.all_equal,
            detectable=figures.detectable,
            questions_needed=figures.questions_needed,
        )
    done = []
    for head, rows in found:
        comparison = {
            **head,
            "seed": seed,
            "confidence": CONFIDENCE,
            "permutation_resamples": permutation_resamples,
            "metrics": [row for row, _ in rows],
        }
        a, b = side_labels(comparison)
        for row in comparison["metrics"]:
            row["lower_is_better"] = lower_is_better(row["metric"])
            row["verdict"] = verdict(row, a, b, CONFIDENCE)
        done.append(comparison)
    return done


Pairs = tuple[list[float], list[float]]
"""The values of A and of B, question by question, of the questions both have a value."""


def _paired_rows(
    a: Side, b: Side, metrics: Sequence[str] | None, force: bool
) -> tuple[dict[str, Any], list[tuple[dict[str, Any], Pairs]]]:
    """A comparison's head, and each metric's row with the values both scored."""
    differs, compared = differences(a.result, b.result)
    if differs and not force:
        raise EngineUsageError(
            f"cannot compare {_label(a)} with {_label(b)}: their comparability keys differ "
            f"({'; '.join(differs)}), so they did not measure the same questions the same way; "
            "add --force to compare them anyway"
        )
    entries_a = {str(q["id"]): q for q in a.result.get("per_query", ())}
    entries_b = {str(q["id"]): q for q in b.result.get("per_query", ())}
    values_a = a.run.values(a.result)
    values_b = b.run.values(b.result)
    names = [m for m in metric_names(a.result) if m in set(metric_names(b.result))]
    if metrics:
        unknown = [m for m in metrics if m not in names]
        if unknown:
            raise EngineUsageError(
                f"--metric {unknown[0]}: not a metric both results have; they have "
                f"{', '.join(names) or 'none in common'}"
            )
        names = list(metrics)
    ids = list(entries_a) + [i for i in entries_b if i not in entries_a]
    found_a = [values_a.get(qid, {}) for qid in ids]
    found_b = [values_b.get(qid, {}) for qid in ids]
    pairs: dict[str, Pairs] = {}
    left_out: dict[str, Counter[str]] = {}
    for metric in names:  # a metric asked for twice is counted once, shown twice
        if metric in pairs:
            continue
        xs: list[Any] = [va.get(metric) for va in found_a]  # comprehensions: 40,000 a report
        ys: list[Any] = [vb.get(metric) for vb in found_b]
        both = [x is not None and y is not None for x, y in zip(xs, ys, strict=True)]
        pairs[metric] = (
            [float(x) for x, kept in zip(xs, both, strict=True) if kept],
            [float(y) for y, kept in zip(ys, both, strict=True) if kept],
        )
        left_out[metric] = Counter(
            _left_out(entries_a.get(qid), entries_b.get(qid), metric)
            for qid, kept in zip(ids, both, strict=True)
            if not kept and _applies(metric, entries_a.get(qid), entries_b.get(qid))
        )
    rows = [
        (
            {"metric": m, "n": len(pairs[m][0]), "left_out": dict(sorted(left_out[m].items()))},
            pairs[m],
        )
        for m in names
    ]
    head = {
        "a": a.describe(),
        "b": b.describe(),
        "comparable": not differs,
        "differs": differs,
        "compared_settings": compared,
        "varied": varied_settings([a.result["setup"], b.result["setup"]]),
    }
    return head, rows


def _applies(metric: str, a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> bool:
    """Whether a question counts in the metric at all: no_answer_accuracy only for an
    unanswerable question, has_answer_* and false_refusal_rate only for the others."""
    name = metric.split("/", 1)[-1]
    track = metric.split("/", 1)[0]
    for side in (a, b):
        section = side.get(track) if side else None
        if isinstance(section, Mapping) and "unanswerable" in section:
            unanswerable = bool(section.get("unanswerable"))
            if name == "no_answer_accuracy":
                return unanswerable
            if name.startswith("has_answer_") or name == "false_refusal_rate":
                return not unanswerable
    return True


def _label(side: Side) -> str:
    result = side.result
    return f"{result['dataset']['name']} / {result['setup']['name']} ({side.run.label})"


def compare_runs(
    runs: Sequence[RunData],
    setups: Sequence[str] = (),
    *,
    seed: int | None = None,
    force: bool = False,
    metrics: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """Every comparison `benchmark compare` makes (the first run's seed by default)."""
    chosen = runs[0].seed if seed is None else seed
    jobs = [(a, b, metrics) for a, b in pair_results(runs, setups)]
    return compare_pairs(jobs, seed=chosen, force=force)
