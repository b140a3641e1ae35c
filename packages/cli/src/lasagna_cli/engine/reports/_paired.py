"""Paired statistics of two setups scored on the same questions: the mean difference
d = B - A, one sign-flip (paired permutation) test of it, and the interval that inverts that
same test, so the interval and the p-value never disagree.

The test (Fisher 1935; Pitman 1937): under "B and A score alike", each question's
difference is as likely to be +d_i as -d_i, so the observed mean is compared with the means
of the 2^n sign patterns. Two-sided p = 2 min(P(null <= observed), P(null >= observed)),
capped at 1. When 2^n is no more than `resamples` every pattern is enumerated (exact, no
randomness); else `resamples` random patterns are drawn from `numpy.random.default_rng(seed)`
and the observed pattern is counted once ((count + 1) / (resamples + 1), Phipson and Smyth
2010). The draws are those of `scipy.stats.permutation_test((d,), np.mean,
permutation_type="samples", rng=rng)`, so the p-value is SciPy's to the last digit
(tests/cli/test_paired.py).

The interval (test inversion: Lehmann and Romano, Testing Statistical Hypotheses, 3rd ed.,
3.5): every shift delta for which the same test, on the same sign patterns, does not reject
"the differences are symmetric about delta" at alpha = 1 - confidence, i.e. whose p-value
is at least alpha. For a pattern that flips the set F of questions, the shifted statistic
of the pattern is at least the observed one exactly when the mean of d over F is at most
delta, so p(delta) is a step function of delta with steps at those subset means, and the
interval's ends are two of them: the k-th smallest and the k-th largest, with k the fewest
patterns a tail must hold for p >= alpha. These are Hartigan's (1969) "typical values" of
the mean; Romano (1990) shows the test, hence the interval, is asymptotically valid for any
distribution of differences with a finite variance, symmetric or not. By construction:

- an interval that excludes 0 comes with p < alpha, and one that includes 0 with p >= alpha
  (p is p(0), computed from the same counts);
- the mean difference lies inside it;
- with n questions the smallest possible p is 2 / 2^n (exact) or 2 / (resamples + 1): when
  that is not below alpha (n <= 5 at 95%) no test is possible and the interval is unbounded
  (None, None). Otherwise identical scores give the interval [0, 0] and p = 1, and every
  difference equal to c gives [c, c].

A subset mean within 1e-12 x n x max|d| of 0 counts as 0 (a tie: the observed statistic
and the pattern's are equal), where SciPy compares each pattern's statistic with the
observed one within 100 x machine epsilon of the latter: the two differ only when rounding
hides an exact tie from SciPy (an observed mean that is 0 computed as 1e-17), and ours is
then the exact-arithmetic answer.

The power of the comparison, a planning figure from the observed spread of the differences
(a normal approximation, two-sided at alpha 0.05 with 80% power, the usual figures):
- `detectable`: the smallest true difference these n questions would detect,
  (z_0.975 + z_0.8) * sd / sqrt(n); None when nothing can be detected (too few questions
  for any test, or no spread: every difference equal);
- `questions_needed`: how many questions the observed difference would need to be
  detected, ceil(((z_0.975 + z_0.8) * sd / |difference|)^2), and never fewer than the
  smallest number of questions whose test can reject at all (6 at 95%); None when the
  difference is 0.
(sd is the differences' sample standard deviation.)

Work is done in blocks of sign patterns: the random stream is consumed in the same order, so
the figures do not depend on the block size, and memory stays bounded at 100,000s of
questions. Comparisons of the same length and seed draw the same patterns, so they are done
together (`compare_paired_many`): one matrix product per block serves them all.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

PERMUTATION_RESAMPLES = 9999
CONFIDENCE = 0.95
_BLOCK_CELLS = 100_000  # patterns x questions per block: small enough to stay in cache
_TIE = 1e-12  # a subset mean within _TIE * n * max|d| of 0 is 0


@dataclass(frozen=True, slots=True)
class PairedComparison:
    """B - A over the questions both scored."""

    n: int
    mean_a: float
    mean_b: float
    difference: float
    ci95_low: float | None
    """The interval's low end; None when it is unbounded (too few questions for a test)."""
    ci95_high: float | None
    p_value: float
    exact: bool
    """True when the p-value enumerates every sign pattern (n small)."""
    smallest_p: float
    """The smallest p-value these n questions can give (2 / 2^n when exact)."""
    all_equal: bool
    """Every question's difference is the same."""
    detectable: float | None
    """The smallest difference n questions detect (80% power, alpha 0.05); None: none."""
    questions_needed: int | None
    """Questions the observed difference needs to be detected; None when it is 0."""


#: z_0.975 + z_0.8: a two-sided test at alpha 0.05 with 80% power.
_POWER_Z = 1.959963984540054 + 0.8416212335729143


