"""Every HTTP request lasagna-judge sends, through aiohttp: `HttpSender`.

aiohttp reads the replies (its parser refuses malformed framing: a duplicate or signed
Content-Length, a chunk size such as `0x2`, Content-Length beside Transfer-Encoding), keeps
connections alive, undoes gzip and deflate as the bytes come, speaks TLS, and reaches
servers through an HTTP proxy (absolute-form requests, CONNECT tunnels for https://, the
proxy URL's credentials). What is lasagna's own sits on top, here and in `_http_url`: the
proxy each URL takes (`Proxies`, given by the caller: trust_env stays off), the trusted
certificates (a CA file given, else the system's, with SSL_CERT_FILE as OpenSSL reads it),
a deadline for a whole exchange besides the idle timeout, a cap on a reply's size after
decompression, IDNA 2008 host names, one Authorization header, and failures as
`WireError`s whose kind tells the retry logic (`_transport`) whether another attempt can
help. Messages name a server by its origin only (no credentials, no path).

The sender is async. Code that is not runs a loop (`asyncio.run`), so there is one way: one
aiohttp session per event loop, made by the first request in that loop. A sender reused
under a new loop (an LLM called from a second `asyncio.run()`) makes a new session there;
the old one's connections, on a loop that has ended, are dropped.
"""

from __future__ import annotations

import asyncio
import ssl
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Literal

from lasagna_judge._http_url import UrlError, prepared, url_origin

if TYPE_CHECKING:
    import aiohttp

    from lasagna_judge._proxies import Proxies

WireErrorKind = Literal[
    "timeout",
    "connect",
    "network",
    "request",
    "certificate",
    "proxy",
    "protocol",
    "too-large",
    "deadline",
    "reply",
]
RETRIED_KINDS = frozenset({"timeout", "connect", "network"})
"""The failures another attempt may not meet. The rest come back the same every time: a
certificate refused, a proxy asking for credentials, a reply that breaks HTTP or passes the
size cap, a request that cannot be sent, a reply whose token counts cannot be believed
(negative, or not numbers: `reply`); or leave no time to try (the call's deadline)."""

MAX_REPLY_BYTES = 64 * 1024 * 1024
"""A reply's body after decompression, at most: a model's reply or a batch of embeddings is
a few MB; a gzip bomb (1 MB that inflates to 1 GB) stops here, read once."""

KEEPALIVE = 15.0
"""Seconds an idle connection is kept for the next request."""

_DECODED = frozenset({"gzip", "x-gzip", "deflate", "br", "zstd"})  # what aiohttp undoes


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


