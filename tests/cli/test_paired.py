"""The paired statistics of `benchmark compare` against SciPy's reference implementations,
with the same seed: the bootstrap interval (scipy.stats.bootstrap, percentile method) and
the sign-flip p-value (scipy.stats.permutation_test, permutation_type="samples")."""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import pytest
from scipy import stats

from lasagna_cli.engine.reports._paired import (
    bootstrap_interval,
    compare_paired,
    compare_paired_many,
    sign_flip_p_value,
)

# A fixed example: per-question F1 of two setups on 40 questions (ties, zeros and ones, as
# real scores have), and a small one that is tested exactly (2^10 sign patterns).
A = [0.0, 1.0, 0.5, 0.25, 1.0, 0.0, 0.8, 0.6, 1.0, 0.4] * 4
B = [0.2, 1.0, 0.75, 0.25, 0.5, 1.0, 0.9, 0.6, 1.0, 0.7] * 4
B = [b if i % 7 else min(1.0, b + 0.3) for i, b in enumerate(B)]


def reference_interval(d: np.ndarray, seed: int, resamples: int) -> tuple[float, float]:
    found = stats.bootstrap(
        (d,),
        np.mean,
        method="percentile",
        n_resamples=resamples,
        confidence_level=0.95,
        rng=np.random.default_rng(seed),
        vectorized=True,
    )
    return float(found.confidence_interval.low), float(found.confidence_interval.high)


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
def test_equal_to_scipy_with_the_same_seed(n: int, seed: int) -> None:
    d = np.asarray(B[:n]) - np.asarray(A[:n])
    low, high = bootstrap_interval(d, resamples=1000, seed=seed)
    ref_low, ref_high = reference_interval(d, seed, 1000)
    assert low == pytest.approx(ref_low, abs=1e-9)
    assert high == pytest.approx(ref_high, abs=1e-9)
    p, exact = sign_flip_p_value(d, resamples=9999, seed=seed)
    assert exact == (n == 10)  # 2^10 patterns <= 9999: enumerated; 2^40: drawn
    assert p == pytest.approx(reference_p(d, seed, 9999), abs=1e-9)


def test_blocks_draw_the_same_stream_as_one_call() -> None:
    """Thousands of questions are resampled in blocks of rows; the figures do not change
    (SciPy draws everything at once)."""
    rng = np.random.default_rng(5)
    d = rng.integers(0, 2, 3001) - rng.integers(0, 2, 3001).astype(np.float64)
    assert bootstrap_interval(d, resamples=2000, seed=9) == pytest.approx(
        reference_interval(d, 9, 2000), abs=1e-12
    )
    assert sign_flip_p_value(d, resamples=1999, seed=9)[0] == pytest.approx(
        reference_p(d, 9, 1999), abs=1e-12
    )


def test_identical_setups_give_p_1_and_an_interval_around_0() -> None:
    found = compare_paired(A, A, seed=42)
    assert found.difference == 0.0
    assert found.p_value == 1.0
    assert found.ci95_low <= 0.0 <= found.ci95_high
    small = compare_paired(A[:5], A[:5], seed=1)  # exact test
    assert small.exact and small.p_value == 1.0


def test_a_clear_difference_is_found_and_the_sign_is_b_minus_a() -> None:
    better = [a + 0.2 for a in A]
    found = compare_paired(A, better, seed=42)
    assert found.difference == pytest.approx(0.2)
    assert 0.0 < found.ci95_low <= found.ci95_high
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
    # Nine questions detect only large differences; identical setups need no questions.
    assert compare_paired(A[:9], B[:9], seed=1).detectable > found.detectable
    same = compare_paired(A, A, seed=1)
    assert same.detectable == 0.0 and same.questions_needed is None


def test_comparisons_drawn_together_equal_scipy_one_by_one() -> None:
    """Samples of one length share their resamples (one matrix product serves them all);
    each still equals SciPy's bootstrap and permutation test on it alone, a pair that
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
        assert (found.ci95_low, found.ci95_high) == pytest.approx(
            reference_interval(d, 3, 1000), abs=1e-9
        )
        assert found.p_value == pytest.approx(reference_p(d, 3, 1999), abs=1e-9)
