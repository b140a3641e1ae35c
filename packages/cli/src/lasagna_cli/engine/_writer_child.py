"""The writer process's own side (see `_writer_process`): frames from stdin to files.

A module of its own, importing nothing but the standard library and lasagna-synth's atomic
writer, so that the child is ready in a few hundredths of a second: the parent hands it the
first records at once, and they wait in the pipe meanwhile.
"""

from __future__ import annotations

import os
import signal
import struct
import time
from pathlib import Path

HEADER = struct.Struct("<II")
"""A frame's header: the path's length, the data's (little-endian uint32)."""
SYNC_EVERY = 1.0
"""Seconds between two flushes of the task files to disk, by the child and by `Writer`."""


def frame(path: Path, data: bytes) -> bytes:
    name = os.fsencode(path)
    return HEADER.pack(len(name), len(data)) + name + data


def main() -> None:
    """The child: frames from stdin to files (`_writer_process`'s docstring: the protocol)."""
    for name in ("SIGINT", "SIGHUP", "SIGTERM"):  # before the imports: see the docstring
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_IGN)
    from lasagna_synth import sync_filesystem, write_bytes_atomic

    reporting = _report(b"ready\n")
    buffer = bytearray()
    synced, unsynced = time.monotonic(), None
    while chunk := os.read(0, 1 << 20):
        buffer += chunk
        done, offset, errors = 0, 0, []
        while len(buffer) - offset >= HEADER.size:
            path_size, data_size = HEADER.unpack_from(buffer, offset)
            start = offset + HEADER.size
            end = start + path_size + data_size
            if end > len(buffer):
                break  # the rest of this frame is still on its way
            path = Path(os.fsdecode(bytes(buffer[start : start + path_size])))
            try:
                write_bytes_atomic(path, bytes(buffer[start + path_size : end]), sync=False)
                unsynced = path.parent
            except OSError as exc:
                errors.append(f"error {path}\t{exc.strerror or exc}\n")
            done += 1
            offset = end
        del buffer[:offset]
        if unsynced is not None and time.monotonic() - synced >= SYNC_EVERY:
            sync_filesystem(unsynced)
            synced = time.monotonic()
        if done and reporting:
            reporting = _report(("".join(errors) + f"ok {done}\n").encode())
    if unsynced is not None:
        sync_filesystem(unsynced)


def _report(line: bytes) -> bool:
    """Tell the parent; False once it is gone (the files are written all the same)."""
    try:
        os.write(1, line)
    except (BrokenPipeError, ConnectionResetError):
        return False
    return True


if __name__ == "__main__":
    main()