class WireError(Exception):
    """The request got no usable HTTP reply; `kind` says why, `retried` whether another
    attempt may help (`RETRIED_KINDS`)."""

    def __init__(self, kind: WireErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind = kind

    @property
    def retried(self) -> bool:
        return self.kind in RETRIED_KINDS


class _Dropped(WireError):
    """The connection closed before any byte of the reply (a kept one the server closed)."""


@dataclass(frozen=True)
class _Exchange:
    origin: str
    proxy: str | None
    idle: float | None
    deadline: float | None


class HttpSender:
    """Keeps up to `limit` keep-alive connections (one aiohttp session per event loop).

    `proxies` (given by the caller, never read from the environment here) picks each
    request's proxy; None: every request goes directly. `ca_file`: a PEM file of the
    certificates trusted instead of the system's. `max_reply`: bytes of a reply's body
    after decompression, at most."""

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
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tls: ssl.SSLContext | None = None
        self._flying: set[asyncio.Task[Any]] = set()  # the tasks sending, for `aclose`
        self._closed: set[asyncio.Task[Any]] = set()  # those `aclose` cancelled

    def tls(self) -> ssl.SSLContext:
        """The trusted certificates, loaded once (reading the system's takes 60 ms)."""
        if self._tls is None:
            try:
                self._tls = ssl.create_default_context(cafile=self._ca_file)
            except (OSError, ssl.SSLError) as exc:
                raise WireError(
                    "request",
                    f"cannot read the CA file {self._ca_file} ({exc}); give a PEM file",
                ) from None
        return self._tls

    def _client(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        session = self._session
        if session is not None and self._loop is loop and not session.closed:
            return session
        import aiohttp

        if session is not None and not session.closed:
            session.detach()  # made on a loop that has ended: its connections are dropped
        trace = aiohttp.TraceConfig()
        trace.on_connection_reuseconn.append(_mark_reused)
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(
                limit=self._limit,
                keepalive_timeout=KEEPALIVE,
                happy_eyeballs_delay=0.25,  # a host's broken IPv6 costs 0.25 s, not all
            ),
            trust_env=False,  # the libraries read no environment variable: `proxies`
            cookie_jar=aiohttp.DummyCookieJar(),  # each request stands alone
            timeout=aiohttp.ClientTimeout(total=None),
            trace_configs=[trace],
        )
        self._loop = loop
        return self._session

    async def send(self, request: WireRequest) -> WireResponse:
        task = asyncio.current_task()
        assert task is not None
        self._flying.add(task)
        try:
            return await self._send(request)
        except asyncio.CancelledError:
            if task not in self._closed:
                raise
            task.uncancel()  # cancelled by `aclose`, not by the caller
            raise WireError("network", "connection error (the client was closed)") from None
        finally:
            self._flying.discard(task)
            self._closed.discard(task)

    async def _send(self, request: WireRequest) -> WireResponse:
        try:
            url, headers = prepared(request.url, request.headers)
        except UrlError as exc:
            raise WireError("request", str(exc)) from None
        proxy = self._proxies.for_url(request.url) if self._proxies else None
        how = _Exchange(url_origin(request.url), proxy, request.timeout, request.deadline)
        for attempt in range(2):
            context = SimpleNamespace(reused=False)
            try:
                return await self._exchange(request, url, headers, how, context)
            except _Dropped:
                if attempt == 0 and context.reused:
                    continue  # a kept-alive connection the server had closed: a fresh one
                raise
        raise AssertionError("unreachable")  # pragma: no cover

    async def _exchange(
        self,
        request: WireRequest,
        url: str,
        headers: dict[str, str],
        how: _Exchange,
        context: SimpleNamespace,
    ) -> WireResponse:
        import aiohttp

        session = self._client()
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=how.idle, sock_read=how.idle)
        deadline = asyncio.timeout(how.deadline)
        try:
            async with (
                deadline,
                session.request(
                    request.method,
                    url,
                    headers=headers,
                    data=request.body if request.body or request.method != "GET" else None,
                    proxy=how.proxy,
                    timeout=timeout,
                    allow_redirects=False,
                    trace_request_ctx=context,
                    # the certificates are loaded for the first https URL only: 30-60 ms
                    # that a run against http://127.0.0.1 (vLLM, Ollama) never needs
                    ssl=self.tls() if url.startswith("https:") else True,
                ) as response,
            ):
                if response.status == 407 and how.proxy is not None:
                    raise _proxy_auth(how.proxy)
                body = await self._read(response, how.origin)
                raw = response.raw_headers
        except WireError:
            raise
        except TimeoutError as exc:
            if deadline.expired():
                raise WireError(
                    "deadline", f"{how.origin} did not finish its reply before the call's deadline"
                ) from None
            if isinstance(exc, aiohttp.ConnectionTimeoutError):
                raise _timed_out(how.idle, f" connecting to {how.origin}") from None
            raise _timed_out(how.idle) from None
        except ssl.SSLCertVerificationError as exc:  # aiohttp's certificate error too
            raise _certificate(how.origin, exc) from None
        except (aiohttp.ClientError, OSError, ValueError) as exc:
            raise _failure(exc, how) from None
        return WireResponse(response.status, _headers(raw, how.origin), body)

    async def _read(self, response: aiohttp.ClientResponse, origin: str) -> bytes:
        """The body, decompressed as it comes, refused once it passes the cap (a body that
        says it is larger is refused before a byte of it is read)."""
        length = response.content_length
        if length is not None and length > self._max:
            raise _too_large(origin, self._max)
        parts: list[bytes] = []
        size = 0
        async for chunk in response.content.iter_any():
            size += len(chunk)
            if size > self._max:
                response.close()
                raise _too_large(origin, self._max)
            parts.append(chunk)
        return b"".join(parts)

    async def aclose(self) -> None:
        """Close every connection; a request in flight ends with a WireError. The sender
        stays usable (a new session on the next request)."""
        for task in self._flying:
            if task is not asyncio.current_task():
                self._closed.add(task)
                task.cancel()
        session, self._session = self._session, None
        if session is None or session.closed:
            return
        if self._loop is not asyncio.get_running_loop():
            session.detach()  # made on another loop, which alone could close it
            return
        await session.close()


