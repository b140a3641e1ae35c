"""Hostile servers on 127.0.0.1 against lasagna-judge's HTTP sender (issue 29), through
`make_llm` as a command uses it: a server that trickles bytes, a gzip bomb, malformed
framing (raw bytes aiohttp's parser must refuse), a certificate not trusted or for another
host, a proxy asking for credentials; and the requests' own bytes: an IDNA 2008 host name,
one Authorization header, a base URL's query string. Each failure is one LLMCallError after
the attempts that could help (one, for what would fail the same way again)."""

from __future__ import annotations

import asyncio
import json
import re
import resource
import ssl
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests._hostile_http import COMPLETION, MALFORMED, PROXY_407, Raw, gzip_bomb, ok, raw_fixture

from lasagna_judge import LLMCallError, Proxies, RetryPolicy, make_embedder, make_llm
from lasagna_judge._wire import HttpSender, WireError, WireRequest


@pytest.fixture
def raw(loop_server: Callable[..., Any]) -> Callable[..., Raw]:
    return raw_fixture(loop_server)


def complete(base_url: str, **options: Any) -> str:
    """One chat completion through `make_llm`, as a command makes it (retries on)."""

    async def go() -> str:
        options.setdefault("retry_policy", RetryPolicy(max_retries=3, base_delay=0.01))
        llm = make_llm(
            "openai/m",
            base_url=base_url,
            cache=False,
            **{"api_key": "k", "timeout": 5.0, **options},
        )
        async with llm:
            return (await llm.complete([{"role": "user", "content": "hi"}])).text

    return asyncio.run(go())


