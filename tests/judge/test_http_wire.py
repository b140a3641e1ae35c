"""lasagna-judge's HTTP sender (`_wire.HttpSender`, httpx2 underneath) at the wire: a
scripted server on 127.0.0.1 answers with exactly the bytes each test gives (chunks, gzip,
a body framed by the end of the connection, interim replies, a kept-alive connection the
server closed, a reply that stops halfway, TLS), and the same replies a byte at a time."""

from __future__ import annotations

import asyncio
import gzip
import re
import ssl
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lasagna_judge import LLMCallError, Proxies, make_llm
from lasagna_judge._wire import HttpSender, WireError, WireRequest
from lasagna_judge.testing import FakeLLMServer

Action = bytes | float | None
"""What the server does next: send bytes, wait that many seconds, or (None) close."""
Script = Callable[[int, bytes], list[Action]]
"""The server's actions for the n-th request (from 0) and its head and body."""


def reply(body: bytes, *headers: str, status: str = "200 OK") -> bytes:
    lines = [f"HTTP/1.1 {status}", *headers]
    if not any(h.lower().startswith(("content-length", "transfer-encoding")) for h in headers):
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def chunked(*pieces: bytes, trailer: str = "") -> bytes:
    body = b"".join(b"%x;ext=1\r\n%s\r\n" % (len(p), p) for p in pieces)
    return body + b"0\r\n" + (trailer + "\r\n" if trailer else "").encode() + b"\r\n"


class ScriptedServer:
    """Reads each request (head, then a Content-Length body) and acts out the script."""

    def __init__(self, script: Script, tls: ssl.SSLContext | None = None) -> None:
        self.script = script
        self.tls = tls
        self.requests: list[bytes] = []
        self.connections = 0
        self.port = 0

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}/v1/chat"

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            request = head + await reader.readexactly(length)
            self.requests.append(request)
            for action in self.script(len(self.requests) - 1, request):
                if action is None:
                    return
                if isinstance(action, float):
                    await asyncio.sleep(action)
                else:
                    writer.write(action)
                    await writer.drain()


@pytest.fixture
def serve(loop_server: Callable[..., Any]) -> Callable[..., ScriptedServer]:
    def start(script: Script, tls: ssl.SSLContext | None = None) -> ScriptedServer:
        server = ScriptedServer(script, tls)
        server.port = loop_server(server.serve, tls).port
        return server

    return start


def send(url: str, *bodies: bytes, timeout: float | None = 5.0, limit: int = 4) -> list[Any]:
    """POST each body in turn through one sender; each outcome: (status, headers, body), or
    the WireError it raised."""

    async def go() -> list[Any]:
        sender = HttpSender(limit)
        outcomes: list[Any] = []
        for body in bodies:
            request = WireRequest(
                "POST", url, [("Content-Type", "application/json")], body, timeout
            )
            try:
                response = await sender.send(request)
                outcomes.append((response.status, response.headers, response.body))
            except WireError as exc:
                outcomes.append(exc)
        await sender.aclose()
        return outcomes

    return asyncio.run(go())


def test_a_reply_framed_by_its_length_keeps_the_connection(serve: Any) -> None:
    server = serve(lambda n, request: [reply(b'{"n": %d}' % n, "Content-Type: application/json")])
    outcomes = send(server.url, b"{}", b'{"a": 1}', b"")
    assert [o[2] for o in outcomes] == [b'{"n": 0}', b'{"n": 1}', b'{"n": 2}']
    assert outcomes[0][0] == 200 and outcomes[0][1]["content-type"] == "application/json"
    assert "content-length" not in outcomes[0][1]
    assert server.connections == 1
    first = server.requests[0].decode()
    assert first.startswith("POST /v1/chat HTTP/1.1\r\n")
    assert f"Host: 127.0.0.1:{server.port}\r\n" in first
    assert "Content-Length: 2\r\n" in first and "Accept-Encoding: gzip, deflate\r\n" in first
    assert b"Content-Length: 0\r\n" in server.requests[2]


