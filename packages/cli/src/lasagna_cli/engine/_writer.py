"""The one writer of a run's records.

Each record is written atomically (lasagna-synth's writer) before the task's slot is free
again, so a run killed at any moment loses at most the tasks in flight. The write is made
on the event loop while writes are fast (50 us on a local disk, less than handing it to a
thread and back: a pool of 8 threads made a sweep at an instant server 2-3x slower), and on
a thread pool once `SLOW_WRITES` writes in a row took over `SLOW_WRITE` each (a network
filesystem), so a slow disk does not stall the requests in flight; one slow write (the disk
busy with the flush below) does not.

A task that calls no model (retrieval only: its ranking was computed with all the others,
in one batch) is instead queued for its folder's next batch file (`_store.write_batch`) of
`BATCH_SIZE` records, and counted once that file is on disk: a kill loses at most the
records of the batches not yet written, which take a few milliseconds to compute again on
resume. Closing writes the queued batches and waits for the writes in progress, so they
end whole even when the run is cancelled (Ctrl-C).

A task's own file is renamed into place without fsync, and the files are flushed to disk
together about once a second (`sync_filesystem`: one syncfs), not with two fsyncs each,
which were a third of a sweep's time at an instant server: a kill still loses nothing
written, a power cut at most that last second's files, which a resumed run finds missing
or empty and runs again. (A batch file is fsynced: it replaces the files of its tasks.)
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
from lasagna_cli.engine._store import (
    batch_number,
    sync_filesystem,
    write_batch,
    write_bytes_atomic,
)

WRITER_THREADS = 8
BATCH_SIZE = 1000
"""Records in one batch file: 10,000 retrieval tasks are ten files."""
SYNC_EVERY = 1.0
"""Seconds between two flushes of the task files to disk."""
SLOW_WRITE = 0.002
"""Seconds: a record's write slower than this is slow."""
SLOW_WRITES = 8
"""Slow writes in a row that send the rest of the run's writes to the pool."""

OnDisk = Callable[[], None]


class Writer:
    """See the module docstring; `write` for one record's file, `queue` for a batch's."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(WRITER_THREADS, thread_name_prefix="lasagna-write")
        self._queued: dict[Path, list[tuple[str, bytes, OnDisk]]] = {}
        self._next: dict[Path, int] = {}  # folder -> the number of its next batch
        self._own_files: dict[Path, set[str]] = {}  # folder -> its per-task files at start
        self._synced = time.monotonic()
        self._unsynced: Path | None = None  # a folder of task files not yet flushed
        self._slow = 0  # slow writes in a row on the event loop; at SLOW_WRITES, the pool

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
        if self._slow < SLOW_WRITES:
            start = time.monotonic()
            try:
                _write_unsynced(path, data)
            except OSError as exc:
                raise _cannot_write(path, exc) from None
            now = time.monotonic()
            self._slow = self._slow + 1 if now - start > SLOW_WRITE else 0
        else:
            await self._run(path, _write_unsynced, path, data)
            now = time.monotonic()
        self._unsynced = path.parent
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


def _cannot_write(path: Path, exc: OSError) -> EngineError:
    return EngineError(
        f"cannot write {path} ({exc.strerror or exc}); the run stops here, and the results "
        "written before are kept"
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
