"""One HTTP request on the wire, sent with aiohttp.

Why aiohttp and not the SDKs' own httpx2: on a small machine httpx2's pure-Python
connection pool costs about 3 ms of CPU per request once 50 connections are open (it scans
every connection on each request); aiohttp's C-accelerated client does the same work in a
fraction of that, which is what lets one process keep 50 calls in flight at hundreds of
calls a second. Failures come back as `WireError` with a kind the retry logic understands.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from lasagna_judge._proxies import Proxies

WireErrorKind = Literal["timeout", "connect", "network"]


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
    """The request got no HTTP reply: a timeout, a refused connection, a dropped one."""

    def __init__(self, kind: WireErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def _origin(url: str) -> str:
    """scheme://host:port of a URL, without any user:password@ it may carry."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"  # IPv6
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}"


_DROPPED = frozenset({"content-encoding", "content-length", "transfer-encoding"})


class AiohttpSender:
    """Keeps up to `limit` keep-alive connections; one aiohttp session per event loop.
    `proxies` (given by the caller, never read from the environment here) picks each
    request's proxy; None: every request goes directly."""

    def __init__(self, limit: int, proxies: Proxies | None = None) -> None:
        self._limit = limit
        self._proxies = proxies
        self._session: Any = None
        self._timeouts: dict[float | None, Any] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    def _current_session(self) -> Any:
        import aiohttp

        loop = asyncio.get_running_loop()
        if self._session is None or self._session.closed or self._loop is not loop:
            # A session belongs to the loop it was made on: a new loop gets a new session.
            connector = aiohttp.TCPConnector(
                limit=self._limit, limit_per_host=self._limit, keepalive_timeout=30.0
            )
            self._session = aiohttp.ClientSession(
                connector=connector, trust_env=False, auto_decompress=True
            )
            self._loop = loop
        return self._session

    async def send(self, request: WireRequest) -> WireResponse:
        import aiohttp

        session = self._current_session()
        timeout = self._timeouts.get(request.timeout)
        if timeout is None:  # one per value, not per request (the origin only for an error)
            timeout = self._timeouts[request.timeout] = aiohttp.ClientTimeout(
                total=None, sock_connect=request.timeout, sock_read=request.timeout
            )
        try:
            async with session.request(
                request.method,
                request.url,
                data=request.body or None,
                headers=request.headers,
                timeout=timeout,
                allow_redirects=False,
                proxy=self._proxies.for_url(request.url) if self._proxies else None,
            ) as response:
                body = await response.read()
                headers = {
                    name.decode("latin-1").lower(): value.decode("latin-1")
                    for name, value in response.raw_headers
                }
                status = response.status
        except (TimeoutError, aiohttp.ServerTimeoutError) as exc:
            seconds = f" after {request.timeout:g} s" if request.timeout else ""
            raise WireError("timeout", f"timed out{seconds}") from exc
        except aiohttp.ClientConnectorError as exc:
            raise WireError("connect", f"cannot connect to {_origin(request.url)}") from exc
        except (aiohttp.ClientError, OSError) as exc:
            raise WireError("network", f"connection error ({type(exc).__name__})") from exc
        for name in _DROPPED:
            headers.pop(name, None)
        return WireResponse(status, headers, body)

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is None or session.closed:
            return
        # A session made on a loop that has since closed cannot be awaited on this one.
        with contextlib.suppress(RuntimeError):
            await session.close()