def _p_of(count: int, total: int) -> float:
    """The two-sided p-value of a smaller tail holding `count` of `total` patterns: the one
    expression both the p-value and the interval's ends are decided by."""
    return min(1.0, count / total * 2)


def level(confidence: float = CONFIDENCE) -> float:
    """alpha = 1 - confidence, as written (0.05, where 1 - 0.95 is 0.050000000000000044)."""
    return round(1 - confidence, 12)


def fewest_questions(confidence: float = CONFIDENCE) -> int:
    """The fewest questions whose exact sign-flip test can give p < 1 - confidence."""
    n = 1
    while _p_of(1, 2**n) >= level(confidence):
        n += 1
    return n


def power(differences: np.ndarray, difference: float) -> tuple[float | None, int | None]:
    """(detectable difference, questions the observed one needs): see the module docstring."""
    n = differences.shape[-1]
    spread = n > 1 and bool(np.any(differences != differences[0]))
    sd = float(differences.std(ddof=1)) if spread else 0.0
    fewest = fewest_questions()
    detectable = _POWER_Z * sd / math.sqrt(n) if sd > 0 and n >= fewest else None
    if difference == 0:
        return detectable, None
    return detectable, max(fewest, math.ceil((_POWER_Z * sd / abs(difference)) ** 2))


