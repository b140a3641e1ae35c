"""Every HTTP request lasagna-judge sends goes through `HttpSender`, on httpx2 (the stack
of the openai and anthropic SDKs, so there is one): httpx2 reads the replies, keeps
connections alive, undoes gzip and deflate as the bytes come, speaks TLS and proxies.

lasagna's own, on top: the proxy each URL takes (`Proxies`, the caller's: trust_env stays
off, the libraries read no environment variable), the certificates trusted (a CA file, else
the system's, SSL_CERT_FILE as OpenSSL reads it), a deadline for a whole exchange besides
the idle timeout, a cap on a reply's size after decompression (or its stream handed on
unread, for a results file that goes to disk), framing h11 lets pass refused (two
Content-Lengths, one beside Transfer-Encoding: the reply heads are read as they come, by
`_Stream`), one Authorization header (a URL's user:password@ only without a key), and
failures as `WireError`s (`_wire_errors`). One pool of connections per event
loop and proxy: a sender reused under a new loop makes new ones; the old loop's, which
only it could close, are dropped.
"""

from __future__ import annotations

import asyncio
import base64
import select
import socket
import ssl
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from lasagna_judge._wire_errors import (
    WireError,
    failure,
    proxy_auth,
    too_large,
    url_origin,
)

if TYPE_CHECKING:
    import httpx2

    from lasagna_judge._proxies import Proxies


MAX_REPLY_BYTES = 64 * 1024 * 1024
"""A reply's body after decompression, at most: a gzip bomb stops here, read once."""
KEEPALIVE = 15.0
"""Seconds an idle connection is kept for the next request."""
KEEPALIVE_CONNECTIONS = 64
"""Idle connections kept, at most (more are closed as they come free): httpcore checks every
idle connection of the pool at every request and every reply (a poll each), and a burst at
a high --concurrency under a rate limit would otherwise leave hundreds idle."""
ACCEPT_ENCODING = "gzip, deflate"  # undone with zlib alone, counted by the cap as they come

_DECODED = frozenset({"gzip", "x-gzip", "deflate", "br", "zstd"})  # what httpx2 undoes


@dataclass(frozen=True)
class WireRequest:
    method: str
    url: str
    headers: list[tuple[str, str]]
    body: bytes
    timeout: float | None = None  # seconds to connect, and between bytes of the reply
    deadline: float | None = None  # seconds for the whole call, however its bytes trickle


@dataclass
class WireResponse:
    status: int
    headers: dict[str, str]  # names lowercased
    body: bytes
    json: Any = field(default=None)  # the parsed body of a 2xx JSON reply, set by the retrier
    stream: httpx2.Response | None = field(default=None, repr=False)
    """A 2xx reply asked for as a stream: its body unread (`body` is empty); the reader
    closes it."""


