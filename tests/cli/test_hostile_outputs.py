"""Paid work and where it goes: a full disk under -o or under the cache, -o naming a device,
a pipe or a link, and a second process in a run folder. Each is a line on stderr, and no
grade or call that was paid for is lost or paid twice. Models are the fake
OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import resource
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_judge.testing import FakeLLMServer

ROOT = Path(__file__).resolve().parents[2]
GRADE = json.dumps({"reasoning": "it matches", "score": 4})
FULL = Path("/dev/full")
needs_dev_full = pytest.mark.skipif(
    not FULL.exists() or not stat.S_ISCHR(FULL.stat().st_mode), reason="no /dev/full here"
)


def rows(tmp_path: Path, n: int) -> Path:
    path = tmp_path / "in.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": i, "question": f"q{i}?", "answers": "a", "prediction": f"p{i}"})
            + "\n"
            for i in range(n)
        ),
        encoding="utf-8",
    )
    return path


def grade(server: FakeLLMServer, tmp_path: Path, *extra: str, n: int = 4) -> Any:
    env = {"OPENAI_API_KEY": "test", "LASAGNA_CACHE_DIR": str(tmp_path / "cache")}
    args = ["judge", "grade", str(rows(tmp_path, n)), "--model", "openai/judge"]
    return CliRunner().invoke(app, [*args, "--base-url", server.base_url, *extra], env=env)


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]


@needs_dev_full
def test_grades_that_cannot_be_written_go_to_stdout_in_one_line(tmp_path: Path) -> None:
    """-o through a link to /dev/full, a disk that is always full: the link and the device
    stay what they were, and the graded rows, paid for, come out on standard output."""
    out = tmp_path / "graded.jsonl"
    out.symlink_to(FULL)
    with FakeLLMServer(reply=GRADE) as server:
        result = grade(server, tmp_path, "-o", str(out))
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    (line,) = error_lines(result.stderr)
    assert "No space left on device" in line and "standard output" in line
    assert [json.loads(row)["score"] for row in result.stdout.splitlines()] == [4] * 4
    assert out.is_symlink() and os.readlink(out) == str(FULL)
    assert stat.S_ISCHR(FULL.stat().st_mode)


def test_out_through_a_link_replaces_its_target_and_keeps_the_link(tmp_path: Path) -> None:
    target = tmp_path / "kept" / "graded.jsonl"
    target.parent.mkdir()
    target.write_text("old\n")
    out = tmp_path / "graded.jsonl"
    out.symlink_to(target)
    with FakeLLMServer(reply=GRADE) as server:
        result = grade(server, tmp_path, "-o", str(out))
    assert result.exit_code == 0, result.output
    assert out.is_symlink() and out.resolve() == target
    assert len(target.read_text().splitlines()) == 4


def test_out_naming_a_pipe_is_written_into(tmp_path: Path) -> None:
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(pipe.read_bytes()))
    reader.start()
    with FakeLLMServer(reply=GRADE) as server:
        result = grade(server, tmp_path, "-o", str(pipe))
    reader.join(timeout=30)
    assert result.exit_code == 0, result.output
    assert stat.S_ISFIFO(os.lstat(pipe).st_mode)  # still a pipe, not a regular file
    assert len(got[0].decode().splitlines()) == 4


def _small_files(limit: int) -> None:
    """In the child: files may not grow past `limit` bytes (a disk that fills up), and the
    signal that would kill it for trying is ignored, so the write fails with EFBIG."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def test_a_full_disk_under_the_cache_warns_and_loses_no_paid_grade(tmp_path: Path) -> None:
    with FakeLLMServer(reply=GRADE, latency=0.002) as server:
        env = {
            **os.environ,
            "OPENAI_API_KEY": "test",
            "LASAGNA_CACHE_DIR": str(tmp_path / "cache"),
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        command = [
            sys.executable, "-c", "from lasagna_cli._app import main; main()",
            "judge", "grade", str(rows(tmp_path, 200)), "--model", "openai/judge",
            "--base-url", server.base_url,
        ]  # fmt: skip
        done = subprocess.run(
            command,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            preexec_fn=lambda: _small_files(64 * 1024),
        )
        calls = server.calls
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    warnings = [line for line in done.stderr.splitlines() if "LLM cache" in line]
    assert len(warnings) == 1 and warnings[0].startswith("warning: ")
    assert "going on without it" in warnings[0]
    graded = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(graded) == 200 and all(row["score"] == 4 for row in graded)
    assert calls == 200


def test_a_sweep_continued_beside_the_running_one_is_refused(tmp_path: Path, spawn: Any) -> None:
    """The second process says so and leaves: every call is paid for once."""
    questions = {f"q{i}": {"input": f"question {i}"} for i in range(120)}
    (tmp_path / "datasets.json").write_text(json.dumps({"d": questions}))
    (tmp_path / "setups.toml").write_text('[a]\nprovider = "fake"\nmodel = "m"\n')
    with FakeLLMServer(reply="an answer", latency=0.05) as server:
        (tmp_path / "config.toml").write_text(
            f'[providers.fake]\napi = "openai"\nbase_url = "{server.base_url}"\n'
        )
        command = [
            sys.executable, "-c", "from lasagna_cli._app import main; main()",
            "benchmark", "sweep", "--datasets", str(tmp_path / "datasets.json"),
            "--benchmark", str(tmp_path / "setups.toml"), "--output", str(tmp_path / "out"),
            "--parallel", "2",
        ]  # fmt: skip
        first = spawn(command, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while server.calls < 5 and time.monotonic() < deadline:
            time.sleep(0.01)
        second = subprocess.run(
            [*command, "--continue"], capture_output=True, text=True, timeout=120
        )
        _, stderr = first.communicate(timeout=120)
        assert first.returncode == 0, stderr
        calls = server.calls
    assert second.returncode == 2, second.stderr
    (line,) = error_lines(second.stderr)
    assert "another lasagna process is writing in this folder" in line
    assert "Traceback" not in second.stderr
    assert calls == 120  # not one call paid twice
    files = [p for p in (tmp_path / "out").rglob("*.json") if p.is_file()]
    assert len(files) == 120
