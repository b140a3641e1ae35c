"""Never lose paid work to a bad output path; files others can read.

Every command that writes checks, before it loads a model or makes a call, that it can
create and rename a file where it will write: a read-only folder (or a new folder under
one) is one line naming the path and exit 2, and the fake server has seen no call. Written
files get the mode the user's umask gives (0644 under 022), not mkstemp's 0600.

Running as root (CI containers often do), a read-only folder is writable all the same, so
the fixture also makes the operating system's refusal happen where lasagna writes (the
one atomic writer's temporary file, and folder creation) for paths under that folder.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_judge.testing import FakeLLMServer

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


@pytest.fixture
def read_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "locked"
    folder.mkdir()
    if os.geteuid() == 0:  # root writes anywhere: refuse as the OS would for anyone else
        from lasagna_synth import _atomic

        real_create_temp, real_mkdir = _atomic._create_temp, Path.mkdir

        def create_temp(where: Path) -> Any:
            where = where.resolve()
            if where == folder or folder in where.parents:
                raise PermissionError(13, "Permission denied")
            return real_create_temp(where)

        def mkdir(self: Path, *args: Any, **kwargs: Any) -> None:
            target = self.resolve()
            if folder in target.parents and not target.exists():
                raise PermissionError(13, "Permission denied")
            real_mkdir(self, *args, **kwargs)

        monkeypatch.setattr(_atomic, "_create_temp", create_temp)
        monkeypatch.setattr(Path, "mkdir", mkdir)
    folder.chmod(0o555)
    yield folder
    folder.chmod(0o755)


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(reply="Not mentioned") as fake:
        yield fake


def invoke(args: list[str], server: FakeLLMServer, tmp_path: Path) -> Any:
    env = {
        "OPENAI_API_KEY": "k",
        "OPENAI_BASE_URL": server.base_url,
        "LASAGNA_CACHE_DIR": str(tmp_path / "cache"),
        "MODEL_NAME": "",
    }
    return CliRunner().invoke(app, args, env=env, catch_exceptions=False)


def refused(result: Any, server: FakeLLMServer, path: Path) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and str(path) in lines[0], result.stderr
    assert "cannot" in lines[0]
    assert server.calls == 0


def places(read_only: Path) -> list[Path]:
    """Where a test writes: the read-only folder itself, and a new folder under it."""
    return [read_only, read_only / "new"]


def test_run_into_a_read_only_folder(
    read_only: Path, server: FakeLLMServer, tmp_path: Path
) -> None:
    args = ["benchmark", "run", str(EXAMPLES / "data" / "pasta.jsonl"), "--generator",
            "openai/gen"]  # fmt: skip
    for out in places(read_only):
        refused(invoke([*args, "-o", str(out)], server, tmp_path), server, out)


def test_the_staged_pipeline_into_a_read_only_folder(
    read_only: Path, server: FakeLLMServer, tmp_path: Path
) -> None:
    data = EXAMPLES / "data" / "locomo-mini"
    args = ["benchmark", "run", "locomo", "--data-dir", str(data), "--step", "gen", "--generator",
            "openai/gen"]  # fmt: skip
    for out in places(read_only):
        refused(invoke([*args, "-o", str(out)], server, tmp_path), server, out)


def test_a_sweep_into_a_read_only_folder(
    read_only: Path, server: FakeLLMServer, tmp_path: Path
) -> None:
    (tmp_path / "datasets.json").write_text(json.dumps({"facts": {"q1": {"input": "Who?"}}}))
    (tmp_path / "setups.toml").write_text('[a]\nprovider = "fake"\nmodel = "m"\n')
    (tmp_path / "config.toml").write_text(
        f'[providers.fake]\napi = "openai"\nbase_url = "{server.base_url}"\n'
    )
    args = ["benchmark", "sweep", "-d", str(tmp_path / "datasets.json"), "-b",
            str(tmp_path / "setups.toml")]  # fmt: skip
    for out in places(read_only):
        result = invoke([*args, "-o", str(out)], server, tmp_path)
        refused(result, server, out)
        assert "recorded" not in result.output


def test_judge_grade_into_a_read_only_folder(
    read_only: Path, server: FakeLLMServer, tmp_path: Path
) -> None:
    args = ["judge", "grade", str(EXAMPLES / "judge" / "answers.jsonl"), "--model",
            "openai/judge"]  # fmt: skip
    for folder in places(read_only):
        out = folder / "graded.jsonl"
        refused(invoke([*args, "--out", str(out)], server, tmp_path), server, out)


def test_synthesize_into_a_read_only_folder(
    read_only: Path, server: FakeLLMServer, tmp_path: Path
) -> None:
    args = ["benchmark", "synthesize", str(EXAMPLES / "docs"), "--n", "2", "--model",
            "openai/gen"]  # fmt: skip
    for folder in places(read_only):
        out = folder / "qa.jsonl"
        refused(invoke([*args, "--out", str(out)], server, tmp_path), server, out)


def test_sample_into_a_read_only_folder(
    read_only: Path, server: FakeLLMServer, tmp_path: Path
) -> None:
    args = ["benchmark", "sample", "locomo", "--data-dir", str(EXAMPLES / "data" / "locomo-mini"),
            "--full"]  # fmt: skip
    for out in places(read_only):
        refused(invoke([*args, "-o", str(out)], server, tmp_path), server, out)


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600)])
def test_written_files_follow_the_umask(tmp_path: Path, umask: int, mode: int) -> None:
    out = tmp_path / "run"
    command = [str(Path(sys.executable).with_name("lasagna")), "benchmark", "run",
               str(EXAMPLES / "data" / "pasta.jsonl"), "-o", str(out)]  # fmt: skip
    done = subprocess.run(
        command, capture_output=True, text=True, preexec_fn=lambda: os.umask(umask), timeout=120
    )
    assert done.returncode == 0, done.stderr
    written = [out / "results.json", out / "manifest.json", *out.glob("tasks/*/*/*")]
    assert len(written) > 2
    for path in written:
        assert stat.S_IMODE(path.stat().st_mode) == mode, path
    assert json.loads((out / "results.json").read_text())["results"]


def disk_full_after(writes: int, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The engine's record writer fills the disk after `writes` files; returns those kept."""
    from lasagna_cli.engine.records import _writer

    real, kept = _writer.write_bytes_atomic, []

    def write(path: Path, data: bytes, *, sync: bool = True) -> None:
        if len(kept) >= writes:
            raise OSError(28, "No space left on device")
        real(path, data, sync=sync)
        kept.append(path)

    monkeypatch.setattr(_writer, "write_bytes_atomic", write)
    return kept