def test_chunks_trailers_and_interim_replies(serve: Any) -> None:
    def script(n: int, request: bytes) -> list[Action]:
        if n == 0:
            body = chunked(b'{"a"', b": ", b"1}", trailer="X-Checksum: 1")
            return [b"HTTP/1.1 100 Continue\r\n\r\n", reply(body, "Transfer-Encoding: chunked")]
        return [reply(chunked(b"second"), "Transfer-Encoding: chunked")]

    server = serve(script)
    outcomes = send(server.url, b"{}", b"{}")
    assert [o[2] for o in outcomes] == [b'{"a": 1}', b"second"]
    assert "transfer-encoding" not in outcomes[0][1]
    assert server.connections == 1


@pytest.mark.parametrize(
    ("encoding", "pack"),
    [
        ("gzip", gzip.compress),
        ("deflate", zlib.compress),
        ("deflate", lambda data: zlib.compress(data, wbits=-15)),  # raw, as some servers send
    ],
)
def test_compressed_replies_are_undone(
    serve: Any, encoding: str, pack: Callable[[bytes], bytes]
) -> None:
    text = b'{"choices": []}' * 50
    server = serve(lambda n, r: [reply(pack(text), f"Content-Encoding: {encoding}")])
    [(status, headers, body)] = send(server.url, b"{}")
    assert (status, body) == (200, text)
    assert "content-encoding" not in headers


