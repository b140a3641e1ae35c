"""Hostile config files: kag's templates that loop without end, double a string until memory
runs out, or read a FIFO with file(); and TOML nested 100,000 deep in every TOML a command
reads (SETUPS.toml, a sweep file, --prices, --rubric). Each is one line naming the file (and
the setup where there is one), never a hang, an abort or a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_cli.engine._errors import EngineError
from lasagna_cli.engine.kag._files import render_setups

ROOT = Path(__file__).resolve().parents[2]
PASTA = ROOT / "examples" / "data" / "pasta.jsonl"
LABELS = ROOT / "examples" / "judge" / "labels.jsonl"
DEAD = "http://127.0.0.1:9/v1"
LOOPS = "{% for i in range(10000) %}{% for j in range(10000) %}x{% endfor %}{% endfor %}"
DOUBLED = '{% set s = "ab" %}' + "{% set s = s ~ s %}" * 36 + "{{ s }}"


def setups(prompt: str) -> str:
    plain = '[plain]\nprovider = "openai"\nmodel = "m"\n\n'
    return plain + f'[looping]\nprovider = "openai"\nmodel = "m"\nsystem_prompt = "{prompt}"\n'


def sweep(tmp_path: Path, text: str) -> list[str]:
    (tmp_path / "datasets.json").write_text(json.dumps({"d": {"q": {"input": "Why?"}}}))
    (tmp_path / "setups.toml").write_text(text, encoding="utf-8")
    return [
        "benchmark", "sweep", "-d", str(tmp_path / "datasets.json"), "-b",
        str(tmp_path / "setups.toml"), "-o", str(tmp_path / "out"),
    ]  # fmt: skip


def one_line(output: str) -> str:
    assert "Traceback" not in output
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1, output
    return lines[0]


def test_nested_loops_in_a_prompt_run_out_of_fuel_naming_the_setup(tmp_path: Path) -> None:
    started = time.monotonic()
    result = CliRunner().invoke(app, sweep(tmp_path, setups(LOOPS)))
    assert time.monotonic() - started < 20
    assert result.exit_code == 1, result.output
    line = one_line(result.output)
    assert "setup 'looping'" in line and "ran out of fuel" in line
    assert "1,000,000 steps of work" in line


def test_a_string_doubled_36_times_is_a_line_not_an_abort(tmp_path: Path) -> None:
    """In a process of its own: MiniJinja aborts the process when an allocation fails."""
    command = [
        sys.executable, "-c", "from lasagna_cli._app import main; main()",
        *sweep(tmp_path, setups(DOUBLED)),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, (done.returncode, done.stderr)
    line = one_line(done.stderr)
    assert "setup 'looping'" in line and "ran out of fuel" in line


def test_file_refuses_a_fifo_without_waiting_for_it(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "fifo.txt")
    path = tmp_path / "SETUPS.toml"
    source = setups("{{ file('fifo.txt') }}")
    started = time.monotonic()
    with pytest.raises(EngineError) as refused:
        render_setups(source, path, {})
    assert time.monotonic() - started < 10
    message = str(refused.value)
    assert "file('fifo.txt')" in message and "a named pipe (FIFO), not a regular file" in message


def test_file_refuses_a_file_over_its_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lasagna_cli.engine.kag import _files

    monkeypatch.setattr(_files, "FILE_MAX_BYTES", 100)
    (tmp_path / "big.txt").write_text("x" * 101, encoding="utf-8")
    with pytest.raises(EngineError, match=r"101 bytes: over 0 MB, the most file\(\) reads"):
        render_setups(setups("{{ file('big.txt') }}"), tmp_path / "SETUPS.toml", {})


DEEP_ARRAY = "x = " + "[" * 100_000 + "]" * 100_000 + "\n"
DEEP_KEY = "a" + ".a" * 100_000 + " = 1\n"
DEEP = "arrays, tables or dotted keys nested too deep to read (over 100 levels)"


@pytest.mark.parametrize("deep", [DEEP_ARRAY, DEEP_KEY], ids=["arrays", "dotted key"])
@pytest.mark.parametrize("file", ["SETUPS.toml", "sweep file", "--prices", "--rubric"])
def test_toml_nested_100_000_deep_is_one_line(file: str, deep: str, tmp_path: Path) -> None:
    path = tmp_path / "deep.toml"
    if file == "SETUPS.toml":
        args = sweep(tmp_path, deep)
        expected = 1
    else:
        path.write_text(deep, encoding="utf-8")
        args = {
            "sweep file": ["benchmark", "run", str(path), "-o", str(tmp_path / "out")],
            "--prices": ["benchmark", "run", str(PASTA), "--prices", str(path), "-o",
                         str(tmp_path / "out")],
            "--rubric": ["judge", "grade", str(LABELS), "--rubric", str(path), "--model",
                         "openai/judge", "--base-url", DEAD],
        }[file]  # fmt: skip
        expected = 2 if file == "sweep file" else 1
    started = time.monotonic()
    result = CliRunner().invoke(app, args, env={"OPENAI_API_KEY": "test"})
    assert time.monotonic() - started < 20
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.exit_code == expected, result.output
    assert DEEP in one_line(result.output)
    assert not (tmp_path / "out").exists()
