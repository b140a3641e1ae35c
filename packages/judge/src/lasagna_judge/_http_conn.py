"""One HTTP/1.1 connection on asyncio: a request written, its reply read whole.

lasagna sends few kinds of request (a JSON body POSTed, now and then a GET) and reads
each reply whole, so the part of HTTP/1.1 it needs is small: a status line and headers;
a body framed by Content-Length, by chunks, or by the end of the connection; 1xx replies
skipped; gzip and deflate undone (`decoded`); keep-alive unless a side says otherwise.
Why not aiohttp, lasagna-judge's transport until 2026-12: at an instant server its client
cost 0.16 ms of CPU a request and its import 0.2 s of every command's start, more than
everything else a sweep does for a task; this protocol reads a reply in a few
microseconds (benchmarks/sweep_speed.py).

The pool that owns the connections, with the proxies, TLS and the errors the retry logic
reads, is `_wire.HttpSender`.
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Callable
from typing import cast

HEAD_LIMIT = 64 * 1024
"""Bytes of a reply's status line and headers, at most."""

Reply = tuple[int, dict[str, str], bytes, bool]
"""(status, headers with lower-case names, body, whether the connection may be reused)."""

_IDLE, _HEAD, _LENGTH, _CHUNK_SIZE, _CHUNK_DATA, _TRAILERS, _UNTIL_CLOSE = range(7)


class ProtocolError(Exception):
    """The peer's bytes are not an HTTP/1.1 reply this client can read."""


class ConnectionClosed(Exception):
    """The connection ended before the reply did; `replied` if any byte of it came."""

    def __init__(self, reason: str, *, replied: bool) -> None:
        super().__init__(reason)
        self.replied = replied


