"""One process at a time in a run folder: an exclusive `flock` on the folder itself.

Two runs in one folder (a `sweep --continue` beside the sweep still running) each see the
other's pending tasks as theirs, pay for every call twice, and the second one's clearing of
temporary files breaks the first one's writes. The lock is taken before any of that, on the
folder's own descriptor (no lock file to leave behind), and the kernel lets go of it when
the process ends however it ends, `kill -9` included: a killed run never blocks its
`--resume`. Where there is no `flock` (Windows) or the filesystem refuses it (some network
filesystems), the run goes on unlocked, as it did before.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import TracebackType

from lasagna_cli.engine._errors import EngineUsageError


class FolderLock:
    """Held from creation until `release` (or the end of a `with` block)."""

    def __init__(self, folder: Path, label: str) -> None:
        self._fd: int | None = None
        try:
            import fcntl
        except ImportError:  # Windows
            return
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise EngineUsageError(
                f"{label}: another lasagna process is writing in this folder now; wait for "
                "it to end (or stop it), then run again, or choose another folder"
            ) from None
        except OSError:  # no locks on this filesystem
            os.close(fd)
            return
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the last descriptor releases the flock
            self._fd = None

    def __enter__(self) -> FolderLock:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()
