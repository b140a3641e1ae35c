"""Files that are either whole or absent: a temporary file beside the target, fsynced, then
renamed over it (and the folder fsynced, so the rename survives a power cut), so a reader
sees the old file or the whole new one, even after a kill. lasagna's one atomic writer:
synthetic question sets, benchmark samples and every task record of the engine."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

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
def atomic_writer(path: Path) -> Iterator[BinaryIO]:
    """A binary handle whose bytes replace `path` when the block ends; an exception (or
    Ctrl-C) inside it leaves `path` as it was and no temporary file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=path.parent)
    try:
        os.fchmod(fd, FILE_MODE)
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
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


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write `data` to `path` atomically: a temporary file, fsync, then rename."""
    with atomic_writer(path) as handle:
        handle.write(data)
