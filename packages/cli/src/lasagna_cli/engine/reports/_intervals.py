"""`summarize_many`: `lasagna_metrics.summarize_many`'s figures, bit for bit, with numpy.

lasagna-metrics draws each resample's positions one `random()` at a time and sums it with
`math.fsum`, in pure Python (it imports nothing else): most of a run's end once its last
answer is in. Here numpy's MT19937,
set to the very state of `random.Random(seed)`, draws the same doubles (both build a
double from two 32-bit outputs the same way), so the same positions, a block of resamples
at a time; numpy sums each resample (within `_slack` of the exact sum), and the few
resamples that could stand at the quantiles' order statistics are drawn once more and
summed with `math.fsum`: the same order statistics exactly, so the same intervals
(`tests/cli/test_intervals.py` holds them to lasagna-metrics' own), in a block's memory
(16 MB) whatever the run's size.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from lasagna_metrics import Summary, mean

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

_DRAWS = 1 << 21  # positions drawn at a time: 16 MB of doubles


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
    quantiles = ((1.0 - confidence) / 2.0, 1.0 - (1.0 - confidence) / 2.0)
    for n, group in varying.items():
        draws = _Draws(n, resamples, seed)
        sums = draws.sums([present for _, present in group])
        resampled = [_Resampled(s, present) for s, (_, present) in zip(sums, group, strict=True)]
        rows = draws.rows(set().union(*(r.rows_to_sum(q) for r in resampled for q in quantiles)))
        for (name, present), column in zip(group, resampled, strict=True):
            low, high = (column.quantile(q, rows) for q in quantiles)
            lowest, highest = min(present), max(present)
            found[name] = Summary(
                found[name].mean,
                min(max(low, lowest), highest),
                min(max(high, lowest), highest),
                found[name].count,
                found[name].missing,
            )
    return {name: found[name] for name in columns}


class _Draws:
    """Each resample's positions as `random.Random(seed)` draws them, floor(random() * n),
    made a block of resamples at a time."""

    def __init__(self, n: int, resamples: int, seed: int) -> None:
        self.n, self.resamples, self.seed = n, resamples, seed

    def _blocks(self) -> Iterator[tuple[int, npt.NDArray[np.int32]]]:
        import numpy as np

        state = random.Random(self.seed).getstate()[1]
        generator = np.random.RandomState()
        generator.set_state(("MT19937", np.array(state[:-1], dtype=np.uint32), state[-1], 0, 0.0))
        rows = max(1, _DRAWS // self.n)
        for first in range(0, self.resamples, rows):
            size = min(rows, self.resamples - first)
            block = np.empty((size, self.n), dtype=np.int32)
            block.reshape(-1)[:] = generator.random_sample(size * self.n) * self.n  # floor
            yield first, block

    def sums(self, columns: list[list[float]]) -> npt.NDArray[np.float64]:
        """numpy's sum of each resample of each column: a row per column."""
        import numpy as np

        values = [np.asarray(present, dtype=np.float64) for present in columns]
        sums = np.empty((len(columns), self.resamples))
        for first, block in self._blocks():
            for row, column in zip(sums, values, strict=True):
                row[first : first + len(block)] = column[block].sum(axis=1)
        return sums

    def rows(self, wanted: set[int]) -> dict[int, list[int]]:
        """The positions of these resamples (the stream drawn once more, if any is wanted)."""
        found: dict[int, list[int]] = {}
        if wanted:
            for first, block in self._blocks():
                for i in wanted.intersection(range(first, first + len(block))):
                    found[i] = block[i - first].tolist()
        return found


class _Resampled:
    """One column's resamples: numpy's sums, and the exact ones where they are needed.

    Each numpy sum is within `slack` of its fsum, so a resample whose numpy sum is more
    than twice that below (above) the k-th smallest numpy sum has a smaller (larger) fsum:
    the k-th smallest fsum is among the others, the resamples near it."""

    def __init__(self, sums: npt.NDArray[np.float64], present: list[float]) -> None:
        import numpy as np

        self.sums, self.ordered, self.present = sums, np.sort(sums), present
        self.slack = _slack(len(present), present)

    def _sides(self, q: float) -> tuple[float, int, int]:
        """Quantile q's position, and the order statistics on either side of it."""
        position = q * (len(self.sums) - 1)
        below = math.floor(position)
        return position, below, min(below + 1, len(self.sums) - 1)

    def _near(self, k: int) -> tuple[list[int], int]:
        """The resamples whose fsum may be the k-th smallest, and how many are surely less."""
        import numpy as np

        approximate, margin = float(self.ordered[k]), 2 * self.slack
        near: list[int] = np.flatnonzero(np.abs(self.sums - approximate) <= margin).tolist()
        return near, int(np.searchsorted(self.ordered, approximate - margin, side="left"))

    def rows_to_sum(self, q: float) -> set[int]:
        """The resamples to sum exactly for quantile q (none where numpy's sums are exact)."""
        if self.slack == 0.0:
            return set()
        _, below, above = self._sides(q)
        return {i for k in (below, above) for i in self._near(k)[0]}

    def quantile(self, q: float, rows: Mapping[int, list[int]]) -> float:
        """lasagna-metrics' quantile of the resamples' means: linear between two order
        statistics, each the exact (`math.fsum`) sum of its resample over n; `rows` holds
        the positions of the resamples `rows_to_sum` asked for."""
        position, below, above = self._sides(q)
        low, high = (self._order_statistic(k, rows) / len(self.present) for k in (below, above))
        return low + (high - low) * (position - below)

    def _order_statistic(self, k: int, rows: Mapping[int, list[int]]) -> float:
        if self.slack == 0.0:
            return float(self.ordered[k])
        near, smaller = self._near(k)
        exact = sorted(math.fsum(map(self.present.__getitem__, rows[i])) for i in near)
        return exact[k - smaller]


def _slack(n: int, present: list[float]) -> float:
    """How far numpy's sum of n of these values may be from their fsum: none for whole
    numbers whose sums stay exact in a double (0/1 metrics); else recursive summation's
    bound, n x eps/2 x the sum of magnitudes (numpy's pairwise sum errs less), doubled
    twice, plus the smallest subnormal."""
    largest = max(map(abs, present))
    if n * largest < 2.0**53 and all(v.is_integer() for v in present):
        return 0.0
    return 2.0 * n * math.ulp(1.0) * n * largest + 5e-324
