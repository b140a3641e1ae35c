"""Fixtures shared by every member's tests. Only the standard library and pytest here:
each member's tests must also run with only that member installed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

Spawn = Callable[..., "subprocess.Popen[str]"]
Interrupt = Callable[[Sequence[str], Mapping[str, str], Callable[[], bool]], tuple[int, str, str]]
Kill = Callable[..., int]


def _take_ctrl_c() -> None:
    # A suite started under nohup, or by a CI runner that starts jobs that way, hands its
    # children SIGINT ignored, and Python then never raises KeyboardInterrupt: give the
    # child the terminal's default so a test's Ctrl-C reaches it.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def spawn() -> Iterator[Spawn]:
    """`spawn(command, **popen_args)`: a child process (text mode) that takes Ctrl-C however
    the suite was started, and is killed at teardown if the test left it running."""
    children: list[subprocess.Popen[str]] = []

    def start(command: Sequence[str], **popen_args: Any) -> subprocess.Popen[str]:
        child = subprocess.Popen(list(command), text=True, preexec_fn=_take_ctrl_c, **popen_args)
        children.append(child)
        return child

    yield start
    for child in children:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=30)


@pytest.fixture
def ctrl_c_when(spawn: Spawn) -> Interrupt:
    """`ctrl_c_when(command, env, ready)`: start `command`, press Ctrl-C (SIGINT) as a user
    would as soon as `ready()` holds, and return its exit code, stdout and stderr."""

    def interrupt(
        command: Sequence[str], env: Mapping[str, str], ready: Callable[[], bool]
    ) -> tuple[int, str, str]:
        process = spawn(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(env))
        deadline = time.monotonic() + 60
        while not ready() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=60)
        return process.returncode, stdout, stderr

    return interrupt


@pytest.fixture
def sigkill_when(spawn: Spawn) -> Kill:
    """`sigkill_when(command, ready, env=None, within=60)`: start `command` (its output
    dropped), SIGKILL it as soon as `ready()` holds (or after `within` seconds), and return
    its exit code once it is gone."""

    def kill(
        command: Sequence[str],
        ready: Callable[[], bool],
        env: Mapping[str, str] | None = None,
        within: float = 60,
    ) -> int:
        env_args = {} if env is None else {"env": dict(env)}
        process = spawn(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **env_args)
        deadline = time.monotonic() + within
        while not ready() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        process.send_signal(signal.SIGKILL)
        return process.wait(timeout=30)

    return kill


def _children() -> list[str]:
    """The command lines of this process's live children (zombies are already dead)."""
    found = []
    for stat_file in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat_file.read_text().rsplit(")", 1)[1].split()
            command = (stat_file.parent / "cmdline").read_bytes()
        except (OSError, IndexError):
            continue  # gone meanwhile
        if int(fields[1]) == os.getpid() and fields[0] != "Z":
            found.append(command.replace(b"\0", b" ").decode(errors="replace").strip())
    return found


@pytest.fixture(scope="session", autouse=True)
def no_process_left_behind() -> Iterator[None]:
    """Every test that starts a process stops it: checked once, when the suite ends."""
    yield
    if sys.platform == "linux":
        left = _children()
        assert not left, f"the tests left {len(left)} process(es) running: {left}"


@pytest.fixture(scope="session")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(certificate, key) of a self-signed certificate for 127.0.0.1, made by the openssl
    command: a client that trusts the certificate can speak TLS to a server that holds both."""
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key
