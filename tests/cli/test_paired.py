"""The paired statistics of `benchmark compare`: one sign-flip test gives both the p-value
and the interval, so the two never disagree.

- the p-value is SciPy's `permutation_test` (permutation_type="samples") with the same seed,
  to the last digit, exact or drawn;
- the interval is the set of shifts delta that SciPy's same test, run on d - delta with the
  same seed, does not reject at 5%: checked at its ends, against SciPy;
- hypothesis: across small n (every sign pattern), ties, zeros, every difference equal,
  and larger n (drawn patterns), an interval that excludes 0 always has p < 0.05 and one
  that includes it p >= 0.05; too few questions give no interval at all;
- its coverage of a known mean, on skewed data, is near 95%.
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from lasagna_cli.engine.reports._paired import (
    compare_paired,
    compare_paired_many,
    fewest_questions,
    sign_flip_test,
)

# A fixed example: per-question F1 of two setups on 40 questions (ties, zeros and ones, as
# real scores have), and a small one that is tested exactly (2^10 sign patterns).
A = [0.0, 1.0, 0.5, 0.25, 1.0, 0.0, 0.8, 0.6, 1.0, 0.4] * 4
B = [0.2, 1.0, 0.75, 0.25, 0.5, 1.0, 0.9, 0.6, 1.0, 0.7] * 4
B = [b if i % 7 else min(1.0, b + 0.3) for i, b in enumerate(B)]
ALPHA = 0.05


def reference_p(d: np.ndarray, seed: int, resamples: int) -> float:
    found = stats.permutation_test(
        (d,),
        np.mean,
        permutation_type="samples",
        n_resamples=resamples,
        alternative="two-sided",
        rng=np.random.default_rng(seed),
        vectorized=True,
    )
    return float(found.pvalue)


@pytest.mark.parametrize("n", [10, 40])
@pytest.mark.parametrize("seed", [0, 42, 2024])
def test_the_p_value_is_scipys_with_the_same_seed(n: int, seed: int) -> None:
    d = np.asarray(B[:n]) - np.asarray(A[:n])
    _, _, p, exact = sign_flip_test(d, resamples=9999, seed=seed)
    assert exact == (n == 10)  # 2^10 patterns <= 9999: enumerated; 2^40: drawn
    assert p == pytest.approx(reference_p(d, seed, 9999), abs=1e-9)


@pytest.mark.parametrize(("n", "resamples"), [(8, 9999), (13, 9999), (25, 1999), (40, 9999)])
@pytest.mark.parametrize("seed", [0, 7])
def test_the_interval_is_every_shift_scipys_test_does_not_reject(
    n: int, resamples: int, seed: int
) -> None:
    """Just inside each end, SciPy's test of d - delta (the same sign patterns: the same
    seed) gives p >= 0.05; just outside, p < 0.05."""
    d = np.asarray(B[:n]) - np.asarray(A[:n])
    low, high, p, _ = sign_flip_test(d, resamples=resamples, seed=seed)
    assert low < d.mean() < high
    step = 1e-7  # far below the gap between two subset means of these scores
    for inside in (low + step, high - step, d.mean()):
        assert reference_p(d - inside, seed, resamples) >= ALPHA, inside
    for outside in (low - step, high + step):
        assert reference_p(d - outside, seed, resamples) < ALPHA, outside
    assert (p < ALPHA) == (low > 0 or high < 0)


def test_blocks_draw_the_same_stream_as_one_call() -> None:
    """Thousands of questions are drawn in blocks of patterns; the figures do not change
    (SciPy draws everything at once)."""
    rng = np.random.default_rng(5)
    d = rng.integers(0, 2, 3001) - rng.integers(0, 2, 3001).astype(np.float64)
    low, _, p, _ = sign_flip_test(d, resamples=1999, seed=9)
    assert p == pytest.approx(reference_p(d, 9, 1999), abs=1e-12)
    assert reference_p(d - (low - 1e-6), 9, 1999) < ALPHA <= reference_p(d - low, 9, 1999)


def test_the_issue_case_an_interval_without_0_beside_p_0_0625_cannot_happen() -> None:
    """Four MRR differences: no test at 5% is possible (the smallest p is 2/16), so there
    is no interval, where a bootstrap interval said [0.026, 0.278]."""
    found = compare_paired([0.5, 0.25, 1.0, 0.2], [1.0, 0.333, 1.0, 0.5], seed=42)
    assert found.p_value == 0.25 and found.smallest_p == 0.125
    assert found.ci95_low is None and found.ci95_high is None
    assert fewest_questions() == 6  # 2 / 2^6 = 0.031 is the first below 0.05


def test_identical_setups_give_p_1_and_the_interval_0_0() -> None:
    found = compare_paired(A, A, seed=42)
    assert (found.difference, found.p_value) == (0.0, 1.0)
    assert (found.ci95_low, found.ci95_high) == (0.0, 0.0)
    assert found.detectable is None and found.questions_needed is None  # never "0.000"
    small = compare_paired(A[:7], A[:7], seed=1)  # exact test
    assert small.exact and small.p_value == 1.0 and small.all_equal


def test_every_difference_equal_is_an_interval_of_one_point() -> None:
    few = compare_paired([0.0] * 3, [0.1] * 3, seed=1)
    assert few.all_equal and few.ci95_low is None and few.p_value == 0.25
    assert few.detectable is None and few.questions_needed == 6
    enough = compare_paired([0.2] * 8, [0.3] * 8, seed=1)
    assert enough.ci95_low == enough.ci95_high == enough.difference
    assert enough.p_value == 2 / 2**8
    drawn = compare_paired([0.2] * 80, [0.1] * 80, seed=1)
    assert drawn.ci95_low == drawn.ci95_high == drawn.difference < 0
    assert drawn.p_value == 2 / 10_000 == drawn.smallest_p


def test_a_clear_difference_is_found_and_the_sign_is_b_minus_a() -> None:
    better = [a + 0.2 for a in A]
    found = compare_paired(A, better, seed=42)
    assert found.difference == pytest.approx(0.2)
    assert 0.0 < found.ci95_low <= found.ci95_high  # type: ignore[operator]
    assert found.p_value < 0.001
    assert compare_paired(better, A, seed=42).difference == pytest.approx(-0.2)


def test_the_same_seed_gives_the_same_figures() -> None:
    assert compare_paired(A, B, seed=7) == compare_paired(A, B, seed=7)
    assert compare_paired(A, B, seed=7) != compare_paired(A, B, seed=8)


def test_unpaired_input_is_refused() -> None:
    with pytest.raises(ValueError, match="paired"):
        compare_paired([1.0, 0.0], [1.0], seed=0)


def test_power_is_the_normal_planning_formula_and_agrees_with_statsmodels() -> None:
    found = compare_paired(A, B, seed=1)
    d = np.asarray(B) - np.asarray(A)
    sd = float(np.std(d, ddof=1))
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    assert found.detectable == pytest.approx(z * sd / np.sqrt(len(d)), rel=1e-12)
    assert found.questions_needed == int(np.ceil((z * sd / found.difference) ** 2))
    power = pytest.importorskip("statsmodels.stats.power")
    theirs = power.NormalIndPower().solve_power(
        effect_size=found.difference / sd, alpha=0.05, power=0.8, ratio=0
    )
    assert abs(found.questions_needed - theirs) <= 1  # theirs also counts the other tail
    # Nine questions detect only large differences; five can detect nothing at all.
    nine = compare_paired(A[:9], B[:9], seed=1)
    assert nine.detectable is not None and found.detectable is not None
    assert nine.detectable > found.detectable
    assert compare_paired(A[:5], B[:5], seed=1).detectable is None
    # A difference this large would need 2 questions by the formula; no test rejects below 6.
    assert compare_paired([0.0, 0.1] * 5, [1.0, 0.9] * 5, seed=1).questions_needed == 6


def test_comparisons_drawn_together_equal_each_drawn_alone() -> None:
    """Samples of one length share their sign patterns (one matrix product serves them
    all); each still equals the comparison made alone and SciPy's p-value, a pair that
    scores alike (no draw) and one given twice (drawn once) included."""
    rng = np.random.default_rng(11)
    n = 2500
    f1 = [rng.choice([0.0, 0.25, 0.4, 0.5, 2 / 3, 1.0], n) for _ in range(3)]
    em = [rng.integers(0, 2, n).astype(np.float64) for _ in range(2)]
    samples = [(f1[0], f1[1]), (f1[0], f1[2]), (em[0], em[1]), (A, B)]
    samples += [(f1[2], f1[2]), (f1[0], f1[1])]
    together = compare_paired_many(samples, seed=3, permutation_resamples=1999)
    for (a, b), found in zip(samples, together, strict=True):
        alone = compare_paired(a, b, seed=3, permutation_resamples=1999)
        assert asdict(found) == pytest.approx(asdict(alone), abs=1e-12)
        d = np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)
        assert found.p_value == pytest.approx(reference_p(d, 3, 1999), abs=1e-9)


def test_the_interval_covers_a_known_mean_about_95_times_in_100() -> None:
    """Skewed differences (a metric's gain is often 0, sometimes large): 400 samples of 30
    questions; the interval holds the true mean in 95% of them, give or take chance."""
    rng = np.random.default_rng(2024)
    values = np.array([-0.5, 0.0, 0.0, 0.0, 0.25, 1.0])
    truth = float(values.mean())
    held = 0
    for i in range(400):
        d = rng.choice(values, 30)
        found = compare_paired(np.zeros(30), d, seed=i, permutation_resamples=999)
        assert found.ci95_low is not None and found.ci95_high is not None
        held += found.ci95_low <= truth <= found.ci95_high
    assert 0.92 <= held / 400 <= 0.98, held


# Score differences as real metrics give them: ties, zeros, a few distinct values.
DIFFERENCES = st.sampled_from([0.0, 0.0, 1.0, -1.0, 0.5, -0.25, 0.2, 1 / 3, -2 / 3, 0.1])


def _agrees(d: list[float], resamples: int, seed: int) -> None:
    found = compare_paired([0.0] * len(d), d, seed=seed, permutation_resamples=resamples)
    if found.smallest_p >= ALPHA:  # too few questions: no test, no interval
        assert found.ci95_low is None and found.ci95_high is None
        assert found.p_value >= ALPHA
        return
    low, high = found.ci95_low, found.ci95_high
    assert low is not None and high is not None
    assert low <= high
    assert low - 1e-12 <= found.difference <= high + 1e-12
    excludes_zero = low > 0 or high < 0
    assert excludes_zero == (found.p_value < ALPHA), (low, high, found.p_value)
    if found.all_equal:
        assert low == high == found.difference


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(d=st.lists(DIFFERENCES, min_size=1, max_size=12), seed=st.integers(0, 2**32 - 1))
def test_small_n_an_interval_without_0_always_has_p_below_the_level(
    d: list[float], seed: int
) -> None:
    """Every sign pattern enumerated (n <= 12)."""
    _agrees(d, 9999, seed)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    d=st.lists(DIFFERENCES, min_size=14, max_size=300)
    | st.lists(st.just(0.25), min_size=14, max_size=40),
    seed=st.integers(0, 2**32 - 1),
)
def test_drawn_patterns_an_interval_without_0_always_has_p_below_the_level(
    d: list[float], seed: int
) -> None:
    """Random sign patterns (2^n > resamples): the interval and p from the same draws."""
    _agrees(d, 999, seed)


# Values whose sums are exact in binary: SciPy's p-value then sees every tie as one, as
# ours does (a sum like 0.5 + 1/3 - 2/3 - 1/6 is 0, or 1e-17 to SciPy, which then counts
# it on one side only; ours counts a subset mean within 1e-12 n max|d| of 0 as 0).
DYADIC = st.sampled_from([0.0, 0.0, 1.0, -1.0, 0.5, -0.25, 0.75, 0.125])


@settings(max_examples=40, deadline=None)
@given(d=st.lists(DYADIC, min_size=6, max_size=11), seed=st.integers(0, 2**32 - 1))
def test_small_n_an_interval_without_0_agrees_with_scipys_own_p(d: list[float], seed: int) -> None:
    """The same agreement with SciPy's p-value, computed apart from ours."""
    found = compare_paired([0.0] * len(d), d, seed=seed)
    assert found.ci95_low is not None and found.ci95_high is not None
    theirs = reference_p(np.asarray(d), seed, 9999)
    assert found.p_value == pytest.approx(theirs, abs=1e-12)
    assert (found.ci95_low > 0 or found.ci95_high < 0) == (theirs < ALPHA)
