"""Files that are either whole or absent: a temporary file beside the target, fsynced, then
renamed over it, so a reader sees the old file or the whole new one, even after a kill."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

TEMP_PREFIX = ".lasagna-tmp-"


@contextmanager
def atomic_writer(path: Path) -> Iterator[BinaryIO]:
    """A binary handle whose bytes replace `path` when the block ends; an exception (or
    Ctrl-C) inside it leaves `path` as it was and no temporary file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def write_bytes_atomic(path: Path, data: bytes) -> None:
    with atomic_writer(path) as handle:
        handle.write(data)
