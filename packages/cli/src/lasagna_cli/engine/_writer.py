"""The one writer of a run's records.

Each record is written atomically (lasagna-synth's writer: a temporary file, then a rename)
on a writer thread, and the task's slot is freed once the rename is done: from then on a
kill of the run cannot lose it. The records are flushed to disk together about once a second
(`sync_filesystem`: one syncfs), not with two fsyncs each, which were a third of a sweep's
time at an instant server; a power cut loses at most that last second's records, which a
resumed run finds missing or empty and runs again.
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from lasagna_cli.engine._errors import EngineError
from lasagna_cli.engine._store import sync_filesystem, write_bytes_atomic

WRITER_THREADS = 8
SYNC_EVERY = 1.0
"""Seconds between two flushes of the records to disk."""


class Writer:
    """The one writer of a run's records: each atomically (lasagna-synth's writer) on a
    thread, awaited by the task's slot, and flushed to disk in groups; closing waits for the
    writes in progress, so they end whole even when the run is cancelled (Ctrl-C), and
    flushes the last group."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(WRITER_THREADS, thread_name_prefix="lasagna-write")
        self._synced = time.monotonic()
        self._folder: Path | None = None

    async def __aenter__(self) -> Writer:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._folder is not None:
            self._pool.submit(sync_filesystem, self._folder)
        self._pool.shutdown(wait=True)

    async def write(self, path: Path, data: bytes) -> None:
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(self._pool, _write_unsynced, path, data)
        except OSError as exc:
            raise EngineError(
                f"cannot write {path} ({exc.strerror or exc}); the run stops here, and the "
                "results written before are kept"
            ) from None
        self._folder = path.parent
        now = time.monotonic()
        if now - self._synced >= SYNC_EVERY:
            self._synced = now
            self._pool.submit(sync_filesystem, path.parent)  # no slot waits for it


def _write_unsynced(path: Path, data: bytes) -> None:
    write_bytes_atomic(path, data, sync=False)
