"""The garbage collector's settings while a command runs many tasks.

Each task allocates a few hundred objects (its coroutines, the request and reply, the
record), nearly all freed by reference counting; CPython's default collects the young
generation every 700 allocations all the same, a collection every task or two. At an
instant server that cost 12-17% of a sweep's CPU (0.39 against 0.33 ms a task with a
threshold of 20,000, benchmarks/sweep_speed.py's runner in process, 6 interleaved rounds).
The older generations keep their default rhythm, counted in young collections.
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
