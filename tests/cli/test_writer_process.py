"""The task files' writer process: every record handed to it ends on disk, whole, even when
the run's process is killed; a child that dies or cannot write is noticed, never silent."""

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from lasagna_cli.engine import _writer
from lasagna_cli.engine._errors import EngineError
from lasagna_cli.engine._store import TEMP_PREFIX, dump_task_json, read_json
from lasagna_cli.engine._writer_process import AHEAD_BYTES, WriterProcess


def record(i: int) -> bytes:
    return dump_task_json({"ok": {"result": f"answer {i}", "é": "ü" * (i % 7)}})


def paths(root: Path, n: int) -> list[Path]:
    return [root / f"q{i // 2}" / f"s{i % 2}.json" for i in range(n)]


async def until_ready(child: WriterProcess) -> None:
    deadline = time.monotonic() + 30
    while not child.ready:
        assert child.alive and time.monotonic() < deadline, "the writer process never started"
        await asyncio.sleep(0.01)


def test_records_handed_over_are_written_whole_and_acknowledged(tmp_path: Path) -> None:
    async def main() -> WriterProcess:
        child = WriterProcess()
        await child.start()
        await until_ready(child)
        for i, path in enumerate(paths(tmp_path, 500)):
            await child.send(path, record(i))
        await child.close()
        return child

    child = asyncio.run(main())
    assert child.failed is None and child.take_back() == []  # every frame acknowledged
    if sys.platform == "linux":  # the pipe made 1 MiB: AHEAD_BYTES may be ahead of the child
        assert child._limit == AHEAD_BYTES
    assert [read_json(p) for p in paths(tmp_path, 500)] == [
        {"ok": {"result": f"answer {i}", "é": "ü" * (i % 7)}} for i in range(500)
    ]
    assert list(tmp_path.rglob(f"{TEMP_PREFIX}*")) == []


def test_a_long_run_s_writer_hands_its_files_to_the_process(tmp_path: Path) -> None:
    async def main() -> _writer.Writer:
        async with _writer.Writer(files=300) as writer:
            assert writer._child is not None
            await until_ready(writer._child)
            for i, path in enumerate(paths(tmp_path, 300)):
                await writer.write(path, record(i))
            return writer

    writer = asyncio.run(main())
    assert writer._here == 0  # nothing written by this process
    assert all(read_json(p) is not None for p in paths(tmp_path, 300))


def test_a_short_run_never_starts_one(tmp_path: Path) -> None:
    async def main() -> _writer.Writer:
        async with _writer.Writer(files=10) as writer:
            for i, path in enumerate(paths(tmp_path, 10)):
                await writer.write(path, record(i))
            return writer

    writer = asyncio.run(main())
    assert writer._child is None and writer._here == 10


def test_records_of_a_child_that_died_are_written_here(tmp_path: Path) -> None:
    async def main() -> None:
        async with _writer.Writer(files=400) as writer:
            child = writer._child
            assert child is not None
            await until_ready(child)
            for i, path in enumerate(paths(tmp_path, 400)):
                if i == 150:
                    assert child._process is not None
                    child._process.send_signal(signal.SIGKILL)
                await writer.write(path, record(i))
                if i % 25 == 0:
                    await asyncio.sleep(0.001)  # let the loop see the child go

    asyncio.run(main())
    assert [read_json(p) for p in paths(tmp_path, 400)] == [
        {"ok": {"result": f"answer {i}", "é": "ü" * (i % 7)}} for i in range(400)
    ]


def test_a_file_the_child_cannot_write_stops_the_run_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "blocked").write_text("a file where a folder should be")

    async def main() -> None:
        async with _writer.Writer(files=100) as writer:
            assert writer._child is not None
            await until_ready(writer._child)
            await writer.write(tmp_path / "blocked" / "q" / "s.json", record(0))
            for i, path in enumerate(paths(tmp_path / "ok", 99)):
                await writer.write(path, record(i))
                await asyncio.sleep(0)

    with pytest.raises(EngineError, match=r"cannot write .*blocked.*the run stops here"):
        asyncio.run(main())


@pytest.mark.parametrize(
    ("signal_name", "group"), [("SIGKILL", False), ("SIGTERM", True), ("SIGHUP", True)]
)
def test_a_killed_run_loses_nothing_it_handed_over(
    tmp_path: Path, signal_name: str, group: bool
) -> None:
    """The run's process killed right after its last hand-over, alone (kill -9 PID) or with
    its whole group (a closed terminal, kill -TERM -PGID): the child still writes every
    record in the pipe, then ends (it sees the end of its input)."""
    kill = "os.killpg(0, sig)" if group else "os.kill(os.getpid(), sig)"
    script = textwrap.dedent(
        f"""
        import asyncio, os, signal, sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from pathlib import Path
        from test_writer_process import paths, record, until_ready
        from lasagna_cli.engine._writer_process import WriterProcess

        async def main():
            child = WriterProcess()
            await child.start()
            await until_ready(child)
            for i, path in enumerate(paths(Path({str(tmp_path)!r}), 200)):
                await child.send(path, record(i))
            print(child._process.pid, flush=True)
            sig = signal.{signal_name}
            {kill}

        asyncio.run(main())
        """
    )
    run = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, start_new_session=True
    )
    assert run.returncode == -getattr(signal, signal_name), run.stderr
    child = int(run.stdout.split()[0])
    deadline = time.monotonic() + 30
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not _alive(child), "the writer process outlived its input"
    assert [read_json(p) for p in paths(tmp_path, 200)] == [
        {"ok": {"result": f"answer {i}", "é": "ü" * (i % 7)}} for i in range(200)
    ]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (its parent, the killed run, reaped by init later) has written everything.
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ")[-1][0] != "Z"
    except FileNotFoundError:
        return False


def test_a_child_whose_reports_cannot_be_read_is_replaced_by_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lasagna_cli.engine import _writer_process

    garbled = (  # ready; then, once frames come, a report no parent can read
        "import os; os.write(1, b'ready\\n'); os.read(0, 1); os.write(1, b'ok many\\n');"
        "\nwhile os.read(0, 65536): pass"
    )
    start = asyncio.create_subprocess_exec

    def child(*args: str, **kwargs: object) -> object:
        return start(sys.executable, "-c", garbled, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(_writer_process.asyncio, "create_subprocess_exec", child)

    big = [dump_task_json({"i": i, "pad": "x" * 2000}) for i in range(100)]  # > AHEAD_BYTES

    async def main() -> None:
        async with _writer.Writer(files=100) as writer:
            assert writer._child is not None
            await until_ready(writer._child)
            for path, data in zip(paths(tmp_path, 100), big, strict=True):
                await writer.write(path, data)

    asyncio.run(asyncio.wait_for(main(), 60))  # a parent still waiting on that child: a hang
    assert [read_json(p) for p in paths(tmp_path, 100)] == [
        {"i": i, "pad": "x" * 2000} for i in range(100)
    ]
