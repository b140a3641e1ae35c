"""Fixtures shared by every member's tests. Only the standard library and pytest here:
each member's tests must also run with only that member installed."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence

import pytest

Interrupt = Callable[[Sequence[str], Mapping[str, str], Callable[[], bool]], tuple[int, str, str]]


def _ctrl_c_when(
    command: Sequence[str], env: Mapping[str, str], ready: Callable[[], bool]
) -> tuple[int, str, str]:
    """Start `command`, press Ctrl-C (SIGINT) as soon as `ready()` holds, and return its
    exit code, stdout and stderr."""
    process = subprocess.Popen(
        list(command), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(env)
    )
    deadline = time.monotonic() + 60
    while not ready() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    return process.returncode, stdout, stderr


@pytest.fixture
def ctrl_c_when() -> Interrupt:
    """`ctrl_c_when(command, env, ready)`: a long command interrupted as a user would."""
    return _ctrl_c_when
