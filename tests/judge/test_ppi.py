"""lasagna_metrics.ppi_mean equals ppi-python's ppi_mean_ci and ppi_mean_pointestimate
(PPI++ with lam tuned, and plain PPI with lam=1) to 1e-9, on random grades and on the
shapes a judge gives (0/1 verdicts, 0-4 scores)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lasagna_metrics import MetricsError, ppi_mean

# ppi-python (and numpy with it) is in the test group; a member's tests alone skip this.
ppi_py = pytest.importorskip("ppi_py")
import numpy as np  # noqa: E402

VERDICT = st.sampled_from([0.0, 1.0])
SCORE = st.sampled_from([0.0, 1.0, 2.0, 3.0, 4.0])
REAL = st.floats(-5, 5, allow_nan=False)


def _theirs(y: list[float], yhat: list[float], yhat_u: list[float], alpha: float, lam=None):
    arrays = np.array(y), np.array(yhat), np.array(yhat_u)
    if lam is None and np.var(np.concatenate(arrays[1:])) == 0:
        return None  # tuning lam divides by the grades' variance
    try:
        with np.errstate(all="raise"):
            low, high = ppi_py.ppi_mean_ci(*arrays, alpha=alpha, lam=lam)
    except FloatingPointError:  # a variance so small it underflows: ppi-python gives NaN
        return "degenerate"
    point = float((low[0] + high[0]) / 2)
    return point, float(low[0]), float(high[0])


@st.composite
def samples(draw: st.DrawFn, values: st.SearchStrategy[float]):
    n = draw(st.integers(2, 30))
    y = draw(st.lists(values, min_size=n, max_size=n))
    yhat = draw(st.lists(values, min_size=n, max_size=n))
    yhat_u = draw(st.lists(values, min_size=1, max_size=60))
    return y, yhat, yhat_u


@settings(max_examples=150, deadline=None)
@given(samples(VERDICT | SCORE | REAL), st.sampled_from([0.9, 0.95, 0.99]), st.booleans())
def test_equals_ppi_python(sample, confidence: float, plain: bool) -> None:
    y, yhat, yhat_u = sample
    lam = 1.0 if plain else None
    theirs = _theirs(y, yhat, yhat_u, 1 - confidence, lam)
    ours = ppi_mean(y, yhat, yhat_u, confidence=confidence, lam=lam)
    if theirs is None:  # the grades do not vary: ppi-python divides by zero, lasagna says lam 0
        assert ours.lam == 0.0
        return
    if theirs == "degenerate":  # e.g. grades 0 and 9e-104: lasagna's figures stay finite
        assert all(math.isfinite(v) for v in (ours.mean, ours.low, ours.high, ours.lam))
        return
    point, low, high = theirs
    assert ours.mean == pytest.approx(point, abs=1e-9)
    assert ours.low == pytest.approx(low, abs=1e-9)
    assert ours.high == pytest.approx(high, abs=1e-9)
    if not plain:
        tuned = ppi_py.ppi_mean_pointestimate(np.array(y), np.array(yhat), np.array(yhat_u))
        assert ours.mean == pytest.approx(float(np.asarray(tuned).ravel()[0]), abs=1e-9)


def test_a_biased_judge_is_corrected() -> None:
    # The judge calls every answer right; the humans found a third wrong.
    y = [1.0, 0.0, 1.0] * 10
    ours = ppi_mean(y, [1.0] * 30, [1.0] * 300)
    assert ours.judge_mean == 1.0
    assert ours.mean == pytest.approx(2 / 3)  # the labels' mean: the judge says nothing
    assert ours.lam == 0.0 and ours.labelled == 30 and ours.unlabelled == 300


def test_bad_input_is_refused() -> None:
    with pytest.raises(MetricsError, match="at least 2 labelled and 1 unlabelled"):
        ppi_mean([1.0, 0.0], [1.0, 0.0], [])
    with pytest.raises(MetricsError, match="a grade for every label"):
        ppi_mean([1.0, 0.0], [1.0], [1.0])
    with pytest.raises(MetricsError, match=r"graded\[1\]: expected a number"):
        ppi_mean([1.0, 0.0], [1.0, float("nan")], [1.0])
