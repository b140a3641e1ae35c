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
Work is done in blocks of rows: the random stream is consumed in the same order, so the
figures do not depend on the block size, and memory stays bounded at 10,000s of questions.
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
_BLOCK_CELLS = 2_000_000  # rows x questions per block


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


def _rows_per_block(n: int) -> int:
    return max(1, _BLOCK_CELLS // max(n, 1))


def _flips(bits: np.random.BitGenerator, rows: int, n: int) -> np.ndarray:
    """Which signs `rng.permuted` would flip, without its per-slice loop: shuffling the pair
    (d, -d) draws one 32-bit number (PCG64 hands out the low then the high half of each
    64-bit word) and swaps when its lowest bit is 0."""
    cells = rows * n
    raw = bits.random_raw((cells + 1) // 2)
    low = np.empty(raw.size * 2, dtype=np.uint64)
    low[0::2] = raw & 1
    low[1::2] = (raw >> np.uint64(32)) & 1
    flips: np.ndarray = (low[:cells] == 0).reshape(rows, n)
    return flips


def bootstrap_interval(
    differences: np.ndarray, *, resamples: int, seed: int, confidence: float = CONFIDENCE
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of `differences` (scipy's `bootstrap`)."""
    n = differences.shape[-1]
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    step = _rows_per_block(n)
    for start in range(0, resamples, step):
        rows = min(step, resamples - start)
        index = rng.integers(0, n, (rows, n))
        means[start : start + rows] = differences[index].mean(axis=-1)
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return float(low), float(high)


def sign_flip_p_value(differences: np.ndarray, *, resamples: int, seed: int) -> tuple[float, bool]:
    """Two-sided p-value of the mean of `differences` under random sign flips, and whether
    it is exact (scipy's `permutation_test` with permutation_type="samples")."""
    n = differences.shape[-1]
    observed = differences.mean()
    exact = 2**n <= resamples if n < 63 else False
    nulls: list[np.ndarray] = []
    if exact:
        total = 2**n
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=n))).reshape(total, n)
        nulls.append((differences * signs).mean(axis=-1))
    else:
        total = resamples
        bits = np.random.default_rng(seed).bit_generator
        step = _rows_per_block(n)
        step += step % 2  # an even count of 32-bit draws per block (two per raw word)
        for start in range(0, resamples, step):
            rows = min(step, resamples - start)
            nulls.append(np.where(_flips(bits, rows, n), -differences, differences).mean(axis=-1))
    null = np.concatenate(nulls)
    adjustment = 0 if exact else 1
    gamma = abs(np.finfo(np.float64).eps * 100 * observed)
    less = (np.count_nonzero(null <= observed + gamma) + adjustment) / (total + adjustment)
    greater = (np.count_nonzero(null >= observed - gamma) + adjustment) / (total + adjustment)
    return float(min(max(min(less, greater) * 2, 0.0), 1.0)), exact


def compare_paired(
    a: Sequence[float],
    b: Sequence[float],
    *,
    seed: int,
    bootstrap_resamples: int = BOOTSTRAP_RESAMPLES,
    permutation_resamples: int = PERMUTATION_RESAMPLES,
) -> PairedComparison:
    """B - A on paired scores (same length, no missing value: pair them first)."""
    if len(a) != len(b) or not a:
        raise ValueError(f"expected two non-empty paired samples, found {len(a)} and {len(b)}")
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    differences = y - x
    low, high = bootstrap_interval(differences, resamples=bootstrap_resamples, seed=seed)
    p_value, exact = sign_flip_p_value(differences, resamples=permutation_resamples, seed=seed)
    mean_a = math.fsum(a) / len(a)
    mean_b = math.fsum(b) / len(b)
    difference = math.fsum(differences.tolist()) / len(a)
    detectable, needed = power(differences, difference)
    return PairedComparison(
        n=len(a),
        mean_a=mean_a,
        mean_b=mean_b,
        difference=difference,
        ci95_low=low,
        ci95_high=high,
        p_value=p_value,
        exact=exact,
        detectable=detectable,
        questions_needed=needed,
    )