def test_a_run_whose_disk_fills_stops_with_one_line_and_keeps_what_it_wrote(
    tmp_path: Path, server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = disk_full_after(3, monkeypatch)
    out = tmp_path / "run"
    args = ["benchmark", "run", str(EXAMPLES / "data" / "pasta.jsonl"), "--generator",
            "openai/gen", "--concurrency", "1", "-o", str(out)]  # fmt: skip
    result = invoke(args, server, tmp_path)
    assert result.exit_code == 1, result.output
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("error")]
    assert "No space left on device" in line and "results written before are kept" in line
    assert "Traceback" not in result.output and "recorded" not in result.output
    assert len(kept) == 3 and all(json.loads(path.read_text()) for path in kept)


def test_a_sweep_whose_disk_fills_never_claims_a_record(
    tmp_path: Path, server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = disk_full_after(2, monkeypatch)
    questions = {f"q{i}": {"input": f"Who {i}?"} for i in range(6)}
    (tmp_path / "datasets.json").write_text(json.dumps({"facts": questions}))
    (tmp_path / "setups.toml").write_text('[a]\nprovider = "fake"\nmodel = "m"\n')
    (tmp_path / "config.toml").write_text(
        f'[providers.fake]\napi = "openai"\nbase_url = "{server.base_url}"\n'
    )
    args = ["benchmark", "sweep", "-d", str(tmp_path / "datasets.json"), "-b",
            str(tmp_path / "setups.toml"), "--parallel", "1",
            "-o", str(tmp_path / "out")]  # fmt: skip
    result = invoke(args, server, tmp_path)
    assert result.exit_code == 1, result.output
    assert "No space left on device" in result.stderr
    assert "recorded" not in result.output and "--retry-errors" not in result.output
    assert len(kept) == 2 and sorted((tmp_path / "out").rglob("*.json")) == sorted(kept)


@pytest.mark.parametrize("command", [["benchmark", "report"], ["benchmark", "export"]])
def test_a_folder_named_as_the_output_file_is_one_line(tmp_path: Path, command: list[str]) -> None:
    """`-o FOLDER` where a file is written: one line and exit 2 (a traceback before), the
    folder left as it was."""
    data = tmp_path / "q.jsonl"
    data.write_text(
        json.dumps({"id": "q1", "question": "What is pasta?", "answer": "dough",
                    "contexts": ["pasta is dough"]}) + "\n", encoding="utf-8",
    )  # fmt: skip
    ran = CliRunner().invoke(app, ["benchmark", "run", str(data), "-o", str(tmp_path / "run")])
    assert ran.exit_code == 0, ran.output
    folder = tmp_path / "taken"
    (folder / "inside").mkdir(parents=True)
    result = CliRunner().invoke(app, [*command, str(tmp_path / "run"), "-o", str(folder)])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"error: -o {folder}: expected a file, found a folder; give a file's path"
    ]
    assert [p.name for p in folder.iterdir()] == ["inside"]


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
@pytest.mark.parametrize("command", [["benchmark", "report"], ["benchmark", "export"]])
def test_a_folder_that_takes_no_new_file_is_one_line(tmp_path: Path, command: list[str]) -> None:
    """`-o` in a folder that exists but where no file can be created (/proc answers "No such
    file or directory", as a missing folder does): one line and exit 2. The atomic writer
    made the folder and tried again forever before."""
    data = EXAMPLES / "data" / "pasta.jsonl"
    ran = CliRunner().invoke(app, ["benchmark", "run", str(data), "-o", str(tmp_path / "run")])
    assert ran.exit_code == 0, ran.output
    lasagna = str(Path(sys.executable).with_name("lasagna"))
    result = subprocess.run(  # its own process: a hang fails the test, never the suite
        [lasagna, *command, str(tmp_path / "run"), "-o", "/proc/x.html"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        "error: -o /proc/x.html: cannot write files in the folder (No such file or directory); "
        "make it writable or choose another"
    ]