class HttpSender:
    """Up to `limit` keep-alive connections; `proxies` picks each request's proxy (None:
    direct); `ca_file`: the certificates trusted instead of the system's; `max_reply`:
    bytes of a reply's body after decompression, at most."""

    def __init__(
        self,
        limit: int,
        proxies: Proxies | None = None,
        *,
        ca_file: str | None = None,
        max_reply: int = MAX_REPLY_BYTES,
    ) -> None:
        self._limit = max(1, limit)
        self._proxies = proxies
        self._ca_file = ca_file
        self._max = max_reply
        self._pools: dict[tuple[str | None, bool], httpx2.AsyncHTTPTransport] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tls: ssl.SSLContext | None = None
        self._flying: set[asyncio.Task[Any]] = set()  # the tasks sending, for `aclose`
        self._closed: set[asyncio.Task[Any]] = set()  # those `aclose` cancelled

    def tls(self) -> ssl.SSLContext:
        """The trusted certificates, loaded once (reading the system's is slow)."""
        if self._tls is None:
            try:
                self._tls = ssl.create_default_context(cafile=self._ca_file)
            except (OSError, ssl.SSLError) as exc:
                raise WireError(
                    "request",
                    f"cannot read the CA file {self._ca_file} ({exc}); give a PEM file",
                ) from None
        return self._tls

    def _pool(self, proxy: str | None, https: bool) -> httpx2.AsyncHTTPTransport:
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            self._pools = {}  # made on a loop that has ended: its connections are dropped
            self._loop = loop
        pool = self._pools.get((proxy, https))
        if pool is None:
            import httpx2

            # The certificates are loaded for the first https URL only: a cost that a
            # run against http://127.0.0.1 (vLLM, Ollama) never needs.
            verify = self.tls() if https else ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            pool = self._pools[(proxy, https)] = httpx2.AsyncHTTPTransport(
                verify=verify,
                trust_env=False,
                proxy=proxy,
                limits=httpx2.Limits(
                    max_connections=self._limit,
                    max_keepalive_connections=min(self._limit, KEEPALIVE_CONNECTIONS),
                    keepalive_expiry=KEEPALIVE,
                ),
            )
            # httpcore's pool takes its network backend as an argument httpx2 does not pass
            inner = pool._pool
            inner._network_backend = _Watching(inner._network_backend)  # type: ignore[assignment]
        return pool

    async def send(self, request: WireRequest) -> WireResponse:
        """One exchange for a request given as a `WireRequest` (lasagna-cli's HTTP systems
        and Chroma store)."""
        import httpx2

        try:
            built = httpx2.Request(
                request.method,
                request.url,
                headers=request.headers,
                content=request.body if request.body or request.method != "GET" else None,
            )
        except (httpx2.InvalidURL, ValueError, TypeError) as exc:
            raise WireError(
                "request", f"the request to {url_origin(request.url)} cannot be sent ({exc})"
            ) from None
        return await self.exchange(built, idle=request.timeout, deadline=request.deadline)

    async def exchange(
        self,
        request: httpx2.Request,
        *,
        idle: float | None,
        deadline: float | None,
        stream: bool = False,
        once: bool = False,
    ) -> WireResponse:
        """Send `request` (its body already read) and read its reply: `idle` seconds at
        most to connect and between bytes, `deadline` seconds for all of it (for a stream:
        until its head). `stream`: a 2xx reply's body is left unread in `stream`. `once`:
        not sent again on a fresh connection when a kept-alive one closes without a reply
        (a request that must not be made twice: the server may have acted on it)."""
        task = asyncio.current_task()
        assert task is not None
        self._flying.add(task)
        try:
            return await self._exchange(request, idle, deadline, stream, once)
        except asyncio.CancelledError:
            if task not in self._closed:
                raise
            task.uncancel()  # cancelled by `aclose`, not by the caller
            raise WireError("network", "connection error (the client was closed)") from None
        finally:
            self._flying.discard(task)
            self._closed.discard(task)

    async def _exchange(
        self,
        request: httpx2.Request,
        idle: float | None,
        deadline: float | None,
        stream: bool,
        once: bool,
    ) -> WireResponse:
        import httpx2

        url = request.url
        origin = url_origin(str(url))
        if url.scheme not in ("http", "https") or not url.host:
            raise WireError(
                "request", f"expected an http:// or https:// URL with a host, got {origin!r}"
            )
        _prepare(request)
        request.extensions = {
            **request.extensions,
            "timeout": {"connect": idle, "read": idle, "write": idle, "pool": None},
        }
        proxy = self._proxies.for_url(str(url)) if self._proxies else None
        pool = self._pool(proxy, url.scheme == "https")
        timer = asyncio.timeout(deadline)
        kept = False
        try:
            async with timer:
                for attempt in range(2):
                    trace = _Trace()
                    request.extensions["trace"] = trace
                    try:
                        response = await pool.handle_async_request(request)
                    except httpx2.RemoteProtocolError as exc:
                        if attempt == 0 and trace.reused and _dropped(exc) and not once:
                            continue  # a kept-alive connection the server had closed
                        raise
                    break
                try:
                    if response.status_code == 407 and proxy is not None:
                        raise proxy_auth(proxy)
                    _check_framing(response, origin)
                    if stream and 200 <= response.status_code < 300:
                        kept = True
                        return WireResponse(
                            response.status_code, _headers(response), b"", None, response
                        )
                    body = await self._read(response, origin)
                finally:
                    if not kept:
                        await response.aclose()
        except WireError:
            raise
        except TimeoutError:
            if timer.expired():
                raise WireError(
                    "deadline", f"{origin} did not finish its reply before the call's deadline"
                ) from None
            raise WireError("timeout", "timed out") from None
        except Exception as exc:
            raise failure(exc, origin, proxy, idle) from None
        return WireResponse(response.status_code, _headers(response), body)

    async def _read(self, response: httpx2.Response, origin: str) -> bytes:
        """The body, decompressed as it comes, refused once it passes the cap (a body that
        says it is larger is refused before a byte of it is read)."""
        length = response.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > self._max:
            raise too_large(origin, self._max)
        parts: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > self._max:
                raise too_large(origin, self._max)
            parts.append(chunk)
        return b"".join(parts)

    async def aclose(self) -> None:
        """Close every connection; a request in flight ends with a WireError. The sender
        stays usable (new connections on the next request)."""
        for task in self._flying:
            if task is not asyncio.current_task():
                self._closed.add(task)
                task.cancel()
        pools, self._pools = self._pools, {}
        if self._loop is not asyncio.get_running_loop():
            return  # made on another loop, which alone could close them
        for pool in pools.values():
            await pool.aclose()


