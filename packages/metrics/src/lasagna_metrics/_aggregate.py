"""Aggregating per-item scores: a mean that owns up to missing values, and bootstrap
confidence intervals that are reproducible from their seed."""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import repeat, starmap
from operator import itemgetter, mul

from lasagna_metrics._errors import MetricsError


@dataclass(frozen=True, slots=True)
class Mean:
    """The mean of the values present, with how many were averaged and how many missing."""

    value: float | None
    """None when no value was present."""
    count: int
    missing: int


@dataclass(frozen=True, slots=True)
class ConfidenceInterval:
    """A percentile bootstrap interval and the settings that reproduce it."""

    low: float
    high: float
    confidence: float
    resamples: int
    seed: int


@dataclass(frozen=True, slots=True)
class Summary:
    """Mean, bootstrap interval and counts of one metric over many items."""

    mean: float | None
    low: float | None
    high: float | None
    count: int
    missing: int


def _present(values: Iterable[float | None]) -> tuple[list[float], int]:
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        raise MetricsError(
            f"values: expected an iterable of numbers (None for missing), found "
            f"{type(values).__name__}"
        )
    present: list[float] = []
    missing = 0
    for i, value in enumerate(values):
        if value is None:
            missing += 1
        elif isinstance(value, int | float) and math.isfinite(value):
            present.append(float(value))
        else:
            raise MetricsError(
                f"values[{i}]: expected a finite number or None, found {value!r}; "
                "record a missing score as None, never as NaN"
            )
    return present, missing


def mean(values: Iterable[float | None]) -> Mean:
    """Average the numbers, skipping None and counting it as missing.

    A failed or absent score must not be averaged in as 0: pass it as None and read
    `missing`. `value` is None when nothing was present. The sum is exact (`math.fsum`),
    so the result does not depend on the order of the values.
    """
    present, missing = _present(values)
    value = math.fsum(present) / len(present) if present else None
    return Mean(value=value, count=len(present), missing=missing)


def _check_settings(confidence: float, resamples: int, seed: int) -> None:
    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
        raise MetricsError(f"confidence: expected a number between 0 and 1, found {confidence!r}")
    if not 0.0 < confidence < 1.0:
        raise MetricsError(
            f"confidence: expected a number between 0 and 1 (e.g. 0.95), found {confidence!r}"
        )
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 1:
        raise MetricsError(
            f"resamples: expected a whole number >= 1 (e.g. 1000), found {resamples!r}"
        )
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise MetricsError(f"seed: expected a whole number, found {seed!r}")


def _quantile(ordered: list[float], q: float) -> float:
    # Linear interpolation between order statistics (numpy's default "linear" method).
    position = q * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    fraction = position - below
    return ordered[below] + (ordered[above] - ordered[below]) * fraction


def _bootstrap(
    present: list[float], confidence: float, resamples: int, seed: int
) -> ConfidenceInterval | None:
    return _bootstraps([present], confidence, resamples, seed)[0]


def _bootstraps(
    columns: list[list[float]], confidence: float, resamples: int, seed: int
) -> list[ConfidenceInterval | None]:
    """The interval of each column. Each resample draws its positions as
    `random.Random(seed).choices` would (`floor(random() * n)`, the same stream), once for
    all the columns of one length, and its mean is an exact sum (`math.fsum`)."""
    found: list[ConfidenceInterval | None] = [None] * len(columns)
    varying: dict[int, list[int]] = {}  # length -> the columns whose means vary
    for i, present in enumerate(columns):
        if present and min(present) == max(present):  # every resample has the same mean
            found[i] = ConfidenceInterval(present[0], present[0], confidence, resamples, seed)
        elif present:
            varying.setdefault(len(present), []).append(i)
    tail = (1.0 - confidence) / 2.0
    for n, chosen in varying.items():
        draw = random.Random(seed).random
        means: list[list[float]] = [[] for _ in chosen]
        for _ in range(resamples):
            # n >= 2 (one value never varies), so itemgetter gives a tuple of n values
            pick = itemgetter(*map(math.floor, map(mul, starmap(draw, repeat((), n)), repeat(n))))
            for column, out in zip(chosen, means, strict=True):
                out.append(math.fsum(pick(columns[column])) / n)
        for column, out in zip(chosen, means, strict=True):
            out.sort()
            # A mean of equal values can round one ulp outside them; keep the interval in
            # the data.
            lowest, highest = min(columns[column]), max(columns[column])
            found[column] = ConfidenceInterval(
                low=min(max(_quantile(out, tail), lowest), highest),
                high=min(max(_quantile(out, 1.0 - tail), lowest), highest),
                confidence=confidence,
                resamples=resamples,
                seed=seed,
            )
    return found


def bootstrap_ci(
    values: Iterable[float | None],
    *,
    confidence: float = 0.95,
    resamples: int = 1000,
    seed: int = 0,
) -> ConfidenceInterval | None:
    """Percentile bootstrap confidence interval of the mean, None when no value is present.

    Missing values (None) are left out, as in `mean`. Resampling uses `random.Random(seed)`,
    so the same values, settings and seed give the same interval on every run and machine.
    """
    _check_settings(confidence, resamples, seed)
    present, _ = _present(values)
    return _bootstrap(present, confidence, resamples, seed)


def summarize(
    values: Iterable[float | None],
    *,
    confidence: float = 0.95,
    resamples: int = 1000,
    seed: int = 0,
) -> Summary:
    """`mean` and `bootstrap_ci` in one pass over the values."""
    return summarize_many(
        {"values": values}, confidence=confidence, resamples=resamples, seed=seed
    )["values"]


def summarize_many(
    columns: Mapping[str, Iterable[float | None]],
    *,
    confidence: float = 0.95,
    resamples: int = 1000,
    seed: int = 0,
) -> dict[str, Summary]:
    """`summarize` of each column, the same figures as one call per column, faster: the
    columns with the same number of values present share each resample's positions."""
    _check_settings(confidence, resamples, seed)
    present: list[list[float]] = []
    missing: list[int] = []
    for values in columns.values():
        found, absent = _present(values)
        present.append(found)
        missing.append(absent)
    intervals = _bootstraps(present, confidence, resamples, seed)
    return {
        name: Summary(
            mean=math.fsum(values) / len(values) if values else None,
            low=interval.low if interval else None,
            high=interval.high if interval else None,
            count=len(values),
            missing=absent,
        )
        for name, values, absent, interval in zip(columns, present, missing, intervals, strict=True)
    }
