"""Files that are either whole or absent: a temporary file beside the target, fsynced, then
renamed over it (and the folder fsynced, so the rename survives a power cut), so a reader
sees the old file or the whole new one, even after a kill. lasagna's one atomic writer:
synthetic question sets, benchmark samples and every task record of the engine.

A rename is atomic for every process as soon as it returns: the fsyncs only guard against
a power cut, and cost two disk flushes per file (0.2 ms here, more than the rest of a task
at an instant server). Many small files (the engine's task records) are therefore written
with `sync=False` and flushed in groups by `sync_filesystem`: a kill still loses nothing
written, and a power cut at most the files since the last group, which a resumed run sees
as missing or empty and runs again.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any, BinaryIO

TEMP_PREFIX = ".lasagna-tmp-"
"""How the temporary file of an atomic write starts (a crash can leave one behind)."""


def _umask_mode() -> int:
    """The mode the user's umask gives a new file (0o644 under umask 022). mkstemp makes its
    file 0600, and a rename keeps the mode, so every file written would be private.

    Read once, at import, on the importing thread: os.umask can only be read by setting it,
    for the whole process, and doing so on a writer thread could race another thread's file
    creation."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


FILE_MODE = _umask_mode()


@contextmanager
def atomic_writer(path: Path, *, sync: bool = True) -> Iterator[BinaryIO]:
    """A binary handle whose bytes replace `path` when the block ends; an exception (or
    Ctrl-C) inside it leaves `path` as it was and no temporary file. `sync=False`: no fsync
    (the caller calls `sync_filesystem` for a group of files)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=path.parent)
    try:
        os.fchmod(fd, FILE_MODE)
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            if sync:
                os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    if sync:
        _fsync_folder(path.parent)


def _fsync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # some filesystems do not allow opening a directory
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_bytes_atomic(path: Path, data: bytes, *, sync: bool = True) -> None:
    """Write `data` to `path` atomically: a temporary file, fsync (unless `sync=False`),
    then rename."""
    with atomic_writer(path, sync=sync) as handle:
        handle.write(data)


def sync_filesystem(folder: Path) -> None:
    """Flush to disk what the OS holds for the filesystem of `folder`: one syncfs (Linux)
    for every file written there with `sync=False`, in one journal commit; os.sync where
    syncfs is missing. Best effort, as an fsync of a folder is: errors are ignored."""
    everything = getattr(os, "sync", lambda: None)  # not on Windows
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        everything()
        return
    try:
        syncfs = _syncfs()
        if syncfs is None or syncfs(fd) != 0:
            everything()
    finally:
        os.close(fd)


@cache
def _syncfs() -> Any:
    """libc's syncfs, or None where there is none (macOS, Windows)."""
    import ctypes

    return getattr(ctypes.CDLL(None, use_errno=True), "syncfs", None)