class Connection(asyncio.Protocol):
    """One connection, one exchange at a time (`exchange`). `closed` turns True when the
    transport is gone, and `on_close` (the pool's) is then called once."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self._eof = False  # the peer ended its side
        self.used = False  # it has carried a whole exchange: the next one reuses it
        self.idle_since = 0.0
        self.on_close: Callable[[Connection], None] | None = None
        self._loop = loop
        self._buffer = bytearray()
        self._waiter: asyncio.Future[Reply] | None = None
        self._method = ""
        self._state = _IDLE
        self._status = 0
        self._headers: dict[str, str] = {}
        self._body: list[bytes] = []
        self._need = 0
        self._keep = True
        self._replied = False
        self._timeout = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._last = 0.0  # when the last bytes of the reply came (loop time)

    # -- asyncio.Protocol -------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's are not subclasses

    def data_received(self, data: bytes) -> None:
        if self._waiter is None:  # bytes nobody asked for: the connection is not to be trusted
            self._keep = False
            self.close()
            return
        self._replied = True
        if self._timer is not None:
            self._last = self._loop.time()
        self._buffer += data
        try:
            self._parse()
        except ProtocolError as exc:
            self._fail(exc)
            self.close()

    def eof_received(self) -> bool:
        self._eof = True
        return False  # the transport closes itself; connection_lost ends any exchange

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self._waiter is not None:
            # A body framed by the connection's end ends only when the peer ends it (not
            # when this side closes, which cuts it short).
            if self._state == _UNTIL_CLOSE and exc is None and self._eof:
                self._body.append(bytes(self._buffer))
                self._buffer.clear()
                self._finish()
            else:
                reason = type(exc).__name__ if exc is not None else "the server closed it"
                self._fail(ConnectionClosed(reason, replied=self._replied))
        if self.on_close is not None:
            on_close, self.on_close = self.on_close, None
            on_close(self)

    # -- one exchange ---------------------------------------------------------------------

    def exchange(self, data: bytes, method: str, timeout: float | None) -> asyncio.Future[Reply]:
        """Write a whole request; the future's result is its reply. With a `timeout`, the
        future fails with TimeoutError when that many seconds pass with no byte of reply."""
        assert self.transport is not None and self._waiter is None
        self._waiter = waiter = self._loop.create_future()
        self._method = method
        self._state = _HEAD
        self._keep = True
        self._replied = False
        self.transport.write(data)
        if timeout is not None:
            self._timeout = timeout
            self._last = self._loop.time()
            self._timer = self._loop.call_at(self._last + timeout, self._check_timeout)
        return waiter

    @property
    def usable(self) -> bool:
        """Open, and not being closed (the peer's end seen, connection_lost not yet run)."""
        return not self.closed and self.transport is not None and not self.transport.is_closing()

    def close(self) -> None:
        if self.transport is not None and not self.closed:
            self.transport.close()

    def abort(self) -> None:
        """Drop the connection at once (an exchange given up halfway)."""
        if self.transport is not None and not self.closed:
            self.transport.abort()

    def _check_timeout(self) -> None:
        self._timer = None
        if self._waiter is None:
            return
        due = self._last + self._timeout
        if self._loop.time() >= due:
            self._fail(TimeoutError())
            self.abort()
        else:  # bytes came meanwhile: wait from the last of them
            self._timer = self._loop.call_at(due, self._check_timeout)

    def _fail(self, exc: Exception) -> None:
        waiter, self._waiter = self._waiter, None
        self._keep = False
        self._state = _IDLE
        self._stop_timer()
        if waiter is not None and not waiter.done():
            waiter.set_exception(exc)

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _finish(self) -> None:
        waiter, self._waiter = self._waiter, None
        self._state = _IDLE
        self._stop_timer()
        if self._buffer:  # bytes past the reply: the next exchange could not trust them
            self._keep = False
            self._buffer.clear()
        body = self._body[0] if len(self._body) == 1 else b"".join(self._body)
        self._body = []
        self.used = True
        if waiter is not None and not waiter.done():
            waiter.set_result((self._status, self._headers, body, self._keep))

    # -- the reply ------------------------------------------------------------------------

    def _parse(self) -> None:
        buffer = self._buffer
        while True:
            state = self._state
            if state == _HEAD:
                end = buffer.find(b"\r\n\r\n")
                if end < 0:
                    if len(buffer) > HEAD_LIMIT:
                        raise ProtocolError(f"a reply's head longer than {HEAD_LIMIT} bytes")
                    return
                head = bytes(buffer[:end])
                del buffer[: end + 4]
                self._read_head(head)
            elif state == _LENGTH:
                if len(buffer) < self._need:
                    return
                self._body.append(bytes(buffer[: self._need]))
                del buffer[: self._need]
                self._finish()
                return
            elif state == _CHUNK_SIZE:
                end = buffer.find(b"\r\n")
                if end < 0:
                    if len(buffer) > HEAD_LIMIT:
                        raise ProtocolError("a chunk size line too long")
                    return
                line = bytes(buffer[:end]).split(b";", 1)[0].strip()
                del buffer[: end + 2]
                try:
                    size = int(line, 16)
                except ValueError:
                    raise ProtocolError(
                        f"a chunk size that is not a number: {line[:20]!r}"
                    ) from None
                self._need = size
                self._state = _CHUNK_DATA if size else _TRAILERS
            elif state == _CHUNK_DATA:
                if len(buffer) < self._need + 2:
                    return
                if buffer[self._need : self._need + 2] != b"\r\n":
                    raise ProtocolError("a chunk not followed by CRLF")
                self._body.append(bytes(buffer[: self._need]))
                del buffer[: self._need + 2]
                self._state = _CHUNK_SIZE
            elif state == _TRAILERS:
                if buffer[:2] == b"\r\n":
                    del buffer[:2]
                else:
                    end = buffer.find(b"\r\n\r\n")
                    if end < 0:
                        return
                    del buffer[: end + 4]
                self._finish()
                return
            else:  # _UNTIL_CLOSE (connection_lost ends it), or no exchange
                return

    def _read_head(self, head: bytes) -> None:
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(None, 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1."):
            raise ProtocolError(f"not an HTTP/1.x reply: {lines[0][:40]!r}")
        try:
            status = int(parts[1])
        except ValueError:
            raise ProtocolError(f"a status that is not a number: {parts[1][:10]!r}") from None
        headers: dict[str, str] = {}
        name = ""
        for line in lines[1:]:
            if line[:1] in (" ", "\t") and name:  # an obsolete folded line continues the last
                headers[name] += " " + line.strip()
                continue
            key, colon, value = line.partition(":")
            if not colon:
                raise ProtocolError(f"a header line without a colon: {line[:40]!r}")
            name = key.strip().lower()
            headers[name] = value.strip()
        if 100 <= status < 200:
            if status == 101:
                raise ProtocolError("the server switched protocols (101)")
            return  # an interim reply (100 Continue, 103 Early Hints): the real one follows
        connection = headers.get("connection", "").lower()
        if parts[0] == "HTTP/1.0":
            self._keep = "keep-alive" in connection
        else:
            self._keep = "close" not in connection
        self._status, self._headers = status, headers
        if (
            self._method == "HEAD"
            or status in (204, 304)
            or (self._method == "CONNECT" and 200 <= status < 300)
        ):
            self._need = 0
            self._state = _LENGTH
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            self._state = _CHUNK_SIZE
        elif "content-length" in headers:
            try:
                self._need = int(headers["content-length"].split(",")[0])
            except ValueError:
                raise ProtocolError(
                    f"a Content-Length that is not a number: {headers['content-length'][:20]!r}"
                ) from None
            if self._need < 0:
                raise ProtocolError("a negative Content-Length")
            self._state = _LENGTH
        else:
            self._keep = False
            self._state = _UNTIL_CLOSE


def decoded(body: bytes, encoding: str) -> bytes | None:
    """A body as sent, before its Content-Encoding (gzip, deflate, or a list of them, the
    last applied first); None for a coding this client did not ask for, whose body is
    then kept as it came (as aiohttp did); ProtocolError for a body that does not decode."""
    codings = [c.strip().lower() for c in encoding.split(",")]
    codings = [c for c in codings if c not in ("", "identity")]
    if any(c not in ("gzip", "x-gzip", "deflate") for c in codings):
        return None
    try:
        for coding in reversed(codings):
            if coding == "deflate":  # zlib-wrapped, as the standard says, or raw, as some send
                try:
                    body = zlib.decompress(body)
                except zlib.error:
                    body = zlib.decompress(body, -zlib.MAX_WBITS)
            else:
                body = _gunzip(body)
    except zlib.error as exc:
        raise ProtocolError(f"a body that does not decode as {encoding} ({exc})") from None
    return body


def _gunzip(body: bytes) -> bytes:
    """Every member of a gzip stream (zlib.decompress stops after the first)."""
    parts = []
    while body:
        member = zlib.decompressobj(16 + zlib.MAX_WBITS)
        parts.append(member.decompress(body))
        parts.append(member.flush())
        if not member.eof:
            raise ProtocolError("a gzip body cut short")
        body = member.unused_data
        if body and not body.startswith(b"\x1f\x8b"):
            raise ProtocolError("bytes after the gzip body")
    return b"".join(parts)
