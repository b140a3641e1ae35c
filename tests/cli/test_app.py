"""The `lasagna` entry point: help, version, and how fast they answer."""

import os
import subprocess
import sys
import time
from pathlib import Path

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
