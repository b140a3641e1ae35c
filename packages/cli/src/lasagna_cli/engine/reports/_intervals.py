"""`summarize_many`: `lasagna_metrics.summarize_many`'s figures, bit for bit, with numpy.

lasagna-metrics draws each resample's positions one `random()` at a time and sums it with
`math.fsum`, in pure Python (it imports nothing else): 0.4 s for 5 varying metrics of
2,000 questions, most of a run's end once its last answer is in. Here numpy's
MT19937, set to the very state of `random.Random(seed)`, draws the same doubles (both
build a double from two 32-bit outputs the same way), so the same positions; numpy sums
each resample (within `_slack` of the exact sum), and the few resamples that could stand
at the quantiles' order statistics are summed again with `math.fsum`: the same order
statistics exactly, so the same intervals (`tests/cli/test_intervals.py` holds them to
lasagna-metrics' own). 0.04 s for the same work.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from lasagna_metrics import Summary, mean

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

_ROWS = 1 << 21  # positions drawn at a time: 16 MB of doubles


def summarize_many(
    columns: Mapping[str, Sequence[float | None]],
    *,
    confidence: float,
    resamples: int,
    seed: int,
) -> dict[str, Summary]:
    """The mean, bootstrap interval and counts of each column, as
    `lasagna_metrics.summarize_many` computes them."""
    found: dict[str, Summary] = {}
    varying: dict[int, list[tuple[str, list[float]]]] = {}  # length -> its varying columns
    for name, values in columns.items():
        average = mean(values)  # checks the values as lasagna-metrics does
        present = [float(v) for v in values if v is not None]
        if present and min(present) != max(present):
            varying.setdefault(len(present), []).append((name, present))
        interval = present[0] if present else None  # one value, or none, never varies
        found[name] = Summary(average.value, interval, interval, average.count, average.missing)
    tail = (1.0 - confidence) / 2.0
    for n, group in varying.items():
        positions = _positions(n, resamples, seed)
        for name, present in group:
            resampled = _Resampled(_sums(positions, present), positions, present)
            low, high = resampled.quantile(tail), resampled.quantile(1.0 - tail)
            lowest, highest = min(present), max(present)
            found[name] = Summary(
                found[name].mean,
                min(max(low, lowest), highest),
                min(max(high, lowest), highest),
                found[name].count,
                found[name].missing,
            )
    return {name: found[name] for name in columns}


def _positions(n: int, resamples: int, seed: int) -> npt.NDArray[np.int32]:
    """Each resample's positions as `random.Random(seed)` draws them: floor(random() * n)."""
    import numpy as np

    state = random.Random(seed).getstate()[1]
    generator = np.random.RandomState()
    generator.set_state(("MT19937", np.array(state[:-1], dtype=np.uint32), state[-1], 0, 0.0))
    out = np.empty(resamples * n, dtype=np.int32)
    for start in range(0, len(out), _ROWS):
        size = min(_ROWS, len(out) - start)
        out[start : start + size] = generator.random_sample(size) * n  # truncation: floor
    return out.reshape(resamples, n)


def _sums(positions: npt.NDArray[np.int32], present: list[float]) -> npt.NDArray[np.float64]:
    import numpy as np

    values = np.asarray(present, dtype=np.float64)
    rows = max(1, _ROWS // positions.shape[1])
    return np.concatenate(
        [values[positions[i : i + rows]].sum(axis=1) for i in range(0, len(positions), rows)]
    )


class _Resampled:
    """One column's resamples: numpy's sums, and the exact ones where they are needed."""

    def __init__(
        self,
        sums: npt.NDArray[np.float64],
        positions: npt.NDArray[np.int32],
        present: list[float],
    ) -> None:
        import numpy as np

        self.sums, self.ordered = sums, np.sort(sums)
        self.positions, self.present = positions, present
        self.slack = _slack(int(positions.shape[1]), present)

    def quantile(self, q: float) -> float:
        """lasagna-metrics' quantile of the resamples' means: linear between two order
        statistics, each the exact (`math.fsum`) sum of its resample over n."""
        position = q * (len(self.sums) - 1)
        below = math.floor(position)
        above = min(below + 1, len(self.sums) - 1)
        n = int(self.positions.shape[1])
        low, high = (self.order_statistic(k) / n for k in (below, above))
        return low + (high - low) * (position - below)

    def order_statistic(self, k: int) -> float:
        """The k-th smallest `math.fsum` of a resample. Each numpy sum is within `slack` of
        its fsum, so a resample whose numpy sum is more than twice that below (above) the
        k-th numpy sum has a smaller (larger) fsum; the k-th fsum is among the others."""
        import numpy as np

        approximate = float(self.ordered[k])
        if self.slack == 0.0:
            return approximate
        margin = 2 * self.slack
        near = np.flatnonzero(np.abs(self.sums - approximate) <= margin)
        below = int(np.searchsorted(self.ordered, approximate - margin, side="left"))
        exact: list[float] = sorted(
            math.fsum(map(self.present.__getitem__, self.positions[i].tolist())) for i in near
        )
        return exact[k - below]


def _slack(n: int, present: list[float]) -> float:
    """How far numpy's sum of n of these values may be from their fsum: none for whole
    numbers whose sums stay exact in a double (0/1 metrics); else recursive summation's
    bound, n x eps/2 x the sum of magnitudes (numpy's pairwise sum errs less), doubled
    twice, plus the smallest subnormal."""
    largest = max(map(abs, present))
    if n * largest < 2.0**53 and all(v.is_integer() for v in present):
        return 0.0
    return 2.0 * n * math.ulp(1.0) * n * largest + 5e-324
