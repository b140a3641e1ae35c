"""Agreement between raters (judges): Krippendorff's alpha.

Alpha suits a jury of LLM judges: any number of raters, a missing rating allowed (a grade
that did not parse is missing, never a 0), and a level of measurement that matches the
rubric: "nominal" for labels, "ordinal" for ranked grades, "interval" for scores whose
differences mean something (0-4), "ratio" for scores with a true zero.

It is computed as Krippendorff (2011, "Computing Krippendorff's Alpha-Reliability") does,
from the coincidence matrix of the pairable values: alpha = 1 - D_o / D_e, the observed
over the expected disagreement. A unit rated by fewer than two raters has no pair and is
left out. 1 is perfect agreement, 0 the agreement of chance, below 0 systematic
disagreement.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Literal

from lasagna_metrics._errors import MetricsError

Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS: tuple[Level, ...] = ("nominal", "ordinal", "interval", "ratio")


def krippendorff_alpha(
    ratings: Sequence[Sequence[float | None]], level: Level = "interval"
) -> float | None:
    """Krippendorff's alpha of `ratings`: one row per rater, one column per unit (the same
    units in the same order in every row), None where a rater gave no rating.

    None when alpha is undefined: fewer than two pairable values, or every pairable value
    the same (there is no disagreement to measure, by chance or otherwise)."""
    if level not in LEVELS:
        raise MetricsError(f"level {level!r}: expected one of {', '.join(LEVELS)}")
    widths = {len(row) for row in ratings}
    if len(widths) > 1:
        raise MetricsError(
            f"expected every rater to rate the same units, found rows of {sorted(widths)} "
            "ratings; give None where a rater has no rating"
        )
    units = widths.pop() if widths else 0
    coincidences: dict[tuple[float, float], float] = {}
    for unit in range(units):
        values = [float(v) for row in ratings if (v := row[unit]) is not None and _rated(v)]
        m = len(values)
        if m < 2:
            continue
        for i, c in enumerate(values):
            for j, k in enumerate(values):
                if i != j:
                    coincidences[(c, k)] = coincidences.get((c, k), 0.0) + 1 / (m - 1)
    totals: dict[float, float] = {}
    for (c, _), weight in coincidences.items():
        totals[c] = totals.get(c, 0.0) + weight
    n = sum(totals.values())
    if len(totals) < 2:
        return None
    delta = _distance(level, totals)
    observed = math.fsum(w * delta(c, k) for (c, k), w in coincidences.items())
    expected = math.fsum(totals[c] * totals[k] * delta(c, k) for c in totals for k in totals)
    return 1 - (n - 1) * observed / expected


def _rated(value: float | None) -> bool:
    if value is None:
        return False
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise MetricsError(f"expected ratings as numbers or None, found {value!r}")
    return not math.isnan(value)


def _distance(level: Level, totals: dict[float, float]) -> Callable[[float, float], float]:
    """The squared difference function δ²(c, k) of the level."""
    if level == "nominal":
        return lambda c, k: 0.0 if c == k else 1.0
    if level == "interval":
        return lambda c, k: (c - k) ** 2
    if level == "ratio":
        return lambda c, k: 0.0 if c == k else ((c - k) / (c + k)) ** 2
    ranked = sorted(totals)
    rank = {value: i for i, value in enumerate(ranked)}
    cumulative = [0.0]
    for value in ranked:
        cumulative.append(cumulative[-1] + totals[value])

    def ordinal(c: float, k: float) -> float:
        low, high = sorted((rank[c], rank[k]))
        between = cumulative[high + 1] - cumulative[low]  # n_low + ... + n_high
        return (between - (totals[c] + totals[k]) / 2) ** 2

    return ordinal
