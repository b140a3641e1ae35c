"""Atomic result files: whole or absent, and no temporary file left after a failed write."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lasagna_cli.engine.records._store import (
    TEMP_PREFIX,
    dump_json,
    dump_task_json,
    is_finished,
    open_folder,
    read_json,
    remove_stale_temp_files,
    write_json_atomic,
)


def test_write_then_read_round_trips_and_creates_folders(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "result.json"
    write_json_atomic(target, {"ok": {"result": "é", "n": 1}})
    assert read_json(target) == {"ok": {"result": "é", "n": 1}}
    assert is_finished(target)
    assert list(tmp_path.rglob(f"{TEMP_PREFIX}*")) == []


def test_failed_write_leaves_the_old_file_and_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "result.json"
    write_json_atomic(target, {"v": 1})
    with pytest.raises(TypeError):
        write_json_atomic(target, {"v": object()})
    assert read_json(target) == {"v": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.json"]


def test_empty_or_missing_file_is_not_finished(tmp_path: Path) -> None:
    assert not is_finished(tmp_path / "missing.json")
    (tmp_path / "empty.json").write_bytes(b"")
    assert not is_finished(tmp_path / "empty.json")
    assert read_json(tmp_path / "empty.json") is None


def test_stale_temp_files_from_a_killed_writer_are_removed(tmp_path: Path) -> None:
    # A child process that dies (SIGKILL) between writing its temp file and the rename.
    code = (
        "import os, signal, tempfile, sys;"
        f"fd, name = tempfile.mkstemp(prefix={TEMP_PREFIX!r}, dir=sys.argv[1]);"
        "os.write(fd, b'{\"half');"
        "os.kill(os.getpid(), signal.SIGKILL)"
    )
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=False)
    assert len(list(tmp_path.glob(f"{TEMP_PREFIX}*"))) == 1
    assert remove_stale_temp_files(tmp_path) == 1
    assert os.listdir(tmp_path) == []


def test_a_result_folder_is_made_and_cleared_or_refused_in_one_line(tmp_path: Path) -> None:
    from lasagna_cli.engine._errors import EngineUsageError

    folder = tmp_path / "runs" / "a"
    with open_folder(folder, "-o a") as removed:
        assert removed == 0 and folder.is_dir()
    (folder / f"{TEMP_PREFIX}x").write_text("half")
    (folder / "kept.json").write_text("{}")
    with open_folder(folder, "-o a") as removed:
        assert removed == 1
    assert os.listdir(folder) == ["kept.json"]
    (tmp_path / "file").write_text("")
    with pytest.raises(EngineUsageError) as caught:
        out = tmp_path / "file" / "out"
        with open_folder(out, f"--output {out}", "the run folder"):
            pass
    assert str(caught.value).startswith(
        f"--output {tmp_path / 'file' / 'out'}: cannot create the run folder ("
    )
    assert str(caught.value).endswith("); choose another")


def test_a_folder_in_use_is_refused_and_its_temporary_files_kept(tmp_path: Path) -> None:
    """A second process in a run folder neither runs nor clears the first one's temporary
    files (the first one's next rename would fail); a killed holder frees the folder."""
    from lasagna_cli.engine._errors import EngineUsageError

    folder = tmp_path / "run"
    folder.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDONLY); "
         "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); time.sleep(60)",
         str(folder)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        (folder / f"{TEMP_PREFIX}in-flight").write_text("half")
        refused = pytest.raises(EngineUsageError, match="another lasagna process is writing in")
        with refused, open_folder(folder, "-o run"):
            pass
        assert (folder / f"{TEMP_PREFIX}in-flight").exists()
    finally:
        holder.kill()  # SIGKILL: the kernel lets go of the lock
        holder.communicate()
    with open_folder(folder, "-o run") as removed:
        assert removed == 1


