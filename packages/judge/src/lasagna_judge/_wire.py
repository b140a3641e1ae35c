"""One HTTP request on the wire: `HttpSender` keeps the connections (`_http_conn`).

Why not the SDKs' own httpx2: on a small machine its pure-Python connection pool costs about
3 ms of CPU per request once 50 connections are open (it scans every connection on each
request). Why not aiohttp (until 2026-12): 0.16 ms of CPU a request and 0.2 s of import at
every start, against a few hundredths of a millisecond here (see `_http_conn`). Failures
come back as `WireError` with a kind the retry logic understands.
"""

from __future__ import annotations

import asyncio
import ssl
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, cast

from lasagna_judge._http_conn import Connection, ConnectionClosed, ProtocolError, decoded
from lasagna_judge._http_route import Route, request_bytes, route_to, tls

if TYPE_CHECKING:
    from lasagna_judge._proxies import Proxies

WireErrorKind = Literal["timeout", "connect", "network", "request"]


@dataclass(frozen=True)
class WireRequest:
    method: str
    url: str
    headers: list[tuple[str, str]]
    body: bytes
    timeout: float | None = None  # seconds to connect, and between bytes of the reply


@dataclass
class WireResponse:
    status: int
    headers: dict[str, str]  # names lowercased
    body: bytes
    json: Any = field(default=None)  # the parsed body of a 2xx JSON reply, set by the retrier


