"""Files that are either whole or absent: a temporary file beside the target, fsynced, then
renamed over it (and the folder fsynced, so the rename survives a power cut), so a reader
sees the old file or the whole new one, even after a kill. lasagna's one atomic writer:
synthetic question sets, benchmark samples and every task record of the engine.

A path that is a symbolic link is written through: its target is replaced (the link stays
a link), and one that is not a regular file (`/dev/stdout`, `/dev/full`, a named pipe,
`>(gzip > x)`) is written straight into, as a shell redirection would: renaming over it
would replace a device node with a regular file, and as root even `/dev/full`.

A rename is atomic for every process as soon as it returns: the fsyncs only guard against
a power cut, and cost two disk flushes per file (more than the rest of a task at an
instant server). Many small files (the engine's task records) are therefore written
with `sync=False` and flushed in groups by `sync_filesystem`: a kill still loses nothing
written, and a power cut at most the files since the last group, which a resumed run sees
as missing or empty and runs again.
"""

from __future__ import annotations

import itertools
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any, BinaryIO

TEMP_PREFIX = ".lasagna-tmp-"
"""How the temporary file of an atomic write starts (a crash can leave one behind)."""


_TEMP_FLAGS = (
    os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
)
_TEMP_TAG = f"{os.getpid()}-{os.urandom(4).hex()}-"  # not secrets: its import is a cost
_temp_numbers = itertools.count()  # next() is atomic under the GIL: safe on writer threads


def _create_temp(folder: Path) -> tuple[int, str]:
    """A new temporary file in `folder` (made if missing), open for writing: its fd and path.

    Not tempfile.mkstemp, whose random name, 0600 mode (a rename keeps it, so every file
    would be private) and fchmod cost more than the write of a task record: the name is
    this process's tag and a counter, O_EXCL refuses any file already there, and mode 0666
    gets the user's umask applied by the OS (0644 under 022)."""
    made = False
    while True:
        temp = os.path.join(folder, f"{TEMP_PREFIX}{_TEMP_TAG}{next(_temp_numbers)}")
        try:
            return os.open(temp, _TEMP_FLAGS, 0o666), temp
        except FileNotFoundError:
            if made:  # the folder is there and takes no new file (/proc): the OSError says so
                raise
            folder.mkdir(parents=True, exist_ok=True)  # another writer may have made it
            made = True
        except FileExistsError:  # a file of a killed process whose pid and tag were ours
            continue


def _written_through(path: Path) -> tuple[Path, bool]:
    """Where a write to `path` goes: the path to replace (a link's target), or, with True,
    a file that is not a regular one, to be written into as it is."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:  # missing (or unreadable: the write says why)
        return path, False
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return path, False
    if stat.S_ISLNK(mode):
        try:
            mode = os.stat(path).st_mode
        except FileNotFoundError:  # a dangling link: its target is made
            return Path(os.path.realpath(path)), False
        if stat.S_ISREG(mode):
            return Path(os.path.realpath(path)), False
        if stat.S_ISDIR(mode):
            return path, False
    return path, True  # a device, a pipe or a socket (through a link or not)


@contextmanager
def _replacing(path: Path, sync: bool) -> Iterator[int]:
    """The fd of a new temporary file beside `path`, which replaces `path` (fsynced first
    when `sync`) when the block ends; an exception inside it removes the temporary file.
    A link's target is replaced instead, and a device or pipe written into (`_written_through`)."""
    path, through = _written_through(path)
    if through:
        fd = os.open(path, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
        try:
            yield fd
        finally:
            os.close(fd)
        return
    fd, temp = _create_temp(path.parent)
    try:
        try:
            yield fd
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    if sync:
        _fsync_folder(path.parent)


@contextmanager
def atomic_writer(path: Path, *, sync: bool = True) -> Iterator[BinaryIO]:
    """A binary handle whose bytes replace `path` when the block ends; an exception (or
    Ctrl-C) inside it leaves `path` as it was and no temporary file. `sync=False`: no fsync
    (the caller calls `sync_filesystem` for a group of files)."""
    with _replacing(path, sync) as fd, os.fdopen(fd, "wb", closefd=False) as handle:
        yield handle
        handle.flush()


def write_bytes_atomic(path: Path, data: bytes, *, sync: bool = True) -> None:
    """Write `data` to `path` atomically: a temporary file, fsync (unless `sync=False`),
    then rename. Plain system calls, without a file object: this is the engine's per-task
    path (faster than through a file object)."""
    with _replacing(path, sync) as fd:
        view = memoryview(data)
        while view:  # os.write may write less than asked (a signal, a full disk)
            view = view[os.write(fd, view) :]


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
