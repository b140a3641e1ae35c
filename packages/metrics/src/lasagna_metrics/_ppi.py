"""Prediction-powered inference (PPI++) for a mean: a judge's grades on every answer,
corrected by a few human labels, with a confidence interval honest about the judge's bias.

Angelopoulos, Bates, Fannjiang, Jordan and Zrnic, "Prediction-powered inference" (Science,
2023); Angelopoulos, Duchi and Zrnic, "PPI++: Efficient prediction-powered inference"
(arXiv 2311.01453). The estimate and interval are those of ppi-python's `ppi_mean_ci` and
`ppi_mean_pointestimate` (one dimension, no weights, `lam` power-tuned and clipped to
[0, 1] by default), in the standard library; tests/judge check them against ppi-python.

With n labelled items (human label Y, judge's grade Yhat) and N unlabelled ones (judge's
grade Yhat_u only):

    estimate = mean(lam * Yhat_u) + mean(Y - lam * Yhat)
    interval = estimate -/+ z * sqrt(std(lam * Yhat_u)^2 / N + std(Y - lam * Yhat)^2 / n)

(population standard deviations). lam = 1 is plain PPI, lam = 0 the labels alone. Tuned,
lam = cov(Y, Yhat) / ((1 + n / N) * var(Yhat and Yhat_u together)), clipped to [0, 1]: the
more the judge tracks the humans, the more its grades count. Where the judge's grades do
not vary at all (ppi-python divides by zero there), lam is 0: the grades carry nothing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

from lasagna_metrics._errors import MetricsError


@dataclass(frozen=True, slots=True)
class PPIEstimate:
    """A prediction-powered mean, its interval, and what it took."""

    mean: float
    low: float
    high: float
    lam: float
    """The weight of the judge's grades (1: plain PPI; 0: the labels alone)."""
    labelled: int
    unlabelled: int
    confidence: float
    judge_mean: float
    """The judge's raw mean over every item, labelled or not."""
    labels_mean: float
    labels_low: float
    labels_high: float
    """The classical estimate from the labels alone, and its interval."""
    equivalent_labels: float | None
    """How many labels the classical estimate would need for an interval as narrow as this
    one (None when the interval has no width)."""


def _numbers(values: Sequence[float], what: str) -> list[float]:
    if isinstance(values, str | bytes) or not isinstance(values, Sequence):
        raise MetricsError(f"{what}: expected a list of numbers, found {type(values).__name__}")
    out = []
    for i, value in enumerate(values):
        if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
            raise MetricsError(f"{what}[{i}]: expected a number, found {value!r}")
        out.append(float(value))
    return out


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def _std(values: Sequence[float]) -> float:
    center = _mean(values)
    return math.sqrt(math.fsum((v - center) ** 2 for v in values) / len(values))


def _tuned_lam(labels: list[float], graded: list[float], unlabelled: list[float]) -> float:
    n, big_n = len(labels), len(unlabelled)
    label_center, graded_center = _mean(labels), _mean(graded)
    covariance = (
        2
        * math.fsum(
            (y - label_center) * (g - graded_center) for y, g in zip(labels, graded, strict=True)
        )
    ) / n
    pooled = graded + unlabelled
    center = _mean(pooled)
    variance = math.fsum((v - center) ** 2 for v in pooled) / (len(pooled) - 1)
    if variance == 0:
        return 0.0
    return min(1.0, max(0.0, covariance / (2 * (1 + n / big_n) * variance)))


def ppi_mean(
    labels: Sequence[float],
    graded: Sequence[float],
    unlabelled: Sequence[float],
    *,
    confidence: float = 0.95,
    lam: float | None = None,
) -> PPIEstimate:
    """The prediction-powered mean of the human labels' quantity.

    `labels` and `graded` are aligned: the human value and the judge's grade of each
    labelled item; `unlabelled` are the judge's grades of the items no human labelled.
    `lam` None tunes it (PPI++); give 1 for plain PPI. Raises MetricsError on bad input.
    """
    y = _numbers(labels, "labels")
    yhat = _numbers(graded, "graded")
    yhat_u = _numbers(unlabelled, "unlabelled")
    if len(y) != len(yhat):
        raise MetricsError(
            f"ppi_mean needs a grade for every label, found {len(y)} labels and {len(yhat)} grades"
        )
    if len(y) < 2 or not yhat_u:
        raise MetricsError(
            f"ppi_mean needs at least 2 labelled and 1 unlabelled item, found {len(y)} and "
            f"{len(yhat_u)}; label a sample of the answers, not all or none of them"
        )
    if isinstance(confidence, bool) or not 0.0 < confidence < 1.0:
        raise MetricsError(f"confidence: expected a number between 0 and 1, found {confidence!r}")
    if lam is None:
        lam = _tuned_lam(y, yhat, yhat_u)
    elif isinstance(lam, bool) or not isinstance(lam, int | float) or math.isnan(lam):
        raise MetricsError(f"lam: expected a number, found {lam!r}")
    n, big_n = len(y), len(yhat_u)
    imputed = [lam * g for g in yhat_u]
    rectifier = [a - lam * g for a, g in zip(y, yhat, strict=True)]
    estimate = _mean(imputed) + _mean(rectifier)
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    half = z * math.sqrt(_std(imputed) ** 2 / big_n + _std(rectifier) ** 2 / n)
    labels_half = z * _std(y) / math.sqrt(n)
    labels_mean = _mean(y)
    return PPIEstimate(
        mean=estimate,
        low=estimate - half,
        high=estimate + half,
        lam=float(lam),
        labelled=n,
        unlabelled=big_n,
        confidence=confidence,
        judge_mean=_mean(yhat + yhat_u),
        labels_mean=labels_mean,
        labels_low=labels_mean - labels_half,
        labels_high=labels_mean + labels_half,
        equivalent_labels=n * (labels_half / half) ** 2 if half > 0 else None,
    )
