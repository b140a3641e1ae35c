"""The one writer of a run's records.

Each record is written atomically (lasagna-synth's writer), on a small thread pool so a slow
disk never stalls the requests in flight, before the task's slot is free again: a run
killed at any moment, even with its whole process group, loses at most the tasks in flight.
(A writer process, or writes on the event loop, saved a little CPU a task at an instant
server only; at a model's pace nobody can see it, so they are gone.)

A task that calls no model (retrieval only: its ranking was computed with all the others,
in one batch) is instead queued for its folder's next batch file (`_store.write_batch`) of
`BATCH_SIZE` records, and counted once that file is on disk: a kill loses at most the
records of the batches not yet written, which take a few milliseconds to compute again on
resume. Closing writes the queued batches and waits for the writes in progress, so they end
whole even when the run is cancelled (Ctrl-C).

A task's own file is renamed into place without fsync, and the files are flushed to disk
together about once a second (`sync_filesystem`: one syncfs), not with two fsyncs each: a
kill still loses nothing written, a power cut at most that last second's files, which a
resumed run finds missing or empty and runs again. (A batch file is fsynced: it replaces
the files of its tasks.)
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from lasagna_cli.engine._errors import EngineError
from lasagna_cli.engine.records._store import (
    batch_number,
    sync_filesystem,
    write_batch,
    write_bytes_atomic,
)

WRITER_THREADS = 4
BATCH_SIZE = 1000
"""Records in one batch file: 10,000 retrieval tasks are ten files."""
SYNC_EVERY = 1.0
"""Seconds between two flushes of the task files to disk."""

OnDisk = Callable[[], None]


class Writer:
    """See the module docstring; `write` for one record's file, `queue` for a batch's."""

    def __init__(self, files: int = 0) -> None:
        del files  # the count of task files a run expects: no longer needed
        self._pool = ThreadPoolExecutor(WRITER_THREADS, thread_name_prefix="lasagna-write")
        self._queued: dict[Path, list[tuple[str, bytes, OnDisk]]] = {}
        self._next: dict[Path, int] = {}  # folder -> the number of its next batch
        self._own_files: dict[Path, set[str]] = {}  # folder -> its per-task files at start
        self._synced = time.monotonic()
        self._unsynced: Path | None = None  # a folder of task files not yet flushed

    async def __aenter__(self) -> Writer:
        return self

    async def __aexit__(self, exc_type: object, *exc_info: object) -> None:
        try:
            if exc_type is None:
                await self.flush()
            else:  # the run is ending on an error: keep what is finished, if it can be
                with contextlib.suppress(Exception):
                    await self.flush()
        finally:
            if self._unsynced is not None:
                self._pool.submit(sync_filesystem, self._unsynced)
            self._pool.shutdown(wait=True)

    async def write(self, path: Path, data: bytes) -> None:
        await self._run(path, _write_unsynced, path, data)
        self._unsynced = path.parent
        now = time.monotonic()
        if now - self._synced >= SYNC_EVERY:
            self._synced = now
            self._pool.submit(sync_filesystem, path.parent)  # no slot waits for it

    async def queue(self, path: Path, data: bytes, on_disk: OnDisk) -> None:
        """`data` is the record of the task whose own file would be `path`."""
        queued = self._queued.setdefault(path.parent, [])
        queued.append((path.name, data, on_disk))
        if len(queued) >= BATCH_SIZE:
            await self._write_batch(path.parent)

    async def flush(self) -> None:
        for folder in list(self._queued):
            await self._write_batch(folder)

    async def _write_batch(self, folder: Path) -> None:
        entries = self._queued.pop(folder, [])
        if not entries:
            return
        if folder not in self._next:
            try:
                names = os.listdir(folder)
            except FileNotFoundError:
                names = []
            numbers = [n for name in names if (n := batch_number(name)) is not None]
            self._next[folder] = max(numbers, default=0) + 1
            self._own_files[folder] = {name for name in names if name.endswith(".json")}
        number = self._next[folder]
        self._next[folder] += 1
        superseded = [name for name, _, _ in entries if name in self._own_files[folder]]
        await self._run(folder, _batch, folder, number, entries, superseded)
        for _, _, on_disk in entries:
            on_disk()

    async def _run(self, path: Path, job: Callable[..., None], *args: object) -> None:
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(self._pool, job, *args)
        except OSError as exc:
            raise _cannot_write(path, exc) from None


def _cannot_write(path: Path, exc: OSError | str) -> EngineError:
    reason = exc if isinstance(exc, str) else exc.strerror or exc
    return EngineError(
        f"cannot write {path} ({reason}); the run stops here, and the results written before "
        "are kept"
    )


def _write_unsynced(path: Path, data: bytes) -> None:
    write_bytes_atomic(path, data, sync=False)


def _batch(
    folder: Path, number: int, entries: list[tuple[str, bytes, OnDisk]], superseded: list[str]
) -> None:
    """The batch file (its folder made if missing), then the older files of its tasks (a
    task's own file would win)."""
    write_batch(folder, number, [(name, data) for name, data, _ in entries])
    for name in superseded:
        (folder / name).unlink(missing_ok=True)