def _headers(raw: Any, origin: str) -> dict[str, str]:
    """The reply's headers, names lowercased, framing and undone codings left out."""
    found: dict[str, str] = {}
    lengths = 0
    for name_bytes, value_bytes in raw:
        name = name_bytes.decode("latin-1").lower()
        lengths += name == "content-length"
        found[name] = value_bytes.decode("latin-1")
    if lengths > 1:  # aiohttp's C parser refuses it; its pure-Python one does not
        raise WireError(
            "protocol",
            f"{origin} sent a reply that is not valid HTTP/1.1 (Duplicate "
            "Content-Length); not retried: the server, or a proxy before it, is broken",
        )
    if found.get("content-encoding", "").strip().lower() in _DECODED:
        del found["content-encoding"]
    found.pop("content-length", None)
    found.pop("transfer-encoding", None)
    return found


def _failure(exc: BaseException, how: _Exchange) -> WireError:
    """aiohttp's error (or the OS's) as a WireError of the right kind."""
    import aiohttp

    origin = how.origin
    if isinstance(exc, aiohttp.ClientHttpProxyError):
        if exc.status == 407 and how.proxy is not None:
            return _proxy_auth(how.proxy)
        return WireError(
            "connect", f"cannot connect to {origin}: the proxy answered HTTP {exc.status}"
        )
    if isinstance(exc, aiohttp.ClientProxyConnectionError) and how.proxy is not None:
        return WireError(
            "connect",
            f"cannot connect to {origin} (its proxy {url_origin(how.proxy)} is not reachable)",
        )
    if isinstance(exc, aiohttp.ClientConnectorSSLError):
        reason = getattr(exc.os_error, "reason", None) or type(exc.os_error).__name__
        return WireError("connect", f"cannot connect to {origin} (TLS: {reason})")
    if isinstance(exc, aiohttp.ClientConnectorError):
        return WireError("connect", f"cannot connect to {origin}")
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return _Dropped("network", "connection error (the server closed it)")
    if isinstance(exc, aiohttp.ClientPayloadError):
        if type(exc.__cause__).__name__ == "ContentEncodingError":
            return WireError(
                "protocol", f"{origin} sent a body that does not decode as its Content-Encoding"
            )
        return WireError("network", "connection error (the reply stopped before its end)")
    if isinstance(exc, aiohttp.ClientResponseError):  # the parser refused the reply's bytes
        return WireError(
            "protocol",
            f"{origin} sent a reply that is not valid HTTP/1.1 ({_first_line(exc.message)}); "
            "not retried: the server, or a proxy before it, is broken",
        )
    if isinstance(exc, (aiohttp.InvalidURL, ValueError)):
        return WireError("request", f"the request to {origin} cannot be sent ({exc})")
    reason = getattr(exc, "strerror", None) or _first_line(exc) or type(exc).__name__
    return WireError("network", f"connection error ({reason})")


def _first_line(message: object) -> str:
    """aiohttp's parser messages end with the offending bytes on lines of their own."""
    text = str(message).strip()
    return text.splitlines()[0].rstrip(": ")[:200] if text else ""


def _certificate(origin: str, exc: BaseException) -> WireError:
    """Which certificate check failed, in words a user can act on (not retried)."""
    exc = getattr(exc, "certificate_error", exc)  # aiohttp's wraps the ssl module's
    code = getattr(exc, "verify_code", None)
    said = getattr(exc, "verify_message", None) or getattr(exc, "reason", None) or str(exc)
    if code in (62, 64) or "mismatch" in str(said).lower():  # X509_V_ERR_*_MISMATCH
        why = (
            f"its certificate is for another host name (wrong hostname: {said}); use the "
            "host name the certificate names"
        )
    elif code == 10:
        why = f"its certificate has expired ({said})"
    else:
        why = (
            f"its certificate is not trusted (untrusted: {said}); give the CA that signed "
            "it (SSL_CERT_FILE, or the CA file option)"
        )
    return WireError("certificate", f"cannot connect to {origin}: {why}")


def _proxy_auth(proxy: str) -> WireError:
    return WireError(
        "proxy",
        f"the proxy {url_origin(proxy)} answered HTTP 407 (proxy authentication required): "
        "give its user and password in the proxy URL, as http://user:password@host:port",
    )


def _too_large(origin: str, limit: int) -> WireError:
    return WireError(
        "too-large",
        f"{origin} sent a reply larger than {limit // (1024 * 1024)} MB after decompression; "
        "not read further: is this the right server?",
    )


def _timed_out(seconds: float | None, doing: str = "") -> WireError:
    after = f" after {seconds:g} s" if seconds else ""
    return WireError("timeout", f"timed out{after}{doing}")


async def _mark_reused(session: Any, context: Any, params: Any) -> None:
    """aiohttp's trace: the request went out on a kept-alive connection."""
    if context.trace_request_ctx is not None:
        context.trace_request_ctx.reused = True
