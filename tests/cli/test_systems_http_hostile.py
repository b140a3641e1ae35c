"""`--system http://...` against hostile endpoints on 127.0.0.1 (issue 29): its requests go
through lasagna-judge's sender, so a trickling server fails at the attempt's deadline, a
gzip bomb, malformed framing or a certificate not trusted fail at once (no retry can
cure them), and a proxy's 407 says so; each is the question's SystemFailure."""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests._hostile_http import MALFORMED, PROXY_407, Raw, gzip_bomb, ok, raw_fixture

from lasagna_cli.engine.systems._errors import SystemFailure
from lasagna_cli.engine.systems._http import HttpSystem
from lasagna_cli.engine.systems._spec import SystemSpec
from lasagna_judge import Proxies

ANSWER = b'{"answer": "yes", "retrieved": []}'


@pytest.fixture
def raw(loop_server: Callable[..., Any]) -> Callable[..., Raw]:
    return raw_fixture(loop_server)


def ask(url: str, **spec: Any) -> Any:
    """One question to the system at `url`: its output, or the SystemFailure it raised."""
    system = HttpSystem(
        SystemSpec("http", url, **{"timeout": 1.0, "retries": 2, "backoff": 0.01, **spec}), 2
    )

    async def go() -> Any:
        try:
            return await system.ask("q?", {"id": "q01"}, 3)
        except SystemFailure as exc:
            return exc
        finally:
            await system.aclose()

    return asyncio.run(go())


def test_the_contract_still_holds(raw: Any) -> None:
    server = raw(lambda n, r: ok(ANSWER))
    assert ask(f"http://127.0.0.1:{server.port}/answer", headers=(("X-Key", "k"),)) == {
        "answer": "yes",
        "retrieved": [],
    }
    head = server.requests[0].decode()
    assert head.startswith("POST /answer HTTP/1.1\r\n") and "\r\nX-Key: k\r\n" in head
    assert head.endswith('{"question": "q?", "id": "q01", "top_k": 3}')


def test_a_trickling_endpoint_fails_at_each_attempts_deadline(raw: Any) -> None:
    async def trickle(writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\n")
        while True:  # a header byte every 0.2 s: never idle for the 1 s timeout
            writer.write(b"X")
            await writer.drain()
            await asyncio.sleep(0.2)

    server = raw(lambda n, r: trickle)
    started = time.monotonic()
    failure = ask(f"http://127.0.0.1:{server.port}/answer")
    assert time.monotonic() - started < 5
    assert str(failure) == (
        f"http://127.0.0.1:{server.port}/answer: no reply within 1 s (after 3 attempts)"
    )


@pytest.mark.parametrize(
    "name", ["gzip bomb", "duplicate Content-Length", "0x chunk size", "untrusted certificate"]
)
def test_what_no_retry_cures_fails_at_once(
    raw: Any, name: str, tls_files: tuple[Path, Path]
) -> None:
    tls = None
    if name == "gzip bomb":
        bomb = gzip_bomb(256 << 20)
        server = raw(lambda n, r: ok(bomb, "Content-Encoding: gzip"))
        said = "sent a reply larger than 64 MB after decompression"
    elif name == "untrusted certificate":
        tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        tls.load_cert_chain(*tls_files)
        server = raw(lambda n, r: ok(ANSWER), tls=tls)
        said = "its certificate is not trusted (untrusted: self-signed certificate)"
    else:
        reply, reason = MALFORMED[name]
        server = raw(lambda n, r: reply)
        said = f"sent a reply that is not valid HTTP/1.1 ({reason})"
    scheme = "https" if tls else "http"
    failure = ask(f"{scheme}://127.0.0.1:{server.port}/answer")
    assert isinstance(failure, SystemFailure) and said in str(failure), failure
    assert len(server.requests) <= 1  # one attempt (none got through TLS)


def test_a_proxy_asking_for_credentials_says_so(raw: Any) -> None:
    proxy = raw(lambda n, r: PROXY_407)
    proxies = Proxies(http=f"http://127.0.0.1:{proxy.port}")
    failure = ask("http://rag.example/answer", proxies=proxies)
    assert str(failure).startswith(
        f"http://rag.example/answer: the proxy http://127.0.0.1:{proxy.port} answered HTTP 407 "
        "(proxy authentication required)"
    )
    assert len(proxy.requests) == 1
