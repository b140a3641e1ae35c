"""A progress bar for long jobs: done, failed, skipped and rate, on stderr."""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import Any


class TaskProgress:
    """Counts outcomes and shows them live when stderr is a terminal.

    Off a terminal (CI, a log file) it prints nothing live and `summary()` gives the totals,
    so logs stay readable.
    """

    def __init__(self, total: int, description: str, *, enabled: bool | None = None) -> None:
        self.total = total
        self.description = description
        self.done = 0
        self.failed = 0
        self.skipped = 0
        self._enabled = sys.stderr.isatty() if enabled is None else enabled
        self._progress: Any = None
        self._task_id: Any = None
        self._start = time.perf_counter()

    def __enter__(self) -> TaskProgress:
        self._start = time.perf_counter()
        if self._enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self._progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[counts]}"),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=False,
            )
            self._progress.start()
            self._task_id = self._progress.add_task(
                self.description, total=self.total, counts=self._counts()
            )
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._progress is not None:
            self._refresh()
            self._progress.stop()

    @property
    def rate(self) -> float:
        elapsed = time.perf_counter() - self._start
        return (self.done + self.failed) / elapsed if elapsed > 0 else 0.0

    def _counts(self) -> str:
        return f"done {self.done}  failed {self.failed}  skipped {self.skipped}  {self.rate:.1f}/s"

    def _refresh(self) -> None:
        if self._progress is not None:
            self._progress.update(
                self._task_id,
                completed=self.done + self.failed + self.skipped,
                counts=self._counts(),
            )

    def start(self, total: int, description: str) -> None:
        """Begin counting (the engine's `Reporter`): the total is known once the tasks are."""
        self.total = total
        self.description = description
        if self._progress is not None:
            self._progress.update(self._task_id, total=total, description=description)

    def advance(self, status: str) -> None:
        """Record one task: status is 'done', 'failed' or 'skipped'."""
        if status == "done":
            self.done += 1
        elif status == "failed":
            self.failed += 1
        elif status == "skipped":
            self.skipped += 1
        else:
            raise ValueError(f"unknown progress status {status!r}")
        self._refresh()

    def summary(self) -> str:
        return f"{self.description}: {self._counts()}"


class SynthesisBar:
    """`synthesize`'s bar: questions kept, dropped and failed, with an ETA, on stderr when it
    is a terminal; silent otherwise (the summary says the same)."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.kept = 0
        self.dropped = 0
        self.errors = 0
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> SynthesisBar:
        if sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._progress = Progress(
                TextColumn("synthesize"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[counts]}"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=Console(stderr=True),
            )
            self._progress.start()
            self._task = self._progress.add_task("synthesize", total=self.total, counts="")
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    def __call__(self, done: int, total: int, reason: str | None) -> None:
        if reason is None:
            self.kept += 1
        elif reason == "error":
            self.errors += 1
        else:
            self.dropped += 1
        if self._progress is not None:
            self._progress.update(
                self._task,
                completed=done,
                counts=f"kept {self.kept}  dropped {self.dropped}  errors {self.errors}",
            )
