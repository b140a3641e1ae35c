"""Progress on stderr: the libraries report, these draw.

- `TaskProgress`: the main bar of a run (done, failed, skipped, rate, ETA), and above it
  one bar per step that comes before or between the tasks (reading a corpus, extracting
  PDFs, building an index): `step(stage, done, total)` is the `on_step` callback the
  engine and lasagna-synth take.
- `StageProgress`: the steps alone, for a command without a task bar (synthesize's plan).
- `SynthesisBar`: synthesize's questions.

Off a terminal (CI, a log file) nothing is drawn: a step that takes a while is one line
(`indexing local/beir@70b687ab83a5: 100,000 documents (BM25)`), a run's tasks and
synthesize's questions get a line of counts, rate and ETA every `PROGRESS_LINES_EVERY`
seconds, and a run's totals are printed at the end (synthesize's summary says its own), so
logs stay readable and a long run is never silence.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any

import typer

from lasagna_cli.commands._terminal import shown


def _started(*, counts: bool, eta_label: bool = True) -> Any:
    """A rich Progress on stderr, started: the description, the bar, done of total, the
    counts (`counts`), the time taken and the ETA (labelled `eta` unless not `eta_label`)."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    middle = (TextColumn("{task.fields[counts]}"),) if counts else ()
    label = (TextColumn("eta"),) if eta_label else ()
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        *middle,
        TimeElapsedColumn(),
        *label,
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=False,
    )
    progress.start()
    return progress


#: Off a terminal, a step's line is printed once it has run this long (seconds), so quick
#: steps leave a log (and a one-line error) as it was; LASAGNA_STEP_LINES_AFTER sets it
#: (0: every step has its line).
STEP_LINES_AFTER = 0.5


#: Off a terminal, a line of the tasks' counts every this many seconds while they run;
#: LASAGNA_PROGRESS_LINES_EVERY sets it (0: a line per task).
PROGRESS_LINES_EVERY = 30.0


def _seconds(value: str | None, default: float) -> float:
    """A variable's seconds (never negative); its default when unset or not a number."""
    try:
        return max(0.0, float(value)) if value is not None else default
    except ValueError:
        return default