class WireError(Exception):
    """The request got no HTTP reply: a timeout, a refused connection, a dropped one; or
    it could not be sent at all (`request`: a header with a line break; not retried)."""

    def __init__(self, kind: WireErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind = kind


KEEPALIVE = 15.0
"""Seconds an idle connection is kept for the next request."""


def _timed_out(timeout: float | None, doing: str = "") -> WireError:
    seconds = f" after {timeout:g} s" if timeout else ""
    return WireError("timeout", f"timed out{seconds}{doing}")


class HttpSender:
    """Keeps up to `limit` keep-alive connections, one pool per event loop. `proxies`
    (given by the caller, never read from the environment here) picks each request's
    proxy; None: every request goes directly."""

    def __init__(self, limit: int, proxies: Proxies | None = None) -> None:
        self._limit = max(1, limit)
        self._proxies = proxies
        self._routes: dict[str, Route] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._idle: dict[tuple[str, ...], list[Connection]] = {}
        self._open: set[Connection] = set()
        self._opening = 0
        self._waiters: list[asyncio.Future[None]] = []
        self._all_closed: asyncio.Future[None] | None = None  # while `aclose` waits
        self._closes = 0  # calls of `aclose`: a request older than the last one ends

    async def send(self, request: WireRequest) -> WireResponse:
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            # Connections belong to the loop they were made on: a new loop, a new pool.
            self._loop = loop
            self._idle, self._open, self._opening, self._waiters = {}, set(), 0, []
        route = self._routes.get(request.url)
        if route is None:
            proxy = self._proxies.for_url(request.url) if self._proxies else None
            if len(self._routes) > 256:
                self._routes.clear()
            try:
                route = self._routes[request.url] = route_to(request.url, proxy)
            except ValueError as exc:  # a port that is not a number, say
                raise WireError("request", f"the server's URL cannot be read ({exc})") from None
        try:
            data = request_bytes(request.method, route, request.headers, request.body)
        except ValueError as exc:
            raise WireError("request", str(exc)) from None
        closes = self._closes
        for attempt in range(2):
            connection = await self._acquire(loop, route, request.timeout, closes)
            reused = connection.used
            try:
                status, headers, body, keep = await connection.exchange(
                    data, request.method, request.timeout
                )
            except ConnectionClosed as exc:
                if reused and not exc.replied and attempt == 0 and closes == self._closes:
                    continue  # a kept-alive connection the server had closed: a fresh one
                raise WireError("network", f"connection error ({exc})") from None
            except TimeoutError:
                raise _timed_out(request.timeout) from None
            except ProtocolError as exc:
                raise WireError("network", f"connection error ({exc})") from None
            except BaseException:  # cancelled halfway: the connection's state is unknown
                connection.abort()
                raise
            self._release(route.key, connection, keep, loop)
            encoding = headers.get("content-encoding")
            if encoding is not None and body:
                try:
                    plain = decoded(body, encoding)
                except ProtocolError as exc:
                    raise WireError("network", f"connection error ({exc})") from None
                if plain is not None:  # else a coding it did not ask for: kept as it came
                    body = plain
                    headers.pop("content-encoding")
            headers.pop("content-length", None)
            headers.pop("transfer-encoding", None)
            return WireResponse(status, headers, body)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _acquire(
        self,
        loop: asyncio.AbstractEventLoop,
        route: Route,
        timeout: float | None,
        closes: int,
    ) -> Connection:
        while True:
            if closes != self._closes:
                raise WireError("network", "connection error (the client was closed)")
            idle = self._idle.get(route.key)
            while idle:
                connection = idle.pop()
                if connection.usable and loop.time() - connection.idle_since < KEEPALIVE:
                    return connection
                connection.close()
            if len(self._open) + self._opening < self._limit:
                break
            if not self._close_one_idle():  # all busy: wait for one to be released
                waiter = loop.create_future()
                self._waiters.append(waiter)
                try:
                    await waiter
                except asyncio.CancelledError:
                    if waiter in self._waiters:
                        self._waiters.remove(waiter)
                    elif not waiter.cancelled():
                        self._wake()  # woken, then cancelled: the next waiter's turn
                    raise
        self._opening += 1
        try:
            connection = await self._connect(loop, route, timeout)
        finally:
            self._opening -= 1
            self._wake()
        if closes != self._closes:  # closed while this one was being made
            connection.abort()
            raise WireError("network", "connection error (the client was closed)")
        self._open.add(connection)
        connection.on_close = self._closed
        return connection

    async def _connect(
        self, loop: asyncio.AbstractEventLoop, route: Route, timeout: float | None
    ) -> Connection:
        connection: Connection | None = None
        # Happy Eyeballs (RFC 8305), as aiohttp: an address that drops packets (a host's
        # broken IPv6) costs a quarter of a second, not the whole timeout. asyncio's own
        # loop takes these options; another (uvloop) connects its own way.
        eyeballs: dict[str, Any] = (
            {"happy_eyeballs_delay": 0.25, "interleave": 1}
            if isinstance(loop, asyncio.BaseEventLoop)
            else {}
        )
        try:
            async with asyncio.timeout(timeout):
                _, connection = await loop.create_connection(
                    lambda: Connection(loop),
                    route.host,
                    route.port,
                    ssl=tls() if route.tls else None,
                    server_hostname=route.host if route.tls else None,
                    **eyeballs,
                )
                if route.tunnel:
                    await self._tunnel(loop, route, connection, timeout)
        except WireError:
            if connection is not None:
                connection.abort()
            raise
        except TimeoutError:
            if connection is not None:
                connection.abort()
            raise _timed_out(timeout, f" connecting to {route.origin}") from None
        except (OSError, ConnectionClosed, ProtocolError) as exc:
            if connection is not None:
                connection.abort()
            reason = f" ({exc.reason})" if isinstance(exc, ssl.SSLError) and exc.reason else ""
            raise WireError("connect", f"cannot connect to {route.origin}{reason}") from None
        except BaseException:  # cancelled halfway (a tunnel being opened, say)
            if connection is not None:
                connection.abort()
            raise
        return connection

    @staticmethod
    async def _tunnel(
        loop: asyncio.AbstractEventLoop,
        route: Route,
        connection: Connection,
        timeout: float | None,
    ) -> None:
        """CONNECT through the proxy, then TLS to the server inside the tunnel."""
        head = f"CONNECT {route.tunnel} HTTP/1.1\r\n{route.tunnel_lines}\r\n".encode()
        status, _, _, _ = await connection.exchange(head, "CONNECT", timeout)
        if not 200 <= status < 300:
            raise WireError(
                "connect", f"cannot connect to {route.origin}: the proxy answered HTTP {status}"
            )
        assert connection.transport is not None
        transport = await loop.start_tls(
            connection.transport, connection, tls(), server_hostname=route.server_name
        )
        connection.transport = cast(asyncio.Transport, transport)
        connection.used = False

    def _release(
        self,
        key: tuple[str, ...],
        connection: Connection,
        keep: bool,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        if keep and connection.usable:
            connection.idle_since = loop.time()
            self._idle.setdefault(key, []).append(connection)
            self._wake()
        else:
            connection.close()  # `_closed` frees its place once it is gone

    def _closed(self, connection: Connection) -> None:
        self._open.discard(connection)
        for idle in self._idle.values():
            if connection in idle:
                idle.remove(connection)
        self._wake()
        if not self._open and self._all_closed is not None and not self._all_closed.done():
            self._all_closed.set_result(None)

    def _close_one_idle(self) -> bool:
        for idle in self._idle.values():
            while idle:
                connection = idle.pop()
                if connection in self._open:
                    connection.on_close = None
                    connection.close()
                    self._open.discard(connection)
                    return True
        return False

    def _wake(self) -> None:
        while self._waiters:
            waiter = self._waiters.pop(0)
            if not waiter.done():
                waiter.set_result(None)
                return

    async def aclose(self) -> None:
        """Close every connection, waiting (up to a second: TLS says goodbye) until they
        are gone. A request in flight ends with a WireError; the sender stays usable."""
        self._closes += 1
        connections = list(self._open)
        waiters, self._idle, self._waiters = self._waiters, {}, []
        for waiter in waiters:  # they wake, see the close and give up
            if not waiter.done():
                waiter.set_result(None)
        loop = self._loop
        if loop is None or loop.is_closed() or not connections:
            self._open = set()
            return  # a pool made on a loop that has since closed: nothing left to close
        if loop is not asyncio.get_running_loop():  # closed from another loop: at once
            self._open = set()
            for connection in connections:
                connection.on_close = None
                connection.abort()
            return
        self._all_closed = loop.create_future()
        for connection in connections:
            connection.close()
        try:
            async with asyncio.timeout(1.0):
                await self._all_closed
        except TimeoutError:
            for connection in connections:
                connection.abort()
        finally:
            self._all_closed = None
