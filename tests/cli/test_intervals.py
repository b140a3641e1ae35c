"""results.json's intervals (numpy, `engine/reports/_intervals`) equal lasagna-metrics'
own `summarize_many`, bit for bit, on every shape of column."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lasagna_metrics
from lasagna_cli.engine.reports import _intervals
from lasagna_cli.engine.reports._intervals import summarize_many

VALUES = st.one_of(
    st.sampled_from([0.0, 1.0]),  # a 0/1 metric: many resamples tie
    st.sampled_from([0.0, 0.25, 1 / 3, 0.5, 2 / 3, 1.0]),  # F1-like: ties, inexact sums
    st.floats(0.0, 1.0),
    st.floats(-1e6, 1e6),
    st.floats(1e-300, 1e-290),  # tiny: the slack's floor
)


def both(columns: dict[str, list[float | None]], **settings: object) -> None:
    mine = summarize_many(columns, **settings)  # type: ignore[arg-type]
    theirs = lasagna_metrics.summarize_many(columns, **settings)  # type: ignore[arg-type]
    assert mine == theirs


@settings(max_examples=150, deadline=None)
@given(
    columns=st.lists(
        st.lists(st.one_of(st.none(), VALUES), min_size=0, max_size=120), min_size=1, max_size=5
    ),
    resamples=st.integers(1, 300),
    seed=st.integers(0, 2**40),
    confidence=st.sampled_from([0.95, 0.9, 0.5]),
)
def test_the_same_intervals_as_lasagna_metrics(
    columns: list[list[float | None]], resamples: int, seed: int, confidence: float
) -> None:
    both({f"m{i}": c for i, c in enumerate(columns)}, confidence=confidence,
         resamples=resamples, seed=seed)  # fmt: skip


def test_a_run_sized_column_of_each_kind() -> None:
    import random

    draw = random.Random(3)
    n = 2000
    columns: dict[str, list[float | None]] = {
        "exact_match": [float(draw.random() < 0.7) for _ in range(n)],
        "almost_all_one": [1.0] * (n - 1) + [0.0],
        "mrr": [1 / draw.randint(1, 10) for _ in range(n)],
        "f1": [round(draw.random(), 2) for _ in range(n)],
        "with_missing": [None if i % 7 == 0 else draw.random() for i in range(n)],
        "constant": [0.5] * n,
        "empty": [None] * 3,
    }
    both(columns, confidence=0.95, resamples=1000, seed=0)
    found = summarize_many(columns, confidence=0.95, resamples=1000, seed=0)
    assert list(found) == list(columns)
    assert found["empty"].mean is None and found["empty"].missing == 3
    assert found["constant"].low == found["constant"].high == 0.5
    assert math.isclose(found["exact_match"].mean or 0, 0.7, abs_tol=0.03)


def test_the_same_intervals_when_the_draws_come_in_many_blocks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A large run's resamples are drawn a block at a time (memory stays a block's): blocks
    of 3 resamples, and of less than one, give the same figures."""
    draw = random.Random(5)
    columns: dict[str, list[float | None]] = {
        "f1": [round(draw.random(), 2) for _ in range(300)],
        "recall": [float(draw.random() < 0.4) for _ in range(300)],
    }
    for block in (3 * 300, 7):
        monkeypatch.setattr(_intervals, "_DRAWS", block)
        both(columns, confidence=0.95, resamples=200, seed=11)
