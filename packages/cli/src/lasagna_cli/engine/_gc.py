"""The garbage collector's settings around the engine's heavy blocks.

- `fewer_collections`, while many tasks run: each task allocates a few hundred objects (its
  coroutines, the request and reply, the record), nearly all freed by reference counting;
  CPython's default collects the young generation every 700 allocations all the same, a
  collection every task or two: a share of a sweep's CPU at a fast server
  (benchmarks/sweep_speed.py; the figures are in the CHANGELOG). The older generations keep
  their default rhythm, counted in young collections.
- `collector_paused`, while a large run's objects are built: reading a large run makes
  millions of dicts and lists, none of them in a cycle, and the collector's passes over them
  would take much of the report's and `load_results`' time. It is on again after the block
  (if it was on before).

Both restore the settings they found, even when the block fails.
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


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cycle collector off inside the block."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
