"""Krippendorff's alpha against the `krippendorff` package (a test-group reference) at each
level of measurement, with missing ratings, and Krippendorff's own worked example."""

from __future__ import annotations

import math
import random

import pytest

from lasagna_metrics import MetricsError, krippendorff_alpha

# krippendorff (and numpy with it) is in the test group; a member's tests alone skip this.
krippendorff = pytest.importorskip("krippendorff")
import numpy as np  # noqa: E402

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: four
# observers, twelve units, missing values; nominal alpha 0.743, interval 0.849.
EXAMPLE = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


def reference(ratings: list[list[float | None]], level: str) -> float:
    data = np.array([[np.nan if v is None else v for v in row] for row in ratings], dtype=float)
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))


def test_krippendorffs_worked_example() -> None:
    assert krippendorff_alpha(EXAMPLE, "nominal") == pytest.approx(0.743, abs=5e-4)
    assert krippendorff_alpha(EXAMPLE, "interval") == pytest.approx(0.849, abs=5e-4)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_equal_to_the_krippendorff_package(level: str, seed: int) -> None:
    rng = random.Random(seed)
    truth = [rng.choice([0, 1, 2, 3, 4]) for _ in range(60)]
    ratings: list[list[float | None]] = []
    for _ in range(3):  # three judges: mostly the truth, sometimes off, sometimes unparsed
        row: list[float | None] = []
        for t in truth:
            roll = rng.random()
            row.append(None if roll < 0.1 else t if roll < 0.7 else rng.choice([0, 1, 2, 3, 4]))
        ratings.append(row)
    assert krippendorff_alpha(ratings, level) == pytest.approx(reference(ratings, level), abs=1e-9)  # type: ignore[arg-type]
    assert krippendorff_alpha(EXAMPLE, level) == pytest.approx(reference(EXAMPLE, level), abs=1e-9)  # type: ignore[arg-type]


def test_binary_grades_agree_at_every_level() -> None:
    ratings = [[0, 4, 4, 0, 4, None], [0, 4, 0, 0, 4, 4], [4, 4, 0, 0, 4, 4]]
    values = {level: krippendorff_alpha(ratings, level) for level in ("nominal", "interval")}  # type: ignore[arg-type]
    assert values["nominal"] == pytest.approx(values["interval"])
    assert values["nominal"] == pytest.approx(reference(ratings, "nominal"), abs=1e-9)


def test_undefined_when_nothing_can_disagree() -> None:
    assert krippendorff_alpha([[4, 4, 4], [4, 4, None]]) is None  # one value only
    assert krippendorff_alpha([[4, None], [None, 0]]) is None  # no unit has a pair
    assert krippendorff_alpha([]) is None
    assert krippendorff_alpha([[0, 4], [0, 4]]) == 1.0
    assert krippendorff_alpha([[0, 4], [4, 0]]) is not None
    assert math.isfinite(krippendorff_alpha([[0, 4], [4, 0]]) or math.nan)


def test_bad_input_is_refused() -> None:
    with pytest.raises(MetricsError, match="same units"):
        krippendorff_alpha([[1, 2], [1]])
    with pytest.raises(MetricsError, match="level"):
        krippendorff_alpha([[1, 2], [1, 2]], "cardinal")  # type: ignore[arg-type]
    with pytest.raises(MetricsError, match="numbers or None"):
        krippendorff_alpha([[1, "2"], [1, 2]])  # type: ignore[list-item]
