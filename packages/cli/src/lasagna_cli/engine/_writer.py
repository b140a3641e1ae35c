"""The one writer of a run's records.

Each record is written atomically (lasagna-synth's writer) before the task's slot is free
again, so a run killed at any moment loses at most the tasks in flight. The first
`HAND_OVER_AFTER` records are written on the event loop, where writes are fast (50 us on a
local disk, less than handing it to a thread and back: a pool of 8 threads made a sweep at
an instant server 2-3x slower), and on a thread pool once `SLOW_WRITES` writes in a row took
over `SLOW_WRITE` each (a network filesystem), so a slow disk does not stall the requests in
flight; one slow write (the disk busy with the flush below) does not. A run expecting more
files, or writing more, hands the rest to a writer process (`_writer_process`), started at
once (the first records wait in the pipe while it starts; any beyond its room are written
here meanwhile): their system calls then run on another core than the loop's (at an
instant server they cost the loop nearly as much CPU as the calls), and a handed record is
written even when this process is killed right after. A child that dies
is replaced by this process, which writes the records it never acknowledged; one that
cannot write a file stops the run as a write here would.

A task that calls no model (retrieval only: its ranking was computed with all the others,
in one batch) is instead queued for its folder's next batch file (`_store.write_batch`) of
`BATCH_SIZE` records, and counted once that file is on disk: a kill loses at most the
records of the batches not yet written, which take a few milliseconds to compute again on
resume. Closing writes the queued batches, waits for the writes in progress and for the
writer process to write and flush everything, so they end whole even when the run is
cancelled (Ctrl-C).

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
from lasagna_cli.engine._writer_child import SYNC_EVERY
from lasagna_cli.engine._writer_process import WriterProcess

WRITER_THREADS = 8
BATCH_SIZE = 1000
"""Records in one batch file: 10,000 retrieval tasks are ten files."""
SLOW_WRITE = 0.002
"""Seconds: a record's write slower than this is slow."""
SLOW_WRITES = 8
"""Slow writes in a row that send the rest of the run's writes to the pool."""
HAND_OVER_AFTER = 64
"""Records written here before a writer process (`_writer_process`) takes the rest: a short
run never starts one."""

OnDisk = Callable[[], None]


class Writer:
    """See the module docstring; `write` for one record's file, `queue` for a batch's."""

    def __init__(self, files: int = 0) -> None:
        self._files = files  # the task files the run expects to write, if known
        self._pool = ThreadPoolExecutor(WRITER_THREADS, thread_name_prefix="lasagna-write")
        self._queued: dict[Path, list[tuple[str, bytes, OnDisk]]] = {}
        self._next: dict[Path, int] = {}  # folder -> the number of its next batch
        self._own_files: dict[Path, set[str]] = {}  # folder -> its per-task files at start
        self._synced = time.monotonic()
        self._unsynced: Path | None = None  # a folder of task files not yet flushed
        self._slow = 0  # slow writes in a row on the event loop; at SLOW_WRITES, the pool
        self._here = 0  # records written by this process
        self._child: WriterProcess | None = None

    async def __aenter__(self) -> Writer:
        if self._files >= HAND_OVER_AFTER:  # ready by the first results, or soon after
            await self._hand_over()
        return self

    async def __aexit__(self, exc_type: object, *exc_info: object) -> None:
        try:
            if exc_type is None:
                await self._finish()
            else:  # the run is ending on an error: keep what is finished, if it can be
                with contextlib.suppress(Exception):
                    await self._finish()
        finally:
            if self._unsynced is not None:
                self._pool.submit(sync_filesystem, self._unsynced)
            self._pool.shutdown(wait=True)

    async def _finish(self) -> None:
        try:
            await self.flush()
        finally:
            if self._child is not None:
                await self._child.close()  # every record it was handed is on disk after
                await self._take_back(self._child)

    async def write(self, path: Path, data: bytes) -> None:
        child = self._child
        if child is not None and child.alive and (child.ready or child.has_room):
            # While it starts, records wait in the pipe; those beyond its room, here.
            await child.send(path, data)
            if child.alive:
                _raise_failed(child)
            else:  # it died: this record and the others it had are written here
                await self._take_back(child)
            return
        if child is not None and not child.alive:
            await self._take_back(child)
        await self._write_here(path, data)
        self._here += 1
        if self._here == HAND_OVER_AFTER and child is None:
            await self._hand_over()

    async def _hand_over(self) -> None:
        self._child = WriterProcess()
        await self._child.start()

    async def _take_back(self, child: WriterProcess) -> None:
        _raise_failed(child)
        for path, data in child.take_back():
            await self._write_here(path, data)

    async def _write_here(self, path: Path, data: bytes) -> None:
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


def _cannot_write(path: Path, exc: OSError | str) -> EngineError:
    reason = exc if isinstance(exc, str) else exc.strerror or exc
    return EngineError(
        f"cannot write {path} ({reason}); the run stops here, and the results written before "
        "are kept"
    )


def _raise_failed(child: WriterProcess) -> None:
    if child.failed is not None:
        raise _cannot_write(*child.failed)


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
