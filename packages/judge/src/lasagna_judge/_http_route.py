"""Where a URL's requests go and how their bytes look: the connection's host and port
(the proxy's, if any), TLS, a CONNECT tunnel through an HTTPS proxy, the request line's
target, Host and the credentials a URL carries (`route_to`), and a request's head and body
(`request_bytes`). Worked out once per URL by `_wire.HttpSender`.
"""

from __future__ import annotations

import base64
import ssl
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import quote, unquote, urlsplit


def url_origin(url: str) -> str:
    """scheme://host:port of a URL, without any user:password@ it may carry."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"  # IPv6
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}"


_DEFAULT_PORTS = {"http": 80, "https": 443}
_SKIPPED = frozenset({"host", "content-length", "transfer-encoding", "accept-encoding"})
_ACCEPT = "Accept-Encoding: gzip, deflate\r\n"
_ssl_context: ssl.SSLContext | None = None


def tls() -> ssl.SSLContext:
    """The system's trusted certificates (SSL_CERT_FILE and SSL_CERT_DIR honoured), made
    once: building it reads them all (60 ms)."""
    global _ssl_context
    if _ssl_context is None:
        _ssl_context = ssl.create_default_context()
    return _ssl_context


def _basic(user: str | None, password: str | None) -> str:
    pair = f"{unquote(user or '')}:{unquote(password or '')}".encode()
    return "Basic " + base64.b64encode(pair).decode("ascii")


@dataclass(frozen=True)
class Route:
    """Where a URL's requests go, worked out once per URL."""

    key: tuple[str, ...]  # the pool's: connections with equal keys are interchangeable
    origin: str  # for messages: scheme://host:port, no credentials
    host: str  # to connect to (the proxy's, if any)
    port: int
    tls: bool  # TLS to `host`
    target: str  # the request line's target
    lines: str  # Host (and credentials from the URLs), each line with its CRLF
    tunnel: str = ""  # host:port to CONNECT to through the proxy, then TLS to `server_name`
    tunnel_lines: str = ""
    server_name: str = ""


def route_to(url: str, proxy: str | None) -> Route:
    """Where the requests to `url` go, through `proxy` (a proxy URL) if not None."""
    parts = urlsplit(url)
    scheme, host = parts.scheme, parts.hostname or ""
    if not host.isascii():  # an internationalised name: its ASCII form, as DNS knows it
        host = host.encode("idna").decode("ascii")
    port = parts.port or _DEFAULT_PORTS.get(scheme, 80)
    bracketed = f"[{host}]" if ":" in host else host  # an IPv6 address
    authority = bracketed
    if parts.port and parts.port != _DEFAULT_PORTS.get(scheme):
        authority += f":{parts.port}"
    path = quote(parts.path or "/", safe="/%:@!$&'()*+,;=-._~")
    query = quote(parts.query, safe="/%:@!$&'()*+,;=-._~?")
    target = path + (f"?{query}" if query else "")
    lines = f"Host: {authority}\r\n"
    if parts.username is not None:
        lines += f"Authorization: {_basic(parts.username, parts.password)}\r\n"
    if proxy is None:
        key: tuple[str, ...] = (scheme, host, str(port))
        return Route(key, url_origin(url), host, port, scheme == "https", target, lines)
    through = urlsplit(proxy)
    proxy_port = through.port or _DEFAULT_PORTS.get(through.scheme, 80)
    auth = (
        f"Proxy-Authorization: {_basic(through.username, through.password)}\r\n"
        if through.username is not None
        else ""
    )
    key = (scheme, host, str(port), proxy)
    shown = url_origin(url)
    proxied = (through.hostname or "", proxy_port, through.scheme == "https")
    if scheme == "https":  # a tunnel: the proxy sees only CONNECT host:port
        tunnel = f"{bracketed}:{port}"
        tunnel_lines = f"Host: {tunnel}\r\n{auth}"
        return Route(key, shown, *proxied, target, lines, tunnel, tunnel_lines, host)
    absolute = f"{scheme}://{authority}{target}"  # a plain proxy reads the whole URL
    return Route(key, shown, *proxied, absolute, lines + auth)


def request_bytes(
    method: str, route: Route, headers: Sequence[tuple[str, str]], body: bytes
) -> bytes:
    """A request's head and body, as they go on the wire; ValueError for a header that
    holds a line break (it would end the head early)."""
    kept = [f"{name}: {value}\r\n" for name, value in headers if name.lower() not in _SKIPPED]
    given = "".join(kept)
    if given.count("\r") != len(kept) or given.count("\n") != len(kept):
        raise ValueError("a request header holds a line break; remove it")
    length = f"Content-Length: {len(body)}\r\n" if body or method != "GET" else ""
    head = f"{method} {route.target} HTTP/1.1\r\n{route.lines}{given}{_ACCEPT}{length}\r\n"
    return head.encode("utf-8") + body
