"""The garbage collector's settings while a command runs many tasks.

Each task allocates a few hundred objects (its coroutines, the request and reply, the
record), nearly all freed by reference counting; CPython's default collects the young
generation every 700 allocations all the same, a collection every task or two: a share of
a sweep's CPU at a fast server (benchmarks/sweep_speed.py; the figures are in the
CHANGELOG). The older generations keep their default rhythm, counted in young collections.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

YOUNG_THRESHOLD = 20_000
"""Allocations between two collections of the young generation while tasks run."""


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """Collect the young generation every `YOUNG_THRESHOLD` allocations inside the block."""
    before = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
