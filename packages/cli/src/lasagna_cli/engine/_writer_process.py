"""A process of its own that writes a run's task files, so their system calls run on
another core than the event loop's (`Writer` hands it the records of a long run).

Each task's file is written atomically by lasagna-synth's writer, without fsync, as on the
loop; the filesystem is flushed about once a second and when the run ends. At an instant
server, writing the 4,000 files of a sweep on the loop cost it 0.23 ms of CPU a task, nearly
as much as the task's call (benchmarks/sweep_speed.py); handing a record to this process
costs one pipe write. A writer thread gained nothing: its system calls hand the GIL back
and forth with the loop's.

The protocol, over the child's stdin and stdout:
- the parent sends frames: two little-endian uint32 (the path's length, the data's), the
  path (os.fsencode), the data;
- the child (`_writer_child`, a module that imports next to nothing, so that it starts in
  a few hundredths of a second) answers `ready` once started, then after each batch of
  frames it wrote
  `error PATH<TAB>REASON` for each file it could not write and `ok N` (N frames done);
- the parent closes stdin when the run ends; the child flushes and exits.

Nothing handed over is lost when the parent alone is killed: the child writes every frame
in the pipe, then sees the end of its input. The parent keeps each frame until its `ok`:
if the child dies, the parent writes them itself and goes on without it. Records handed
over and not yet acknowledged stay under `AHEAD_BYTES` and half the pipe's size, so they
all fit in the pipe and a kill of the parent never leaves one in its own buffer; a SIGKILL
of the whole process group loses at most those (in practice the few the child had not
reached: it keeps up unless the disk is slow). The signals that stop a whole group from a
terminal (Ctrl-C, a closed terminal's SIGHUP, SIGTERM) are the parent's to act on: the
child ignores them and ends when its input does, once the parent is gone or done.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections import deque
from pathlib import Path

from lasagna_cli.engine._writer_child import frame

AHEAD_BYTES = 64 * 1024
"""Bytes handed over and not yet acknowledged, at most: what a kill of the whole process
group may lose. Less where the pipe may hold less: half of it where its size is known, 16 KiB
where it is not (pipes hold 16 KiB or more)."""
UNKNOWN_PIPE_AHEAD = 16 * 1024
PIPE_BYTES = 1 << 20
"""The pipe's size asked for (Linux): twice `AHEAD_BYTES` and more, so the frames ahead
never fill it."""


class WriterProcess:
    """The parent's side: `start`, then `send` each record, `close` at the end.

    `failed` is the first file the child could not write (path, reason), if any;
    `alive` turns False when the child is gone, after which `take_back` returns the
    records it never acknowledged, for the parent to write itself."""

    def __init__(self) -> None:
        self.failed: tuple[Path, str] | None = None
        self.alive = False
        self._process: asyncio.subprocess.Process | None = None
        self._pending: deque[tuple[Path, bytes, int]] = deque()  # sent, not yet acknowledged
        self._ahead = 0  # their bytes
        self._limit = UNKNOWN_PIPE_AHEAD
        self._room = asyncio.Event()
        self._reader: asyncio.Task[None] | None = None
        self._ready = False  # the child said it is

    async def start(self) -> None:
        """Start the child; records can be sent at once (they wait in the pipe while it
        starts), and `ready` turns True when it answers. A child that cannot start leaves
        `alive` False."""
        try:
            self._process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "lasagna_cli.engine._writer_child",
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL,
            )  # fmt: skip
        except (OSError, ValueError):  # no interpreter to start (an embedded Python)
            return
        self.alive = True
        self._limit = min(AHEAD_BYTES, _pipe_bytes(self._process) // 2) or UNKNOWN_PIPE_AHEAD
        self._reader = asyncio.create_task(self._read_reports())

    @property
    def ready(self) -> bool:
        return self.alive and self._ready

    @property
    def has_room(self) -> bool:
        """Whether a record can be sent without waiting for the child to catch up."""
        return self._ahead < self._limit

    async def send(self, path: Path, data: bytes) -> None:
        """Hand one record over; waits while too many bytes are unacknowledged."""
        assert self._process is not None and self._process.stdin is not None
        message = frame(path, data)
        self._pending.append((path, data, len(message)))
        self._ahead += len(message)
        if self._process.stdin.is_closing():  # the child is gone: `take_back` has it
            self._gone()
            return
        try:
            self._process.stdin.write(message)
        except (BrokenPipeError, ConnectionResetError):
            self._gone()
            return
        # Before the child is ready the writer sends only while there is room (`has_room`):
        # this record may go one past it, and its slot need not wait for the child's start.
        while self.alive and self._ready and self._ahead > self._limit:
            self._room.clear()
            await self._room.wait()

    def take_back(self) -> list[tuple[Path, bytes]]:
        """The records the child never acknowledged (after it died), in order."""
        taken = [(path, data) for path, data, _ in self._pending]
        self._pending.clear()
        self._ahead = 0
        return taken

    async def close(self) -> None:
        """End the input and wait for the child to write and flush everything."""
        process = self._process
        if process is None:
            return
        if process.stdin is not None and not process.stdin.is_closing():
            process.stdin.close()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                await process.stdin.wait_closed()
        if self._reader is not None:  # its failure is `alive` False: the parent takes back
            await asyncio.gather(self._reader, return_exceptions=True)
        await process.wait()

    async def _read_reports(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        lines = self._process.stdout
        try:
            while line := await lines.readline():
                kind, _, rest = line.decode("utf-8", "replace").rstrip("\n").partition(" ")
                if kind == "ok":
                    for _ in range(int(rest)):
                        _, _, size = self._pending.popleft()
                        self._ahead -= size
                    self._room.set()
                elif kind == "error":
                    where, _, reason = rest.partition("\t")
                    if self.failed is None:
                        self.failed = (Path(where), reason)
                elif kind == "ready":
                    self._ready = True
        finally:  # the child's end, or a report this side cannot read: the parent takes over
            self._gone()

    def _gone(self) -> None:
        self.alive = False
        self._room.set()


def _pipe_bytes(process: asyncio.subprocess.Process) -> int:
    """The size of the pipe to the child, made PIPE_BYTES if the system allows; 0 where it
    cannot be known."""
    try:
        import fcntl

        fd = process.stdin.get_extra_info("pipe").fileno()  # type: ignore[union-attr]
        with contextlib.suppress(OSError):
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
        return int(fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ))
    except (ImportError, AttributeError, OSError, ValueError):
        return 0
