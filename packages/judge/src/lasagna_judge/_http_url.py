"""A request's URL and headers as lasagna sends them, worked out before aiohttp sees them:
the host in IDNA 2008, the base URL's path and query string kept, the credentials a URL
carries turned into one Authorization header, headers that would break the request's head
refused, and a URL's origin for messages (never its credentials or path).
"""

from __future__ import annotations

import base64
from urllib.parse import unquote, urlsplit, urlunsplit

ACCEPT_ENCODING = "gzip, deflate"
"""The codings asked for: the ones aiohttp undoes with zlib alone, which the size cap
counts after decompression."""

_SKIPPED = frozenset({"host", "content-length", "transfer-encoding", "accept-encoding"})


class UrlError(ValueError):
    """A URL or header that cannot be sent; the message says which and what to do."""


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


def endpoint(base_url: str, path: str) -> str:
    """`path` (chat/completions) after a base URL's own path; the base URL's query string
    (an Azure-style `?api-version=2024-06-01`) stays at the end, not in the path."""
    parts = urlsplit(base_url)
    joined = parts.path.rstrip("/") + "/" + path.lstrip("/")
    return urlunsplit((parts.scheme, parts.netloc, joined, parts.query, ""))


def idna_host(host: str) -> str:
    """A host name as DNS knows it, by IDNA 2008 with UTS 46 (`faß.de` is xn--fa-hia.de;
    Python's own codec, IDNA 2003, makes it fass.de, another host); ASCII as it is."""
    if host.isascii():
        return host
    import idna

    try:
        return idna.encode(host, uts46=True).decode("ascii")
    except idna.IDNAError as exc:
        raise UrlError(
            f"the host name {host!r} is not a valid internationalised name ({exc}); check the URL"
        ) from None


def _basic(user: str | None, password: str | None) -> str:
    pair = f"{unquote(user or '')}:{unquote(password or '')}".encode()
    return "Basic " + base64.b64encode(pair).decode("ascii")


def prepared(url: str, headers: list[tuple[str, str]]) -> tuple[str, dict[str, str]]:
    """The URL to send (its host by IDNA 2008, without credentials) and its headers. A
    URL's user:password@ is sent as Basic credentials unless an Authorization header is
    given (an API key): one header, the one given. UrlError for a URL that is not http(s),
    a port that is not a number, or a header holding a line break."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UrlError(f"expected an http:// or https:// URL with a host, got {url_origin(url)!r}")
    try:
        port = parts.port
    except ValueError as exc:
        raise UrlError(f"the server's URL cannot be read ({exc})") from None
    host = idna_host(parts.hostname)
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{port}" if port else host
    sent: dict[str, str] = {}
    for name, value in headers:
        if "\r" in value or "\n" in value or "\r" in name or "\n" in name:
            raise UrlError("a request header holds a line break; remove it")
        if name.lower() not in _SKIPPED:
            sent[name] = value
    if parts.username is not None and not any(n.lower() == "authorization" for n in sent):
        sent["Authorization"] = _basic(parts.username, parts.password)
    sent["Accept-Encoding"] = ACCEPT_ENCODING
    return urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, "")), sent
