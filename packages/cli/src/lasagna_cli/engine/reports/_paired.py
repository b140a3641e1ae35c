"""Paired statistics of two setups scored on the same questions: the mean difference, its
seeded bootstrap interval and a sign-flip (paired permutation) test p-value.

Both are the textbook procedures as SciPy implements them, drawn from the same stream of
`numpy.random.default_rng(seed)`, so that with the same seed they equal
`scipy.stats.bootstrap((d,), np.mean, method="percentile", rng=rng)` and
`scipy.stats.permutation_test((d,), np.mean, permutation_type="samples", rng=rng)` to the
last digit (tests/cli/test_paired.py checks both):

- the interval: `resamples` resamples of the differences with replacement (one row of
  `rng.integers(0, n, n)` each), the mean of each, and the percentiles of those means at
  (1 - confidence) / 2 and 1 - (1 - confidence) / 2 (linear interpolation);
- the p-value, two-sided: the sign of each difference flipped at random (one
  `rng.permuted` of the pair (d, -d) per question and resample), the mean of each;
  p = 2 min(P(null <= observed), P(null >= observed)), counting the observed statistic once
  ((count + 1) / (resamples + 1)), with SciPy's relative tolerance for ties, capped at 1.
  When 2^n sign patterns are no more than `resamples`, every pattern is enumerated (an exact
  test, no randomness).

Identical scores give differences of 0: the interval is [0, 0] and p = 1.

The power of the comparison, from the observed spread of the differences (a normal
approximation, two-sided at alpha 0.05 with 80% power, the usual planning figures):
- `detectable`: the smallest true difference these n questions would detect,
  (z_0.975 + z_0.8) * sd / sqrt(n);
- `questions_needed`: how many questions the observed difference would need to be
  detected, ceil(((z_0.975 + z_0.8) * sd / |difference|)^2); None when it is 0.
(sd is the differences' sample standard deviation; with sd 0 nothing varies: both 0.)
Work is done in blocks of resamples: the random stream is consumed in the same order, so
the figures do not depend on the block size, and memory stays bounded at 10,000s of
questions. Comparisons of the same length and seed draw the same resamples, so they are
done together (`compare_paired_many`): one matrix product per block serves them all.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

BOOTSTRAP_RESAMPLES = 1000
PERMUTATION_RESAMPLES = 9999
CONFIDENCE = 0.95
_BLOCK_CELLS = 100_000  # resamples x questions per block: small enough to stay in cache


@dataclass(frozen=True, slots=True)
class PairedComparison:
    """B - A over the questions both scored."""

    n: int
    mean_a: float
    mean_b: float
    difference: float
    ci95_low: float
    ci95_high: float
    p_value: float
    exact: bool
    """True when the p-value enumerates every sign pattern (n small)."""
    detectable: float
    """The smallest difference n questions detect (80% power, alpha 0.05)."""
    questions_needed: int | None
    """Questions the observed difference needs to be detected; None when it is 0."""


#: z_0.975 + z_0.8: a two-sided test at alpha 0.05 with 80% power.
_POWER_Z = 1.959963984540054 + 0.8416212335729143


def power(differences: np.ndarray, difference: float) -> tuple[float, int | None]:
    """(detectable difference, questions the observed one needs): see the module docstring."""
    n = differences.shape[-1]
    sd = float(differences.std(ddof=1)) if n > 1 else 0.0
    detectable = _POWER_Z * sd / math.sqrt(n)
    if difference == 0:
        return detectable, None
    return detectable, max(2, math.ceil((_POWER_Z * sd / abs(difference)) ** 2))


def _rows(n: int, even: bool = False) -> int:
    rows = max(2, _BLOCK_CELLS // max(n, 1))
    return rows + rows % 2 if even else rows


def _kept(bits: np.random.BitGenerator, rows: int, n: int) -> np.ndarray:
    """Which differences `rng.permuted` leaves unflipped in `rows` resamples (1.0 or 0.0).
    Shuffling the pair (d, -d) draws one 32-bit number (PCG64 hands out the low then the
    high half of each 64-bit word) and swaps when its lowest bit is 0: the bit says "kept"."""
    cells = rows * n
    raw = bits.random_raw((cells + 1) // 2)
    # As little-endian 32-bit numbers, the halves of each word in draw order.
    halves = raw.astype("<u8", copy=False).view("<u4")[:cells]
    kept = np.empty((rows, n))
    np.bitwise_and(halves, 1, out=kept.reshape(-1), casting="unsafe")  # no uint32 copy
    return kept


def bootstrap_intervals(
    differences: np.ndarray, *, resamples: int, seed: int, confidence: float = CONFIDENCE
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap intervals of the mean of each row of `differences` (k x n), all
    from the same resamples: scipy's `bootstrap` on each row with the same seed. A
    resample's mean is its count of each question times the differences, so one matrix
    product serves every row."""
    k, n = differences.shape
    rng = np.random.default_rng(seed)
    means = np.empty((resamples, k))
    step = _rows(n)
    for start in range(0, resamples, step):
        rows = min(step, resamples - start)
        index = rng.integers(0, n, (rows, n)) + np.arange(rows)[:, None] * n
        counts = np.bincount(index.ravel(), minlength=rows * n).reshape(rows, n)
        means[start : start + rows] = (counts.astype(np.float64) @ differences.T) / n
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail], axis=0)
    return low, high


