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


Handler = Callable[[Any, Any], Any]
"""An asyncio.start_server handler: `async def handle(reader, writer)`."""


class LoopServer:
    """A TCP server on 127.0.0.1, served by an event loop in a thread of its own: `handler`
    serves each connection; connections still open when it stops are cancelled, and their
    writers closed, so that nothing is left for the garbage collector to warn about."""

    def __init__(self, handler: Handler, tls: Any = None) -> None:
        import asyncio
        import threading

        self.port = 0
        self._handler = handler
        self._tls = tls
        self._serving: set[Any] = set()
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> LoopServer:
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    def _run(self) -> None:
        self._loop.run_until_complete(self._main())
        self._loop.close()

    async def _main(self) -> None:
        import asyncio

        self._stop = asyncio.Event()
        server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self._tls)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        async with server:
            await self._stop.wait()
            for task in list(self._serving):
                task.cancel()
            await asyncio.gather(*self._serving, return_exceptions=True)
            await asyncio.sleep(0)  # the closed transports' last callbacks, before the loop ends

    async def _serve(self, reader: Any, writer: Any) -> None:
        import asyncio

        task = asyncio.current_task()
        self._serving.add(task)
        try:
            await self._handler(reader, writer)
        except (OSError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            self._serving.discard(task)
            writer.close()


@pytest.fixture
def loop_server() -> Iterator[Callable[..., LoopServer]]:
    """`loop_server(handler, tls=None)`: a started `LoopServer`, stopped at teardown."""
    servers: list[LoopServer] = []

    def start(handler: Handler, tls: Any = None) -> LoopServer:
        server = LoopServer(handler, tls)
        servers.append(server.__enter__())
        return server

    yield start
    for server in servers:
        server.__exit__()
