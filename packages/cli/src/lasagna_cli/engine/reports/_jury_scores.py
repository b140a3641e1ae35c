"""A jury's figures in results.json (`benchmark run --judge A --judge B`): beside the jury's
`judge_score` (the mean of each answer's parsed grades, `lasagna_judge.Verdict`), each
judge's own `judge_score_<i>` (i: its place among the --judge flags, from 1) summarised
like every metric, and `jury`: the judges, the aggregate rule and Krippendorff's alpha
between them (`lasagna_judge.jury_agreement`, the figure `judge grade`'s jury gives)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any


def _members(grade: Mapping[str, Any] | None) -> list[Mapping[str, Any]] | None:
    found = grade.get("jury") if isinstance(grade, Mapping) else None
    return [g for g in found if isinstance(g, Mapping)] if isinstance(found, list) else None


def _score(grade: Mapping[str, Any]) -> float | None:
    score = grade.get("score")
    return float(score) if grade.get("status") == "ok" and score is not None else None


def jury_metrics(
    grades: Sequence[Mapping[str, Any]],
    seed: int,
    summary: Callable[[Sequence[float | None], int], dict[str, Any]],
) -> dict[str, Any]:
    """The jury's entries of a track's metrics; none for a lone judge's grades."""
    from lasagna_judge import GRADE_FIELDS, JURY_AGGREGATE, Grade, Verdict, jury_agreement

    juries = [m for g in grades if (m := _members(g))]
    if not juries:
        return {}
    size = max(len(m) for m in juries)
    juries = [m for m in juries if len(m) == size]
    found: dict[str, Any] = {
        f"judge_score_{j + 1}": summary([_score(m[j]) for m in juries], seed) for j in range(size)
    }

    def grade(g: Mapping[str, Any]) -> Grade:
        fields: dict[str, Any] = {k: g.get(k) for k in GRADE_FIELDS}
        return Grade(**fields)

    verdicts = [Verdict(tuple(grade(g) for g in m)) for m in juries]
    agreement = jury_agreement(verdicts)
    first = juries[0]
    found["jury"] = {
        "aggregate": JURY_AGGREGATE,
        "judges": [
            {"model": g.get("model"), **({"endpoint": g["endpoint"]} if g.get("endpoint") else {})}
            for g in first
        ],
        "agreement": {
            "measure": agreement.measure,
            "alpha": agreement.alpha,
            "answers": agreement.answers,
        },
    }
    return found


def jury_scores(grade: Mapping[str, Any] | None) -> list[dict[str, Any]] | None:
    """A per-query entry's `jury`: each judge's model, score and status."""
    members = _members(grade)
    if members is None:
        return None
    return [{k: g.get(k) for k in ("model", "score", "status")} for g in members]


def jury_values(section: Mapping[str, Any]) -> dict[str, float | None]:
    """One answer's `judge_score_<i>` values (None: that judge's grade failed or did not
    parse), from its per-query entry."""
    members = section.get("jury")
    if not isinstance(members, list):
        return {}
    return {f"judge_score_{i + 1}": _score(m) for i, m in enumerate(members)}
