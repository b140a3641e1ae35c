"""How the engine reports the long steps that come before or between tasks (reading a
corpus, extracting the text of PDFs, building an index): an `on_step(stage, done, total)`
callback, called with `done` from 0 up to `total` (None while the total is not known).
The engine never draws; the commands do (a bar on a terminal, a line per stage off one)."""

from __future__ import annotations

from collections.abc import Callable

Step = Callable[[str, int, "int | None"], None]


def no_step(stage: str, done: int, total: int | None) -> None:
    """The default `on_step`: nothing is shown."""
