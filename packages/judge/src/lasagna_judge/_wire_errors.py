"""The failures of an HTTP exchange as lasagna says them: `WireError`, whose `kind` tells the
retry logic whether another attempt can help, and `failure`, which turns httpx2's
exceptions (and the OS's and the ssl module's beneath them) into one, in words a user can
act on. A server is named by its origin only (no credentials, no path)."""

from __future__ import annotations

import ssl
from typing import Literal
from urllib.parse import urlsplit

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


class WireError(Exception):
    """The request got no usable HTTP reply; `kind` says why, `retried` whether another
    attempt may help (`RETRIED_KINDS`)."""

    def __init__(self, kind: WireErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind = kind

    @property
    def retried(self) -> bool:
        return self.kind in RETRIED_KINDS


# h11's words for the framing it refuses, in the words lasagna has always used for them.
_FRAMING = (
    ("conflicting content-length", "Duplicate Content-Length"),
    ("illegal status line", "Bad status line"),
    ("bad content-length", "Invalid character in Content-Length"),
    ("chunk header", "Invalid character in chunk size"),
    ("chunk", "Invalid chunk"),
)


def failure(exc: BaseException, origin: str, proxy: str | None, idle: float | None) -> WireError:
    """httpx2's error (or the OS's) as a WireError of the right kind."""
    import httpx2

    said = _first_line(exc)
    if isinstance(exc, httpx2.ProxyError):
        if "407" in said and proxy is not None:
            return proxy_auth(proxy)
        return WireError("connect", f"cannot connect to {origin}: the proxy answered {said}")
    if isinstance(exc, httpx2.TimeoutException):
        after = f" after {idle:g} s" if idle else ""
        if isinstance(exc, httpx2.ConnectTimeout):
            return WireError("timeout", f"timed out{after} connecting to {origin}")
        return WireError("timeout", f"timed out{after}")
    cert = _cause(exc, ssl.SSLCertVerificationError)
    if cert is not None:
        return certificate(origin, cert)
    if isinstance(exc, httpx2.ConnectError):
        tls = _cause(exc, ssl.SSLError)
        if tls is not None:
            reason = getattr(tls, "reason", None) or type(tls).__name__
            return WireError("connect", f"cannot connect to {origin} (TLS: {reason})")
        if proxy is not None:
            return WireError(
                "connect",
                f"cannot connect to {origin} (its proxy {url_origin(proxy)} is not reachable)",
            )
        return WireError("connect", f"cannot connect to {origin}")
    if isinstance(exc, httpx2.DecodingError):
        return WireError(
            "protocol", f"{origin} sent a body that does not decode as its Content-Encoding"
        )
    if isinstance(exc, httpx2.RemoteProtocolError):
        lowered = said.lower()
        if "without sending a response" in lowered or "server disconnected" in lowered:
            return WireError("network", "connection error (the server closed it)")
        if "incomplete" in lowered or "peer closed" in lowered:
            return WireError("network", "connection error (the reply stopped before its end)")
        reason = next((ours for theirs, ours in _FRAMING if theirs in lowered), said[:200])
        return WireError(
            "protocol",
            f"{origin} sent a reply that is not valid HTTP/1.1 ({reason}); not retried: the "
            "server, or a proxy before it, is broken",
        )
    if isinstance(exc, httpx2.LocalProtocolError | httpx2.UnsupportedProtocol):
        return WireError("request", f"the request to {origin} cannot be sent ({said})")
    if isinstance(exc, httpx2.InvalidURL | ValueError | TypeError):
        return WireError("request", f"the request to {origin} cannot be sent ({exc})")
    inner = exc.__cause__ or exc.__context__ if not said else None
    reason = getattr(exc, "strerror", None) or said or _first_line(inner) or type(exc).__name__
    return WireError("network", f"connection error ({reason})")


def url_origin(url: str) -> str:
    """scheme://host:port of a URL, without any user:password@ it may carry."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"  # IPv6
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:  # a port that is not a number
        port = ""
    return f"{parts.scheme}://{host}{port}"


def _cause(exc: BaseException | None, kind: type[BaseException]) -> BaseException | None:
    """The first exception of `kind` in `exc`'s chain of causes (httpcore's among them)."""
    for _ in range(8):
        if exc is None or isinstance(exc, kind):
            return exc
        exc = exc.__cause__ or exc.__context__
    return None


def _first_line(message: object) -> str:
    text = str(message).strip()
    return text.splitlines()[0].rstrip(": ")[:200] if text else ""


def certificate(origin: str, exc: BaseException) -> WireError:
    """Which certificate check failed, in words a user can act on (not retried)."""
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


def proxy_auth(proxy: str) -> WireError:
    return WireError(
        "proxy",
        f"the proxy {url_origin(proxy)} answered HTTP 407 (proxy authentication required): "
        "give its user and password in the proxy URL, as http://user:password@host:port",
    )


def too_large(origin: str, limit: int) -> WireError:
    return WireError(
        "too-large",
        f"{origin} sent a reply larger than {limit // (1024 * 1024)} MB after decompression; "
        "not read further: is this the right server?",
    )