def test_a_server_trickling_a_byte_a_second_fails_at_the_deadline(raw: Any) -> None:
    async def trickle(writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
        await writer.drain()
        while True:  # header lines, one byte every 0.3 s: never idle for the 5 s timeout
            for byte in b"X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n":
                writer.write(bytes([byte]))
                await writer.drain()
                await asyncio.sleep(0.3)

    server = raw(lambda n, r: trickle)
    started = time.monotonic()
    with pytest.raises(LLMCallError) as caught:
        complete(f"http://127.0.0.1:{server.port}/v1", deadline=2.0)
    assert time.monotonic() - started < 4
    assert str(caught.value).endswith(
        f"after 1 attempt: http://127.0.0.1:{server.port} did not finish its reply before the "
        "call's deadline (2 s, retries included)"
    )
    assert len(server.requests) == 1  # no retry once the deadline is spent


def test_the_deadline_covers_the_retries(raw: Any) -> None:
    async def slow_503(writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(0.4)
        writer.write(b"HTTP/1.1 503 Busy\r\nRetry-After: 0\r\nContent-Length: 0\r\n\r\n")

    server = raw(lambda n, r: slow_503)
    started = time.monotonic()
    with pytest.raises(LLMCallError, match=r"HTTP 503|before the call's deadline \(1 s"):
        complete(
            f"http://127.0.0.1:{server.port}/v1",
            deadline=1.0,
            retry_policy=RetryPolicy(max_retries=20, base_delay=0.01),
        )
    assert time.monotonic() - started < 2.5
    assert 2 <= len(server.requests) <= 4  # 20 retries allowed; the deadline stops them


def test_a_gzip_bomb_is_refused_at_the_cap_read_once(raw: Any) -> None:
    bomb = gzip_bomb(1 << 30)  # 1 GB inflated
    assert len(bomb) < 1_100_000
    server = raw(lambda n, r: ok(bomb, "Content-Encoding: gzip"))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KB
    with pytest.raises(LLMCallError) as caught:
        complete(f"http://127.0.0.1:{server.port}/v1")
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert "sent a reply larger than 64 MB after decompression" in str(caught.value)
    assert "after 1 attempt:" in str(caught.value)
    assert len(server.requests) == 1  # not downloaded again
    assert grown < 300_000, f"the peak memory grew by {grown} KB"


def test_a_reply_that_says_it_is_too_large_is_not_read() -> None:
    async def go(port: int) -> WireError:
        sender = HttpSender(1, max_reply=1000)
        try:
            await sender.send(WireRequest("GET", f"http://127.0.0.1:{port}/", [], b"", 5))
        except WireError as exc:
            return exc
        finally:
            await sender.aclose()
        raise AssertionError("no error")

    async def main() -> WireError:
        async def huge(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                await reader.readuntil(b"\r\n\r\n")
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 10000000000\r\n\r\n")
                await writer.drain()
                await asyncio.sleep(5)  # the body never comes: the cap must not wait for it
            finally:
                writer.transport.abort()

        server = await asyncio.start_server(huge, "127.0.0.1", 0)
        async with server:
            return await asyncio.wait_for(go(server.sockets[0].getsockname()[1]), 3)

    error = asyncio.run(main())
    assert error.kind == "too-large" and not error.retried


@pytest.mark.parametrize("name", MALFORMED)
def test_malformed_framing_is_refused_and_not_retried(raw: Any, name: str) -> None:
    reply, reason = MALFORMED[name]
    server = raw(lambda n, r: reply)
    with pytest.raises(LLMCallError) as caught:
        complete(f"http://127.0.0.1:{server.port}/v1")
    message = str(caught.value)
    assert f"after 1 attempt: http://127.0.0.1:{server.port} sent a reply that is not " in message
    assert f"valid HTTP/1.1 ({reason})" in message
    assert len(server.requests) == 1


def test_an_untrusted_certificate_is_not_retried(raw: Any, tls_files: tuple[Path, Path]) -> None:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(*tls_files)
    server = raw(lambda n, r: ok(), tls=context)
    with pytest.raises(LLMCallError) as caught:
        complete(f"https://127.0.0.1:{server.port}/v1")
    message = str(caught.value)
    assert f"after 1 attempt: cannot connect to https://127.0.0.1:{server.port}: " in message
    assert "its certificate is not trusted (untrusted: self-signed certificate)" in message
    assert server.requests == []


def test_a_certificate_for_another_host_name_is_not_retried(
    raw: Any, tls_files: tuple[Path, Path]
) -> None:
    cert, key = tls_files  # for 127.0.0.1 only, trusted through the CA option
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    server = raw(lambda n, r: ok(), tls=context)
    assert complete(f"https://127.0.0.1:{server.port}/v1", ca_file=cert) == "ok"
    with pytest.raises(LLMCallError) as caught:
        complete(f"https://localhost:{server.port}/v1", ca_file=cert)
    message = str(caught.value)
    assert f"after 1 attempt: cannot connect to https://localhost:{server.port}: " in message
    assert "its certificate is for another host name (wrong hostname: Hostname mismatch" in (
        message
    )
    assert len(server.requests) == 1  # the first call's


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_a_proxy_asking_for_credentials_is_not_retried(raw: Any, scheme: str) -> None:
    proxy = raw(lambda n, r: PROXY_407)
    address = f"http://127.0.0.1:{proxy.port}"
    proxies = Proxies(http=address, https=address)  # https://: CONNECT, answered 407
    with pytest.raises(LLMCallError) as caught:
        complete(f"{scheme}://model.example:8000/v1", proxies=proxies)
    assert (
        f"after 1 attempt: the proxy http://127.0.0.1:{proxy.port} answered HTTP 407 "
        "(proxy authentication required): give its user and password in the proxy URL"
    ) in str(caught.value)
    assert len(proxy.requests) == 1
    first_line = proxy.requests[0].split(b"\r\n")[0]
    if scheme == "https":
        assert first_line == b"CONNECT model.example:8000 HTTP/1.1"
    else:
        assert first_line == b"POST http://model.example:8000/v1/chat/completions HTTP/1.1"


def test_an_internationalised_host_name_is_encoded_by_idna_2008(raw: Any) -> None:
    proxy = raw(lambda n, r: ok())  # a plain proxy sees the host as the client encoded it
    proxies = Proxies(http=f"http://127.0.0.1:{proxy.port}")
    assert complete("http://faß.de/v1", proxies=proxies) == "ok"
    head = proxy.requests[0].decode("latin-1")
    assert head.startswith("POST http://xn--fa-hia.de/v1/chat/completions HTTP/1.1\r\n")
    assert "\r\nHost: xn--fa-hia.de\r\n" in head  # not fass.de, another host


def test_credentials_in_the_url_and_a_key_give_one_authorization(raw: Any) -> None:
    server = raw(lambda n, r: ok())
    url = f"http://ann:p%40ss@127.0.0.1:{server.port}/v1"
    assert complete(url) == "ok"
    assert complete(url, api_key=None) == "ok"
    with_key, without = (
        re.findall(rb"(?i)\r\nauthorization: ([^\r]*)", r) for r in server.requests
    )
    assert with_key == [b"Bearer k"]  # the key given, once
    assert without == [b"Basic YW5uOnBAc3M="]  # ann:p@ss, from the URL


def test_a_base_url_with_a_query_string_keeps_its_path(raw: Any) -> None:
    vectors = json.dumps({"data": [{"index": 0, "embedding": [0.1, 0.2]}], "usage": {}})
    server = raw(lambda n, r: ok(COMPLETION if b"/chat/" in r else vectors.encode()))
    base = f"http://127.0.0.1:{server.port}/openai/deployments/m?api-version=2024-06-01"
    assert complete(base) == "ok"

    async def embed() -> Any:
        async with make_embedder("openai/e", base_url=base, api_key="k", cache=False) as embedder:
            return await embedder.embed(["a"])

    assert asyncio.run(embed()).shape == (1, 2)
    assert [r.split(b"\r\n")[0] for r in server.requests] == [
        b"POST /openai/deployments/m/chat/completions?api-version=2024-06-01 HTTP/1.1",
        b"POST /openai/deployments/m/embeddings?api-version=2024-06-01 HTTP/1.1",
    ]
