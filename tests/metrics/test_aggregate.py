"""mean (with missing values counted) and the seeded bootstrap interval."""

import math
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lasagna_metrics import MetricsError, bootstrap_ci, mean, summarize

scores = st.lists(st.one_of(st.none(), st.floats(0, 1), st.integers(0, 4)), max_size=60)


def test_mean_counts_missing_values_instead_of_averaging_them_as_zero() -> None:
    result = mean([1.0, None, 0.5, None, 0.0])
    assert result.value == 0.5
    assert result.count == 3
    assert result.missing == 2


def test_mean_of_nothing_present_is_none() -> None:
    assert mean([]).value is None
    assert mean([None, None]) == mean([None, None])
    assert (mean([None, None]).count, mean([None, None]).missing) == (0, 2)


@given(scores)
def test_mean_agrees_with_statistics(values: list[float | None]) -> None:
    present = [v for v in values if v is not None]
    result = mean(values)
    assert result.count == len(present)
    assert result.missing == len(values) - len(present)
    if present:
        assert result.value == pytest.approx(statistics.fmean(present))
    # Exact summation: the order of the values does not matter.
    assert mean(list(reversed(values))) == result


@settings(max_examples=50, deadline=None)
@given(scores, st.integers(0, 2**32))
def test_bootstrap_interval_is_seeded_and_brackets_the_data(
    values: list[float | None], seed: int
) -> None:
    present = [v for v in values if v is not None]
    interval = bootstrap_ci(values, resamples=200, seed=seed)
    if not present:
        assert interval is None
        return
    assert interval is not None
    assert min(present) <= interval.low <= interval.high <= max(present)
    assert bootstrap_ci(values, resamples=200, seed=seed) == interval  # reproducible


def test_bootstrap_interval_holds_the_mean_and_narrows_with_more_data() -> None:
    small = [1.0, 0.0] * 10
    large = [1.0, 0.0] * 1000
    a = bootstrap_ci(small, seed=7)
    b = bootstrap_ci(large, seed=7)
    assert a is not None and b is not None
    assert a.low < 0.5 < a.high
    assert b.low < 0.5 < b.high
    assert (b.high - b.low) < (a.high - a.low) / 5
    # For a proportion the percentile interval is close to the normal one.
    half_width = 1.96 * math.sqrt(0.25 / len(large))
    assert b.high - b.low == pytest.approx(2 * half_width, rel=0.15)


def test_seed_and_confidence_change_the_interval() -> None:
    values = [0.1, 0.9, 0.4, 0.7, 0.3, 1.0, 0.0, 0.6]
    a = bootstrap_ci(values, seed=1)
    b = bootstrap_ci(values, seed=2)
    wide = bootstrap_ci(values, seed=1, confidence=0.99)
    assert a is not None and b is not None and wide is not None
    assert (a.low, a.high) != (b.low, b.high)
    assert wide.low <= a.low and a.high <= wide.high
    assert (a.confidence, a.resamples, a.seed) == (0.95, 1000, 1)


def test_constant_values_give_a_point_interval() -> None:
    interval = bootstrap_ci([0.25, None, 0.25])
    assert interval is not None
    assert (interval.low, interval.high) == (0.25, 0.25)


def test_summarize_combines_mean_interval_and_counts() -> None:
    values = [1.0, 0.0, None, 1.0, 1.0]
    summary = summarize(values, seed=3)
    interval = bootstrap_ci(values, seed=3)
    assert interval is not None
    assert summary.mean == 0.75
    assert (summary.low, summary.high) == (interval.low, interval.high)
    assert (summary.count, summary.missing) == (4, 1)
    empty = summarize([None])
    assert (empty.mean, empty.low, empty.high, empty.count, empty.missing) == (
        None, None, None, 0, 1,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: mean([0.5, float("nan")]), r"values\[1\]: expected a finite number or None"),
        (lambda: mean(["0.5"]), r"values\[0\]"),
        (lambda: mean(0.5), "values: expected an iterable"),
        (lambda: bootstrap_ci([1.0], confidence=95), "confidence"),
        (lambda: bootstrap_ci([1.0], resamples=0), "resamples"),
        (lambda: bootstrap_ci([1.0], seed=1.5), "seed"),
    ],
)
def test_bad_input_is_a_metrics_error(call: object, message: str) -> None:
    with pytest.raises(MetricsError, match=message):
        call()  # type: ignore[operator]