class _Trace:
    """httpcore's trace of one request: whether it went out on a kept-alive connection."""

    def __init__(self) -> None:
        self.reused = True

    async def __call__(self, event: str, info: dict[str, Any]) -> None:
        if event.startswith(("connection.connect_tcp", "connection.start_tls")):
            self.reused = False


def _dropped(exc: BaseException) -> bool:
    return "without sending a response" in str(exc) or "Server disconnected" in str(exc)


def _prepare(request: httpx2.Request) -> None:
    """One Authorization header (a URL's user:password@ only without one given), the URL
    sent without its credentials, the codings the cap counts; a line break in a header
    refused before anything is sent."""
    for name, value in request.headers.raw:
        if b"\r" in value or b"\n" in value or b"\r" in name or b"\n" in name:
            raise WireError("request", "a request header holds a line break; remove it")
    url = request.url
    if url.userinfo:
        if "authorization" not in request.headers:
            pair = f"{unquote(url.username)}:{unquote(url.password or '')}".encode()
            request.headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
        request.url = url.copy_with(username=None, password=None)
    request.headers["Accept-Encoding"] = ACCEPT_ENCODING


def _check_framing(response: httpx2.Response, origin: str) -> None:
    """Framing h11 lets pass and a proxy before the server may have read another way: two
    Content-Lengths (equal ones h11 merges), one beside Transfer-Encoding."""
    reason = None
    if getattr(response.extensions.get("network_stream"), "lengths", 0) > 1:
        reason = "Duplicate Content-Length"
    elif "content-length" in response.headers and "transfer-encoding" in response.headers:
        reason = "Transfer-Encoding can't be present with Content-Length"
    if reason is not None:
        raise WireError(
            "protocol",
            f"{origin} sent a reply that is not valid HTTP/1.1 ({reason}); not retried: the "
            "server, or a proxy before it, is broken",
        )


def _headers(response: httpx2.Response) -> dict[str, str]:
    """The reply's headers, names lowercased, framing and undone codings left out."""
    found = {
        name.decode("latin-1").lower(): value.decode("latin-1")
        for name, value in response.headers.raw
    }
    codings = [c.strip().lower() for c in found.get("content-encoding", "").split(",")]
    if "content-encoding" in found and all(c in _DECODED or not c for c in codings):
        del found["content-encoding"]
    found.pop("content-length", None)
    found.pop("transfer-encoding", None)
    return found


class _Watching:
    """httpcore's network backend, its streams counting the Content-Lengths of each reply
    head as it is read (`_Stream`)."""

    def __init__(self, backend: Any) -> None:
        self._backend = backend

    async def connect_tcp(self, *args: Any, **kwargs: Any) -> _Stream:
        return _Stream(await self._backend.connect_tcp(*args, **kwargs))

    async def connect_unix_socket(self, *args: Any, **kwargs: Any) -> _Stream:
        return _Stream(await self._backend.connect_unix_socket(*args, **kwargs))

    async def sleep(self, seconds: float) -> None:
        await self._backend.sleep(seconds)


class _Stream:
    """A network stream whose reply heads are scanned as they come: from a request written
    to the end of the head that answers it (interim 1xx heads too), `lengths` the most
    Content-Length lines one held."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._head: bytes | None = None  # the head read so far; None: not in a head
        self.lengths = 0
        self._socket: Any = None  # the raw socket, looked up once

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._head, self.lengths = b"", 0
        await self._inner.write(buffer, timeout)

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        data: bytes = await self._inner.read(max_bytes, timeout)
        self._head = None if self._head is None else self._head + data
        while self._head is not None and (end := self._head.find(b"\r\n\r\n")) >= 0:
            head = self._head[:end].lower()
            self.lengths = max(self.lengths, head.count(b"\r\ncontent-length:"))
            self._head = self._head[end + 4 :] if head.startswith(b"http/1.1 1") else None
        return data

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def start_tls(self, *args: Any, **kwargs: Any) -> _Stream:
        return _Stream(await self._inner.start_tls(*args, **kwargs))

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            # Asked of every idle connection at every request; anyio builds all of a
            # stream's attributes to answer it, so the raw socket is looked up once.
            if self._socket is None:
                self._socket = self._inner.get_extra_info("socket")
            if self._socket is not None:
                return _readable(self._socket)
        return self._inner.get_extra_info(info)


def _readable(sock: socket.socket) -> bool:
    """Whether a kept-alive socket has bytes (or its end) waiting: a connection the server
    closed, or wrote to unasked, is not reused. As httpcore asks it, by poll."""
    fd = sock.fileno()
    if fd < 0:
        return True
    if not hasattr(select, "poll"):  # Windows
        return bool(select.select([fd], [], [], 0)[0])
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(0))