def sign_flip_p_values(
    differences: np.ndarray, *, resamples: int, seed: int
) -> tuple[np.ndarray, bool]:
    """Two-sided p-values of the mean of each row of `differences` (k x n) under random
    sign flips, all from the same flips, and whether they are exact: scipy's
    `permutation_test` (permutation_type="samples") on each row with the same seed."""
    n = differences.shape[-1]
    observed = differences.mean(axis=-1)
    exact = 2**n <= resamples if n < 63 else False
    if exact:
        total = 2**n
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=n))).reshape(total, n)
        null = np.stack([(row * signs).mean(axis=-1) for row in differences], axis=-1)
    else:
        total = resamples
        bits = np.random.default_rng(seed).bit_generator
        step = _rows(n, even=True)  # an even count of 32-bit draws (two per raw word)
        sums = differences.sum(axis=-1)
        # kept - flipped = 2 kept - all: each resample's sum of signed differences
        null = np.concatenate(
            [
                (2 * (_kept(bits, min(step, resamples - start), n) @ differences.T) - sums) / n
                for start in range(0, resamples, step)
            ]
        )
    adjustment = 0 if exact else 1
    gamma = np.abs(np.finfo(np.float64).eps * 100 * observed)
    less = np.count_nonzero(null <= observed + gamma, axis=0) + adjustment
    greater = np.count_nonzero(null >= observed - gamma, axis=0) + adjustment
    p = np.minimum(less, greater) / (total + adjustment) * 2
    return np.clip(p, 0.0, 1.0), exact


def bootstrap_interval(
    differences: np.ndarray, *, resamples: int, seed: int, confidence: float = CONFIDENCE
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of `differences` (scipy's `bootstrap`)."""
    low, high = bootstrap_intervals(
        differences[None, :], resamples=resamples, seed=seed, confidence=confidence
    )
    return float(low[0]), float(high[0])


def sign_flip_p_value(differences: np.ndarray, *, resamples: int, seed: int) -> tuple[float, bool]:
    """Two-sided p-value of the mean of `differences` under random sign flips, and whether
    it is exact (scipy's `permutation_test` with permutation_type="samples")."""
    p, exact = sign_flip_p_values(differences[None, :], resamples=resamples, seed=seed)
    return float(p[0]), exact


def _statistics(
    differences: np.ndarray, seed: int, bootstrap_resamples: int, permutation_resamples: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """Each row's interval bounds and p-value. A row of zeros needs no resample (its
    interval is [0, 0], its p-value 1), and rows that are equal share their figures: with 4
    setups, 5 of 9 rows are often zeros (a retrieval metric of two setups that retrieve
    alike) and the draws are the report's largest cost."""
    k, n = differences.shape
    lows, highs, ps = np.zeros(k), np.zeros(k), np.ones(k)
    exact = 2**n <= permutation_resamples if n < 63 else False
    live = np.flatnonzero(differences.any(axis=1))
    if live.size:
        rows, inverse = np.unique(differences[live], axis=0, return_inverse=True)
        low, high = bootstrap_intervals(rows, resamples=bootstrap_resamples, seed=seed)
        p, exact = sign_flip_p_values(rows, resamples=permutation_resamples, seed=seed)
        inverse = inverse.reshape(-1)
        lows[live], highs[live], ps[live] = low[inverse], high[inverse], p[inverse]
    return lows, highs, ps, exact


def compare_paired_many(
    samples: Sequence[tuple[Sequence[float], Sequence[float]]],
    *,
    seed: int,
    bootstrap_resamples: int = BOOTSTRAP_RESAMPLES,
    permutation_resamples: int = PERMUTATION_RESAMPLES,
) -> list[PairedComparison]:
    """`compare_paired` of each (a, b), with the same seed: samples of the same length
    share one set of resamples, the one each would draw alone, drawn once."""
    found: dict[int, PairedComparison] = {}
    by_length: dict[int, list[int]] = {}
    for i, (a, b) in enumerate(samples):
        if len(a) != len(b) or len(a) == 0:
            raise ValueError(f"expected two non-empty paired samples, found {len(a)} and {len(b)}")
        by_length.setdefault(len(a), []).append(i)
    for indices in by_length.values():
        x = np.asarray([samples[i][0] for i in indices], dtype=np.float64)
        y = np.asarray([samples[i][1] for i in indices], dtype=np.float64)
        differences = y - x
        lows, highs, ps, exact = _statistics(
            differences, seed, bootstrap_resamples, permutation_resamples
        )
        for row, i in enumerate(indices):
            a, b = samples[i]
            difference = math.fsum(differences[row].tolist()) / len(a)
            detectable, needed = power(differences[row], difference)
            found[i] = PairedComparison(
                n=len(a),
                mean_a=math.fsum(a) / len(a),
                mean_b=math.fsum(b) / len(b),
                difference=difference,
                ci95_low=float(lows[row]),
                ci95_high=float(highs[row]),
                p_value=float(ps[row]),
                exact=exact,
                detectable=detectable,
                questions_needed=needed,
            )
    return [found[i] for i in range(len(samples))]


def compare_paired(
    a: Sequence[float],
    b: Sequence[float],
    *,
    seed: int,
    bootstrap_resamples: int = BOOTSTRAP_RESAMPLES,
    permutation_resamples: int = PERMUTATION_RESAMPLES,
) -> PairedComparison:
    """B - A on paired scores (same length, no missing value: pair them first)."""
    return compare_paired_many(
        [(a, b)],
        seed=seed,
        bootstrap_resamples=bootstrap_resamples,
        permutation_resamples=permutation_resamples,
    )[0]