def test_a_reply_framed_by_the_end_of_the_connection(serve: Any) -> None:
    server = serve(
        lambda n, r: [b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nall of it", None]
    )
    outcomes = send(server.url, b"{}", b"{}")
    assert [o[2] for o in outcomes] == [b"all of it", b"all of it"]
    assert server.connections == 2  # no length: the connection cannot carry another


def test_connection_close_is_obeyed(serve: Any) -> None:
    server = serve(lambda n, r: [reply(b"ok", "Connection: close")])
    assert [o[2] for o in send(server.url, b"{}", b"{}")] == [b"ok", b"ok"]
    assert server.connections == 2


def test_a_kept_alive_connection_the_server_dropped_is_replaced_at_once(serve: Any) -> None:
    """The server reads the second request on the kept connection, then closes it without a
    word (its keep-alive ran out as the request came): sent again on a new connection."""
    server = serve(lambda n, r: [None] if n == 1 else [reply(b"ok %d" % n)])
    outcomes = send(server.url, b"{}", b"{}")
    assert [o[2] for o in outcomes] == [b"ok 0", b"ok 2"]
    assert server.connections == 2 and len(server.requests) == 3


def test_a_new_connection_closed_without_a_reply_is_an_error(serve: Any) -> None:
    server = serve(lambda n, r: [None])
    [error] = send(server.url, b"{}")
    assert isinstance(error, WireError) and error.kind == "network"
    assert len(server.requests) == 1  # a fresh connection is not tried twice here


def test_a_reply_cut_halfway_is_an_error_and_not_sent_again(serve: Any) -> None:
    server = serve(lambda n, r: [b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial", None])
    [error] = send(server.url, b"{}")
    assert isinstance(error, WireError) and error.kind == "network"
    assert str(error).startswith("connection error")
    assert len(server.requests) == 1


def test_the_timeout_is_between_bytes_of_the_reply(serve: Any) -> None:
    stalls = serve(lambda n, r: [b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n12", 2.0])
    [error] = send(stalls.url, b"{}", timeout=0.3)
    assert isinstance(error, WireError) and error.kind == "timeout"
    assert str(error) == "timed out after 0.3 s"

    head = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"
    dribbles = serve(lambda n, r: [head, *[x for c in b"slow!" for x in (0.1, bytes([c]))]])
    [(status, _, body)] = send(dribbles.url, b"{}", timeout=0.3)  # 0.5 s in all
    assert (status, body) == (200, b"slow!")


def test_bytes_that_are_not_http(serve: Any) -> None:
    server = serve(lambda n, r: [b"SSH-2.0-OpenSSH_9.2\r\n\r\n"])
    [error] = send(server.url, b"{}")
    assert isinstance(error, WireError) and error.kind == "protocol" and not error.retried
    assert str(error).startswith(
        f"http://127.0.0.1:{server.port} sent a reply that is not valid HTTP/1.1 (Bad status line"
    )


def test_a_refused_connection_names_the_origin_only() -> None:
    [error] = send("http://user:secret@127.0.0.1:9/v1", b"{}")
    assert isinstance(error, WireError) and error.kind == "connect"
    assert str(error) == "cannot connect to http://127.0.0.1:9"


def test_a_header_with_a_line_break_is_refused_before_sending(serve: Any) -> None:
    server = serve(lambda n, r: [reply(b"ok")])

    async def go() -> None:
        request = WireRequest("POST", server.url, [("Authorization", "Bearer k\r\nX: y")], b"{}")
        await HttpSender(1).send(request)

    with pytest.raises(WireError, match="line break") as caught:
        asyncio.run(go())
    assert caught.value.kind == "request" and server.requests == []


def test_credentials_in_the_url_become_basic_auth(serve: Any) -> None:
    server = serve(lambda n, r: [reply(b"ok")])
    url = server.url.replace("http://", "http://ann:p%40ss@")
    send(url, b"{}")
    assert b"Authorization: Basic YW5uOnBAc3M=\r\n" in server.requests[0]  # ann:p@ss


def test_more_requests_than_connections_wait_for_one(serve: Any) -> None:
    server = serve(lambda n, r: [0.05, reply(b"ok")])

    async def go() -> list[bytes]:
        sender = HttpSender(limit=2)
        requests = [WireRequest("POST", server.url, [], b"{}", 5.0) for _ in range(6)]
        replies = await asyncio.gather(*(sender.send(r) for r in requests))
        await sender.aclose()
        return [r.body for r in replies]

    assert asyncio.run(go()) == [b"ok"] * 6
    assert server.connections == 2


@pytest.mark.parametrize(
    "raw",
    [
        reply(b'{"x": 1}', "Content-Type: application/json"),
        reply(chunked(b'{"x"', b": 1}", trailer="T: 1"), "Transfer-Encoding: chunked"),
        b"HTTP/1.1 100 Continue\r\n\r\n" + reply(b'{"x": 1}', "X-Folded: a", " b"),
    ],
    ids=["length", "chunks", "interim-and-folded"],
)
def test_a_reply_given_a_byte_at_a_time(serve: Any, raw: bytes) -> None:
    server = serve(lambda n, r: [x for i in range(len(raw)) for x in (raw[i : i + 1], 0.001)])
    [(status, headers, body)] = send(server.url, b"{}")
    assert (status, body) == (200, b'{"x": 1}')
    assert headers.get("x-folded", "a b") == "a b"


def test_https_with_a_certificate_the_client_trusts(
    serve: Any, tls_files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, key = tls_files
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    server = serve(lambda n, r: [reply(b"secret %d" % n)], tls=context)

    [error] = send(server.url, b"{}")  # the system's certificates do not include it
    assert isinstance(error, WireError) and error.kind == "certificate" and not error.retried
    assert str(error).startswith(
        f"cannot connect to https://127.0.0.1:{server.port}: its certificate is not trusted"
    )

    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # as a company's own CA is given
    assert [o[2] for o in send(server.url, b"{}", b"{}")] == [b"secret 0", b"secret 1"]
    assert server.connections == 1  # one kept connection (the refused one never got served)


def test_an_llm_over_https_through_a_connect_tunnel(
    tls_files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """HTTPS_PROXY: CONNECT to the proxy, then TLS with the server inside the tunnel."""
    cert, key = tls_files
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    seen: list[bytes] = []

    async def tunnel(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        seen.append(head)
        host, port = head.split(b" ")[1].decode().rsplit(":", 1)
        up_reader, up_writer = await asyncio.open_connection(host, int(port))
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            try:
                while chunk := await source.read(65536):
                    sink.write(chunk)
            finally:
                sink.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    async def go(base_url: str) -> list[str]:
        proxy = await asyncio.start_server(tunnel, "127.0.0.1", 0)
        port = proxy.sockets[0].getsockname()[1]
        llm = make_llm(
            "openai/m",
            base_url=base_url,
            api_key="k",
            cache=False,
            proxies=Proxies(https=f"http://u:pw@127.0.0.1:{port}", no_proxy=""),
        )
        async with proxy, llm:
            replies = [await llm.complete([{"role": "user", "content": f"q{i}"}]) for i in range(3)]
        await asyncio.sleep(0.05)  # the tunnel's two sides see the client's goodbye
        return [r.text for r in replies]

    with FakeLLMServer(reply="over tls", tls=context) as server:
        assert server.base_url.startswith("https://127.0.0.1:")
        assert asyncio.run(go(server.base_url)) == ["over tls"] * 3
        assert server.calls == 3
    assert len(seen) == 1  # one tunnel, kept alive for the three calls
    assert seen[0].startswith(f"CONNECT 127.0.0.1:{server.port} HTTP/1.1\r\n".encode())
    assert b"Proxy-Authorization: Basic dTpwdw==\r\n" in seen[0]


def test_an_unreachable_proxy_is_a_call_error() -> None:
    async def go() -> None:
        llm = make_llm(
            "openai/m",
            base_url="http://127.0.0.1:8/v1",
            api_key="k",
            cache=False,
            max_retries=0,
            proxies=Proxies(http="http://127.0.0.1:9"),
        )
        async with llm:
            await llm.complete([{"role": "user", "content": "hi"}])

    with pytest.raises(LLMCallError, match=re.escape("cannot connect to http://127.0.0.1:8")):
        asyncio.run(go())


def test_encodings_it_did_not_ask_for_and_edge_bodies(serve: Any) -> None:
    replies = [
        reply(b"", "Content-Encoding: gzip"),  # nothing to decode
        reply(b"plain", "Content-Encoding: UTF-8"),  # a misconfigured server: kept as is
        # httpx2 reads a gzip body's first member (a JSON reply cut there does not parse).
        reply(gzip.compress(b"one ") + gzip.compress(b"two"), "Content-Encoding: gzip"),
        # A list of codings is undone in turn, its header dropped.
        reply(gzip.compress(packed := zlib.compress(b"both")), "Content-Encoding: deflate, gzip"),
        reply(gzip.compress(b"x") + b"junk", "Content-Encoding: gzip"),  # after the member
        reply(b"not gzip at all", "Content-Encoding: gzip"),
    ]
    server = serve(lambda n, r: [replies[n]])
    outcomes = send(server.url, *[b"{}"] * len(replies))
    assert [o[2] for o in outcomes[:3]] == [b"", b"plain", b"one "]
    assert outcomes[1][1]["content-encoding"] == "UTF-8"
    assert outcomes[3][2] == b"both" and packed
    assert "content-encoding" not in outcomes[3][1]
    assert outcomes[4][2] == b"x"
    error = outcomes[5]
    assert isinstance(error, WireError) and error.kind == "protocol"
    assert "a body that does not decode as its Content-Encoding" in str(error)


def test_closing_the_sender_ends_what_is_in_flight_and_what_waits(serve: Any) -> None:
    """aclose() while one request waits for a reply on a kept connection and another for a
    connection: both end with a WireError at once; nothing is sent again, nothing left open."""
    server = serve(lambda n, r: [reply(b"first")] if n == 0 else [5.0, reply(b"late")])

    async def go() -> tuple[list[Any], HttpSender]:
        sender = HttpSender(limit=1)
        first = WireRequest("POST", server.url, [], b"{}", 10.0)
        assert (await sender.send(first)).body == b"first"
        pending = [asyncio.ensure_future(sender.send(first)) for _ in range(2)]
        await asyncio.sleep(0.2)
        await sender.aclose()
        return await asyncio.gather(*pending, return_exceptions=True), sender

    started = time.monotonic()
    outcomes, sender = asyncio.run(go())
    assert time.monotonic() - started < 3
    assert all(isinstance(o, WireError) and o.kind == "network" for o in outcomes), outcomes
    assert server.connections == 1 and len(server.requests) == 2
    assert sender._pools == {}


def test_a_body_framed_by_the_end_is_not_taken_whole_when_this_side_closes(serve: Any) -> None:
    server = serve(lambda n, r: [b"HTTP/1.1 200 OK\r\n\r\npart one ", 5.0, b"part two", None])

    async def go() -> Any:
        sender = HttpSender(limit=1)
        request = asyncio.ensure_future(
            sender.send(WireRequest("POST", server.url, [], b"{}", 10.0))
        )
        await asyncio.sleep(0.2)
        await sender.aclose()
        return (await asyncio.gather(request, return_exceptions=True))[0]

    outcome = asyncio.run(go())
    assert isinstance(outcome, WireError), outcome  # not a 200 with half the body