def _rows(n: int) -> int:
    rows = max(2, _BLOCK_CELLS // max(n, 1))
    return rows + rows % 2  # an even count of 32-bit draws (two per raw word)


def _kept(bits: np.random.BitGenerator, rows: int, n: int) -> np.ndarray:
    """Which differences `rng.permuted` leaves unflipped in `rows` random patterns (1.0 or
    0.0). Shuffling the pair (d, -d) draws one 32-bit number (PCG64 hands out the low then
    the high half of each 64-bit word) and swaps when its lowest bit is 0: the bit says
    "kept"."""
    cells = rows * n
    raw = bits.random_raw((cells + 1) // 2)
    # As little-endian 32-bit numbers, the halves of each word in draw order.
    halves = raw.astype("<u8", copy=False).view("<u4")[:cells]
    kept = np.empty((rows, n))
    np.bitwise_and(halves, 1, out=kept.reshape(-1), casting="unsafe")  # no uint32 copy
    return kept


class _Means:
    """The subset means of sign patterns, block by block: one matrix product of a block's
    "kept" matrix with the differences and a row of ones gives each pattern's kept sum of
    each row and how many it keeps; the flipped sum is the row's sum less the kept one."""

    def __init__(self, differences: np.ndarray) -> None:
        n = differences.shape[1]
        self.n = n
        self.augmented = np.vstack([differences, np.ones((1, n))]).T.copy()  # n x (k + 1)
        self.sums = differences.sum(axis=1)
        self.tie = _TIE * n * np.abs(differences).max(axis=1)
        self.blocks: list[np.ndarray] = []
        self.unflipped = 0  # patterns that flip nothing: their statistic is the observed one

    def add(self, kept: np.ndarray) -> None:
        product = kept @ self.augmented  # patterns x (k + 1)
        sizes = self.n - product[:, -1]
        flipped = self.sums - product[:, :-1]
        flipped[np.abs(flipped) <= self.tie] = 0.0
        some = sizes > 0.5
        if not some.all():
            self.unflipped += int(np.count_nonzero(~some))
            flipped, sizes = flipped[some], sizes[some]
        self.blocks.append((flipped / sizes[:, None]).T)

    def sorted(self) -> np.ndarray:
        means = np.concatenate(self.blocks, axis=1)
        means.sort(axis=1)
        return means


def _patterns(
    differences: np.ndarray, resamples: int, seed: int
) -> tuple[np.ndarray, int, int, bool]:
    """Each row's subset means over the sign patterns, sorted (k x patterns; the patterns
    that flip nothing left out), how many patterns count as equal to the observed one
    (`base`), their total, and whether they are every pattern (exact)."""
    n = differences.shape[-1]
    exact = n < 63 and 2**n <= resamples
    found = _Means(differences)
    if exact:
        codes = np.arange(2**n, dtype=np.int64)
        found.add(((codes[:, None] >> np.arange(n)) & 1).astype(np.float64))
        return found.sorted(), found.unflipped, 2**n, True
    bits = np.random.default_rng(seed).bit_generator
    step = _rows(n)
    for start in range(0, resamples, step):
        found.add(_kept(bits, min(step, resamples - start), n))
    # The observed pattern is counted once beside the draws.
    return found.sorted(), 1 + found.unflipped, resamples + 1, False


def sign_flip_tests(
    differences: np.ndarray, *, resamples: int, seed: int, confidence: float = CONFIDENCE
) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """Each row of `differences` (k x n): its interval's low and high ends (-inf and inf when
    unbounded) and its two-sided p-value, all from the same sign patterns, and whether they
    are exact (see the module docstring)."""
    means, base, total, exact = _patterns(differences, resamples, seed)
    patterns = means.shape[1]
    # The patterns whose statistic is at least (at most) the observed one, at delta = 0.
    greater = base + np.count_nonzero(means <= 0.0, axis=1)
    less = base + np.count_nonzero(means >= 0.0, axis=1)
    p = np.array([_p_of(int(count), total) for count in np.minimum(less, greater)])
    alpha = level(confidence)
    need = math.ceil(alpha * total / 2)  # the fewest patterns a tail holds for p >= alpha
    while need > 0 and _p_of(need - 1, total) >= alpha:
        need -= 1
    while _p_of(need, total) < alpha:
        need += 1
    k = need - base  # the subset means a tail must hold beyond the observed pattern
    if k <= 0:
        low = np.full(len(means), -np.inf)
        high = np.full(len(means), np.inf)
    else:
        low, high = means[:, k - 1].copy(), means[:, patterns - k].copy()
    return low, high, p, exact


def sign_flip_test(
    differences: np.ndarray, *, resamples: int, seed: int, confidence: float = CONFIDENCE
) -> tuple[float, float, float, bool]:
    """`sign_flip_tests` of one sample: (low, high, p-value, exact)."""
    low, high, p, exact = sign_flip_tests(
        differences[None, :], resamples=resamples, seed=seed, confidence=confidence
    )
    return float(low[0]), float(high[0]), float(p[0]), exact


def _statistics(
    differences: np.ndarray, seed: int, resamples: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """Each row's interval ends and p-value. A row of zeros needs no pattern (its interval
    is [0, 0], its p-value 1), and rows that are equal share their figures: with 4 setups,
    5 of 9 rows are often zeros (a retrieval metric of two setups that retrieve alike)."""
    k, n = differences.shape
    lows, highs, ps = np.zeros(k), np.zeros(k), np.ones(k)
    exact = n < 63 and 2**n <= resamples
    live = np.flatnonzero(differences.any(axis=1))
    if live.size:
        rows, inverse = np.unique(differences[live], axis=0, return_inverse=True)
        low, high, p, exact = sign_flip_tests(rows, resamples=resamples, seed=seed)
        inverse = inverse.reshape(-1)
        lows[live], highs[live], ps[live] = low[inverse], high[inverse], p[inverse]
    return lows, highs, ps, exact


def _bound(value: float) -> float | None:
    return None if math.isinf(value) else value


def compare_paired_many(
    samples: Sequence[tuple[Sequence[float], Sequence[float]]],
    *,
    seed: int,
    permutation_resamples: int = PERMUTATION_RESAMPLES,
) -> list[PairedComparison]:
    """`compare_paired` of each (a, b), with the same seed: samples of the same length
    share one set of sign patterns, the one each would draw alone, drawn once."""
    found: dict[int, PairedComparison] = {}
    by_length: dict[int, list[int]] = {}
    for i, (a, b) in enumerate(samples):
        if len(a) != len(b) or len(a) == 0:
            raise ValueError(f"expected two non-empty paired samples, found {len(a)} and {len(b)}")
        by_length.setdefault(len(a), []).append(i)
    for n, indices in by_length.items():
        x = np.asarray([samples[i][0] for i in indices], dtype=np.float64)
        y = np.asarray([samples[i][1] for i in indices], dtype=np.float64)
        differences = y - x
        lows, highs, ps, exact = _statistics(differences, seed, permutation_resamples)
        smallest = _p_of(1, 2**n) if exact else _p_of(1, permutation_resamples + 1)
        for row, i in enumerate(indices):
            a, b = samples[i]
            difference = math.fsum(differences[row].tolist()) / n
            detectable, needed = power(differences[row], difference)
            low, high = _bound(float(lows[row])), _bound(float(highs[row]))
            if smallest >= level():  # no test possible: every shift is kept, zeros too
                low = high = None
            all_equal = bool(np.all(differences[row] == differences[row][0]))
            if all_equal and low is not None:  # [c, c], c the mean, free of rounding
                low = high = difference
            found[i] = PairedComparison(
                n=n,
                mean_a=math.fsum(a) / n,
                mean_b=math.fsum(b) / n,
                difference=difference,
                ci95_low=low,
                ci95_high=high,
                p_value=float(ps[row]),
                exact=exact,
                smallest_p=smallest,
                all_equal=all_equal,
                detectable=detectable,
                questions_needed=needed,
            )
    return [found[i] for i in range(len(samples))]


def compare_paired(
    a: Sequence[float],
    b: Sequence[float],
    *,
    seed: int,
    permutation_resamples: int = PERMUTATION_RESAMPLES,
) -> PairedComparison:
    """B - A on paired scores (same length, no missing value: pair them first)."""
    return compare_paired_many([(a, b)], seed=seed, permutation_resamples=permutation_resamples)[0]