def _eta(left: int, rate: float) -> str:
    """`, eta 1m05s`: `left` items at `rate` a second; nothing when none is left or no rate."""
    if left <= 0 or rate <= 0:
        return ""
    minutes, secs = divmod(round(left / rate), 60)
    hours, minutes = divmod(minutes, 60)
    return ", eta " + (f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s")


class _Steps:
    """What `step(stage, done, total)` does: a bar per stage on a terminal (in `_progress`,
    a rich Progress); off one, a line naming the stage once it has run for
    `STEP_LINES_AFTER` seconds (from a timer: the step itself may hold the thread)."""

    def __init__(self, enabled: bool | None) -> None:
        self._enabled = sys.stderr.isatty() if enabled is None else enabled
        self._progress: Any = None
        self._stages: dict[str, Any] = {}
        self._timers: dict[str, threading.Timer] = {}
        self._after = _seconds(os.environ.get("LASAGNA_STEP_LINES_AFTER"), STEP_LINES_AFTER)

    def step(self, stage: str, done: int, total: int | None) -> None:
        """`done` of `total` items of `stage` (total None: not known yet)."""
        finished = total is not None and done >= total
        if stage not in self._stages:
            label = shown(stage)  # it may name a folder: no escape sequence reaches the terminal
            if self._progress is not None:
                from rich.markup import escape

                self._stages[stage] = self._progress.add_task(escape(label), total=total, counts="")
            else:
                self._stages[stage] = None
                if self._after == 0:
                    typer.echo(label, err=True)  # the stage's name says what and how much
                elif not finished:
                    timer = threading.Timer(self._after, typer.echo, (label,), {"err": True})
                    timer.daemon = True
                    self._timers[stage] = timer
                    timer.start()
        task = self._stages[stage]
        if task is not None:
            self._progress.update(task, completed=done, total=total)
        elif finished and stage in self._timers:
            self._timers.pop(stage).cancel()

    def __exit__(self, *exc_info: object) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        if self._progress is not None:
            self._progress.stop()


class TaskProgress(_Steps):
    """Counts outcomes and shows them live when stderr is a terminal.

    Off a terminal (CI, a log file) it prints a line of counts, rate and ETA every
    `PROGRESS_LINES_EVERY` seconds, and `summary()` gives the totals.
    """

    def __init__(self, total: int, description: str, *, enabled: bool | None = None) -> None:
        self.total = total
        self.description = description
        self.done = 0
        self.failed = 0
        self.skipped = 0
        super().__init__(enabled)
        self._task_id: Any = None
        self._start = time.perf_counter()
        self._every = _seconds(os.environ.get("LASAGNA_PROGRESS_LINES_EVERY"), PROGRESS_LINES_EVERY)
        self._last_line = self._start

    def __enter__(self) -> TaskProgress:
        self._start = self._last_line = time.perf_counter()
        if self._enabled:
            self._progress = _started(counts=True)
        return self

    def _main_bar(self) -> None:
        # Added when the tasks are known, so the steps before them are drawn above it.
        if self._progress is not None and self._task_id is None:
            self._task_id = self._progress.add_task(
                self.description, total=self.total or None, counts=self._counts()
            )

    def __exit__(self, *exc_info: object) -> None:
        if self._progress is not None and self._task_id is not None:
            self._refresh()  # the main bar's last counts
        super().__exit__(*exc_info)

    @property
    def rate(self) -> float:
        elapsed = time.perf_counter() - self._start
        return (self.done + self.failed) / elapsed if elapsed > 0 else 0.0

    def _counts(self) -> str:
        return f"done {self.done}  failed {self.failed}  skipped {self.skipped}  {self.rate:.1f}/s"

    def _refresh(self) -> None:
        self._main_bar()
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
        self._main_bar()
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
        if not self._enabled:
            now = time.perf_counter()
            if now - self._last_line >= self._every:
                self._last_line = now
                typer.echo(self._line(), err=True)

    def _line(self) -> str:
        seen = self.done + self.failed + self.skipped
        eta = _eta(self.total - seen, self.rate)
        return f"{self.description}: {seen} of {self.total} ({self._counts()}{eta})"

    def summary(self) -> str:
        return f"{self.description}: {self._counts()}"


class StageProgress(_Steps):
    """`step` for a command with no task bar: a bar per stage on a terminal, a line when
    each starts off one."""

    def __init__(self, *, enabled: bool | None = None) -> None:
        super().__init__(enabled)

    def __enter__(self) -> StageProgress:
        if self._enabled:
            self._progress = _started(counts=False)
        return self


class SynthesisBar:
    """`synthesize`'s questions: kept, dropped and failed, with an ETA, as a bar when stderr
    is a terminal; off one, a line of the same counts every `PROGRESS_LINES_EVERY` seconds
    (as a run's tasks get), so a long run in CI is never silence."""

    def __init__(self, total: int, *, enabled: bool | None = None) -> None:
        self.total = total
        self.kept = 0
        self.dropped = 0
        self.errors = 0
        self._enabled = sys.stderr.isatty() if enabled is None else enabled
        self._progress: Any = None
        self._task: Any = None
        self._start = self._last_line = time.perf_counter()
        self._every = _seconds(os.environ.get("LASAGNA_PROGRESS_LINES_EVERY"), PROGRESS_LINES_EVERY)

    def __enter__(self) -> SynthesisBar:
        self._start = self._last_line = time.perf_counter()
        if self._enabled:
            self._progress = _started(counts=True, eta_label=False)
            self._task = self._progress.add_task("synthesize", total=self.total, counts="")
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    def _counts(self) -> str:
        return f"kept {self.kept}  dropped {self.dropped}  errors {self.errors}"

    def __call__(self, done: int, total: int, reason: str | None) -> None:
        if reason is None:
            self.kept += 1
        elif reason == "error":
            self.errors += 1
        else:
            self.dropped += 1
        if self._progress is not None:
            self._progress.update(self._task, completed=done, counts=self._counts())
            return
        now = time.perf_counter()
        if now - self._last_line < self._every:
            return
        self._last_line = now
        elapsed = now - self._start
        rate = done / elapsed if elapsed > 0 else 0.0
        line = f"synthesize: {done} of {total} questions ({self._counts()}  {rate:.1f}/s"
        typer.echo(f"{line}{_eta(total - done, rate)})", err=True)
