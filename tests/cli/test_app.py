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


def test_every_command_is_mapped_to_the_module_that_registers_it() -> None:
    """The console script loads only the module `COMMAND_MODULES` names for the command
    it runs: a command missing there, or mapped to another module, would not exist."""
    from lasagna_cli._app import app
    from lasagna_cli.commands._app import COMMAND_MODULES

    found = {}
    for group in app.registered_groups:
        sub = group.typer_instance
        for command in sub.registered_commands:
            found[(group.name, command.name)] = command.callback.__module__
        for inner in sub.registered_groups:  # a group of its own (stats), by its callback
            assert inner.typer_instance.registered_callback is not None
            found[(group.name, inner.name)] = (
                inner.typer_instance.registered_callback.callback.__module__
            )
    assert {k: f"lasagna_cli.commands.{v}" for k, v in COMMAND_MODULES.items()} == found


def test_a_command_loads_its_own_module_only_and_a_group_s_help_loads_all() -> None:
    program = (
        "import sys\n"
        "from lasagna_cli._app import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('lasagna_cli.commands._')"
        " and m.rsplit('.', 1)[1] in ('_report', '_judge', '_sweep', '_synthesize')))\n"
    )

    def loaded(*args: str) -> tuple[str, str]:
        done = subprocess.run(
            [sys.executable, "-c", program, *args], capture_output=True, text=True, timeout=60
        )
        return done.stdout.strip().splitlines()[-1], done.stdout

    last, out = loaded("benchmark", "sweep", "--help")
    assert last == "['lasagna_cli.commands._sweep']" and "--datasets" in out
    last, out = loaded("benchmark", "--help")
    assert "_report" in last and "_synthesize" in last and "sweep" in out and "report" in out
    last, out = loaded("judge", "grade", "--help")
    assert last == "['lasagna_cli.commands._judge']" and "--model" in out
