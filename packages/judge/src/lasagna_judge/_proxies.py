"""Which HTTP proxy a request goes through, decided from settings the caller passes in.

The libraries read no environment variable: a command builds `Proxies.from_environ(env)`
from the environment it was started with (HTTP_PROXY, HTTPS_PROXY, NO_PROXY, lower case
too, as curl and urllib read them) and hands it to `make_llm(proxies=...)` or an HTTP
system; `None` (the default) sends every request directly.

`NO_PROXY` is read as curl and the standard library read it: names separated by commas
(or spaces), each a host (`example.com` also covers `api.example.com`; a leading dot is
the same), an IP address, or `host:port` for that port only; `*` is every host. Case does
not matter. Loopback addresses are not special: a local model server is reached through
the proxy unless NO_PROXY names it (most proxy setups list `localhost,127.0.0.1` there).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit


def _first_set(env: Mapping[str, str], *names: str) -> tuple[str, str] | None:
    """The first of `names` set to a non-blank value in `env`: (name, value stripped)."""
    for name in names:
        value = env.get(name)
        if value is not None and value.strip():
            return name, value.strip()
    return None


def _proxy_url(env: Mapping[str, str], *names: str) -> str | None:
    """The proxy URL the first set variable gives: `host:port` read as http://host:port,
    as curl reads it; a JudgeError for a proxy that is not spoken to in HTTP (socks5://)."""
    found = _first_set(env, *names)
    if found is None:
        return None
    name, value = found
    if "://" not in value:
        value = "http://" + value
    scheme = value.split("://", 1)[0].lower()
    if scheme not in ("http", "https"):
        from lasagna_judge._errors import JudgeError

        raise JudgeError(
            f"{name}: expected an http:// or https:// proxy such as http://proxy.example:3128, "
            f"got a {scheme}:// one; lasagna speaks HTTP to its proxy"
        )
    return value


@dataclass(frozen=True, slots=True)
class Proxies:
    """Proxy URLs per scheme of the request, and the hosts that bypass them."""

    http: str | None = None
    """The proxy of http:// requests (HTTP_PROXY)."""
    https: str | None = None
    """The proxy of https:// requests (HTTPS_PROXY), reached with CONNECT."""
    no_proxy: str = ""
    """Hosts reached directly (NO_PROXY's syntax)."""

    def __repr__(self) -> str:  # a proxy URL may carry user:password@
        return "Proxies(...)"

    @classmethod
    def from_environ(cls, env: Mapping[str, str]) -> Proxies | None:
        """The proxies `env` names (the lower-case variable first, as curl reads them);
        None when it names none. JudgeError for a proxy that is not an HTTP one."""
        http = _proxy_url(env, "http_proxy", "HTTP_PROXY")
        https = _proxy_url(env, "https_proxy", "HTTPS_PROXY")
        if http is None and https is None:
            return None
        no_proxy = _first_set(env, "no_proxy", "NO_PROXY")
        return cls(http, https, no_proxy[1] if no_proxy else "")

    def for_url(self, url: str) -> str | None:
        """The proxy a request to `url` goes through, or None to go directly."""
        parts = urlsplit(url)
        proxy = self.https if parts.scheme == "https" else self.http
        if proxy is None or bypassed(parts.hostname or "", parts.port, self.no_proxy):
            return None
        return proxy


def bypassed(host: str, port: int | None, no_proxy: str) -> bool:
    """Whether NO_PROXY's list names `host` (and `port`, where an entry gives one)."""
    host = host.lower().strip("[]")
    for entry in no_proxy.replace(" ", ",").split(","):
        entry = entry.strip().lower()
        if not entry:
            continue
        if entry == "*":
            return True
        name, given = entry, ""
        if entry.startswith("[") and "]:" in entry:  # [IPv6 address]:port
            name, _, given = entry[1:].partition("]:")
        elif entry.count(":") == 1:  # host:port (a bare IPv6 address has several colons)
            name, _, given = entry.partition(":")
        if given and not given.isdigit():
            continue
        wanted = int(given) if given else None
        name = name.strip("[]").lstrip(".")
        if wanted is not None and wanted != port:
            continue
        if host == name or host.endswith("." + name):
            return True
    return False
