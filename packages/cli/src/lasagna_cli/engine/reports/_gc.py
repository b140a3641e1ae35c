"""`collector_paused`: Python's cycle collector off for a block that builds a large run's
objects. Reading a large run makes millions of dicts and lists, none of them in a cycle, and
the collector's passes over them would take much of the report's and `load_results`' time.
It is on again after the block (if it was on before)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