def test_encoding_is_stable(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    write_json_atomic(a, {"b": 1, "a": [1, 2]})
    write_json_atomic(b, {"a": [1, 2], "b": 1})
    assert a.read_bytes() == b.read_bytes()
    assert json.loads(a.read_text()) == {"a": [1, 2], "b": 1}


def test_task_files_are_one_line_and_reports_are_indented() -> None:
    record = {"ok": {"result": "é\nline two", "stats": {"b": [1, 2], "a": None}}}
    line = dump_task_json(record)
    assert line == (
        '{"ok": {"result": "é\\nline two", "stats": {"a": null, "b": [1, 2]}}}\n'.encode()
    )
    indented = dump_json(record)
    assert indented.startswith(b'{\n "ok": {\n  "result"') and indented.endswith(b"}\n")
    assert json.loads(line) == json.loads(indented) == record


def test_indented_files_are_json_s_layout_with_long_lists_one_item_a_line() -> None:
    from lasagna_cli.engine.records._json_layout import LONG_LIST

    small = {"z": [1, {"b": [], "a": {}}], "é": None, 3: 1.5, "nested": [[True, "x"]]}
    with pytest.raises(TypeError):  # json refuses to sort mixed keys; so does the layout
        dump_json(small)
    del small[3]
    assert (
        dump_json(small)
        == (json.dumps(small, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()
    )
    rows = [{"id": f"q{i}", "ranking": [["d1", 2.0], ["d2", 1.0]]} for i in range(LONG_LIST + 1)]
    text = dump_json({"results": [{"per_query": rows, "n": 1}]}).decode()
    lines = text.splitlines()
    assert '    {"id": "q0", "ranking": [["d1", 2.0], ["d2", 1.0]]},' in lines
    assert len(lines) == len(rows) + 9  # each row one line, around it json's own layout
    assert json.loads(text) == {"results": [{"per_query": rows, "n": 1}]}


def test_a_run_s_records_skip_the_fsyncs_and_are_flushed_in_groups(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    from lasagna_cli.engine.records import _writer

    fsyncs: list[int] = []
    flushes: list[Path] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (fsyncs.append(fd), real_fsync(fd))[1])
    monkeypatch.setattr(_writer, "sync_filesystem", flushes.append)
    paths = [tmp_path / "tasks" / f"t{i}.json" for i in range(40)]

    async def write_all(every: float) -> None:
        monkeypatch.setattr(_writer, "SYNC_EVERY", every)
        async with _writer.Writer() as writer:
            await asyncio.gather(
                *(writer.write(p, dump_task_json({"i": i})) for i, p in enumerate(paths))
            )

    asyncio.run(write_all(3600.0))
    assert [read_json(p) for p in paths] == [{"i": i} for i in range(40)]
    assert fsyncs == [] and list(tmp_path.rglob(f"{TEMP_PREFIX}*")) == []
    assert flushes == [tmp_path / "tasks"]  # once, when the writer closes
    flushes.clear()
    asyncio.run(write_all(0.0))
    assert len(flushes) == 41  # one group per write, and the last one at the close


def test_records_are_written_off_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A slow disk never stalls the requests in flight: every write is on the pool."""
    import asyncio
    import threading

    from lasagna_cli.engine.records import _writer

    threads: list[str] = []
    real = _writer.write_bytes_atomic

    def write(path: Path, data: bytes, *, sync: bool = True) -> None:
        threads.append(threading.current_thread().name)
        real(path, data, sync=sync)

    monkeypatch.setattr(_writer, "write_bytes_atomic", write)

    async def write_all() -> None:
        async with _writer.Writer() as writer:
            for i in range(20):
                await writer.write(tmp_path / f"t{i}.json", dump_task_json({"i": i}))

    asyncio.run(write_all())
    assert len(threads) == 20 and all(name.startswith("lasagna-write") for name in threads)
    assert [read_json(tmp_path / f"t{i}.json") for i in range(20)] == [{"i": i} for i in range(20)]


def test_sync_filesystem_flushes_a_folder_or_falls_back_to_sync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lasagna_synth import sync_filesystem

    calls: list[str] = []
    monkeypatch.setattr(os, "sync", lambda: calls.append("sync"))
    sync_filesystem(tmp_path)  # syncfs on Linux: no fallback needed
    assert calls == ([] if sys.platform == "linux" else ["sync"])
    sync_filesystem(tmp_path / "missing")  # cannot be opened: the whole machine instead
    assert calls[-1] == "sync"
