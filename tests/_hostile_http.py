"""Hostile HTTP servers for the tests (issue 29): `Raw`, a raw-socket server that writes
exactly the bytes a test gives; the replies they send (a chat completion, a gzip bomb,
malformed framing, a proxy's 407); `raw_fixture`, started on 127.0.0.1 by `loop_server`."""

from __future__ import annotations

import asyncio
import json
import re
import ssl
import zlib
from collections.abc import Callable
from typing import Any

COMPLETION = json.dumps(
    {
        "id": "c",
        "object": "chat.completion",
        "model": "m",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
).encode()


def ok(body: bytes = COMPLETION, *headers: str) -> bytes:
    head = ["HTTP/1.1 200 OK", "Content-Type: application/json", *headers]
    if not any(h.lower().startswith(("content-length", "transfer-encoding")) for h in headers):
        head.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


class Raw:
    """A raw-socket server: reads each request's head and body, records them, and writes
    what `answer(n, request)` gives (bytes, or a coroutine function given the writer)."""

    def __init__(self, answer: Callable[[int, bytes], Any]) -> None:
        self.answer = answer
        self.requests: list[bytes] = []
        self.connections = 0
        self.port = 0

    async def __call__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                match = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
                request = head + await reader.readexactly(int(match[1]) if match else 0)
                self.requests.append(request)
                answer = self.answer(len(self.requests) - 1, request)
                if isinstance(answer, bytes):
                    writer.write(answer)
                    await writer.drain()
                else:
                    await answer(writer)
        finally:
            writer.transport.abort()  # a bomb half sent is not flushed when the server stops


def raw_fixture(loop_server: Callable[..., Any]) -> Callable[..., Raw]:
    """`raw(answer, tls=None)`: a started `Raw` server."""

    def start(answer: Callable[[int, bytes], Any], tls: ssl.SSLContext | None = None) -> Raw:
        server = Raw(answer)
        server.port = loop_server(server, tls).port
        return server

    return start


def gzip_bomb(size: int) -> bytes:
    """`size` zero bytes, gzipped (a GB is about a MB), made without holding them."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = bytes(1 << 20)
    parts = [packer.compress(block) for _ in range(size >> 20)]
    return b"".join(parts) + packer.flush()


MALFORMED = {
    "duplicate Content-Length": (
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
        "Duplicate Content-Length",
    ),
    "signed Content-Length": (
        b"HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\n{}",
        "Invalid character in Content-Length",
    ),
    "negative Content-Length": (
        b"HTTP/1.1 200 OK\r\nContent-Length: -2\r\n\r\n{}",
        "Invalid character in Content-Length",
    ),
    "0x chunk size": (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0x2\r\n{}\r\n0\r\n\r\n",
        "Invalid character in chunk size",
    ),
    "Content-Length with Transfer-Encoding": (
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"2\r\n{}\r\n0\r\n\r\n",
        "Transfer-Encoding can't be present with Content-Length",
    ),
}


PROXY_407 = (
    b"HTTP/1.1 407 Proxy Authentication Required\r\n"
    b'Proxy-Authenticate: Basic realm="corp"\r\nContent-Length: 0\r\n\r\n'
)
