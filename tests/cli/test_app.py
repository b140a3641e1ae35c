"""The `lasagna` entry point: help, version, and how fast they answer."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import lasagna_cli

LASAGNA = Path(sys.executable).with_name("lasagna")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LASAGNA), *args], capture_output=True, text=True, env=os.environ, timeout=60
    )


def test_version_names_every_member() -> None:
    result = run("--version")
    assert result.returncode == 0
    assert result.stdout.startswith(f"lasagna {lasagna_cli.__version__} ")
    for member in ("lasagna-metrics", "lasagna-judge", "lasagna-synth"):
        assert member in result.stdout


def test_help_lists_the_command_groups_and_is_instant() -> None:
    run("--help")  # warm the file cache
    start = time.perf_counter()
    result = run("--help")
    elapsed = time.perf_counter() - start
    assert result.returncode == 0
    for group in ("benchmark", "judge", "metrics"):
        assert group in result.stdout
    assert elapsed < 1.0, f"lasagna --help took {elapsed:.2f}s"


def test_unknown_command_is_a_usage_error_without_traceback() -> None:
    result = run("frobnicate")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "frobnicate" in result.stderr


def test_ctrl_c_in_a_command_without_its_own_handler_says_one_line(
    tmp_path: Path, spawn: Any
) -> None:
    # `metrics squad` reading a FIFO blocks in read(); Ctrl-C there reaches no handler of
    # the command's, and typer alone would exit 130 without a word.
    fifo = tmp_path / "predictions.json"
    os.mkfifo(fifo)
    dataset = Path(__file__).resolve().parents[2] / "examples" / "squad" / "dataset.json"
    with spawn(
        [str(LASAGNA), "metrics", "squad", str(fifo), str(dataset)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as child:
        deadline = time.monotonic() + 30
        while True:  # the writing end opens once the command holds the FIFO for reading
            try:
                writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError:
                assert time.monotonic() < deadline and child.poll() is None
                time.sleep(0.01)
        try:
            time.sleep(0.2)  # from open() into read()
            child.send_signal(signal.SIGINT)
            out, err = child.communicate(timeout=30)
        finally:
            os.close(writer)
    assert child.returncode == 130
    assert err == "interrupted\n" and out == ""
