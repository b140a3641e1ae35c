"""The claim diagnostics of a result (`--diagnostics`): RAGChecker's metrics summarised
like every metric (mean and 95% bootstrap interval over the diagnosed answers; a question
whose metric is None, an unparsed or failed check, is missing, never 0), the calls counted,
and the report's "retriever vs generator" table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

#: The diagnosis table's groups, RAGChecker's: which part of the pipeline each metric blames.
GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("overall", ("precision", "recall", "f1")),
    ("retriever", ("claim_recall", "context_precision")),
    (
        "generator",
        (
            "context_utilization",
            "noise_sensitivity_in_relevant",
            "noise_sensitivity_in_irrelevant",
            "hallucination",
            "self_knowledge",
            "faithfulness",
            "answer_relevance",
        ),
    ),
)
#: Beside RAGChecker's: RAGAS's answer relevance, judged for answers without a reference.
NO_REFERENCE_METRICS = ("answer_relevance",)
#: Where a lower value is better (the report says so beside them).
LOWER_IS_BETTER = frozenset(
    ("noise_sensitivity_in_relevant", "noise_sensitivity_in_irrelevant", "hallucination")
)


def diagnosed(section: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """An answer section's diagnosis, if it has one."""
    found = section.get("diagnostics") if isinstance(section, Mapping) else None
    return found if isinstance(found, Mapping) else None


def diagnostics_metrics(
    sections: Sequence[Mapping[str, Any]],
    seed: int,
    summaries: Callable[[Mapping[str, Sequence[float | None]], int], dict[str, Any]],
) -> dict[str, Any] | None:
    """results.json's `metrics.diagnostics`: one summary per metric, and `calls` (made,
    unparsed, error, and the claims cut to the judge's bounds) over the diagnosed answers;
    None when none was diagnosed."""
    from lasagna_metrics import CLAIM_METRICS

    found = [d for s in sections if (d := diagnosed(s)) is not None]
    if not found:
        return None
    names = list(CLAIM_METRICS)
    names += [n for n in NO_REFERENCE_METRICS if any(n in d["metrics"] for d in found)]
    # An answer with a reference has no answer_relevance: not a missing value, not counted.
    columns = {
        name: [
            d["metrics"].get(name) for d in found if name in CLAIM_METRICS or name in d["metrics"]
        ]
        for name in names
    }
    metrics: dict[str, Any] = summaries(columns, seed)
    metrics["calls"] = {
        "answers": len(found),
        "made": sum(int(d.get("calls") or 0) for d in found),
        "unparsed": sum(int(d.get("unparsed") or 0) for d in found),
        "error": sum(int(d.get("errors") or 0) for d in found),
        "claims_cut": sum(int(d.get("claims_cut") or 0) for d in found),
    }
    return metrics


def query_diagnostics(section: Mapping[str, Any] | None) -> dict[str, float | None] | None:
    """A per-query entry's `diagnostics`: {metric: value} (None: could not be computed)."""
    found = diagnosed(section)
    return dict(found["metrics"]) if found is not None else None


def call_facts(section: Mapping[str, Any]) -> dict[str, Any] | None:
    """What a completed entry keeps of a record's diagnosis: its calls and tokens (priced
    like the grade), not its claims."""
    found = diagnosed(section)
    if found is None:
        return None
    keys = ("model", "calls", "unparsed", "errors", "input_tokens", "output_tokens")
    return {key: found.get(key) for key in keys}


def diagnosis_table(result: Mapping[str, Any]) -> dict[str, Any] | None:
    """The report's "diagnosis: retriever vs generator" rows of one result: group, metric,
    mean and interval; None without diagnostics."""
    metrics = result.get("metrics", {}).get("diagnostics")
    if not isinstance(metrics, Mapping):
        return None
    rows = []
    for group, names in GROUPS:
        for name in names:
            one = metrics.get(name)
            if isinstance(one, Mapping):
                rows.append(
                    {
                        "group": group,
                        "metric": name,
                        "lower_is_better": name in LOWER_IS_BETTER,
                        **{k: one.get(k) for k in ("mean", "ci95_low", "ci95_high", "count")},
                    }
                )
    return {"rows": rows, "calls": dict(metrics.get("calls") or {})}
