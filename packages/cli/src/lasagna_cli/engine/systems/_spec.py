"""How a setup names its system under test, from flags or a sweep file.

    --predictions PRED.jsonl [--allow-missing]
    --predictions-from-data [--allow-missing]           (the outputs a RAGAS or DeepEval
                                                         data file records)
    --system package.module:attr [--system-timeout S]     (or path/to/file.py:attr)
    --system http://host:port/path [--system-timeout S] [--system-retries N]
                                   [--system-header 'Authorization: Bearer ${TOKEN}']

In a sweep file a setup says `system: <target>` or a mapping (`_spec_sweep`).

The timeout of an HTTP system is per attempt (default 60 s); of a callable, per question
(default: none, since a local pipeline may be slow by design).

`${NAME}` in a header value is read from the environment, so a key need not be typed on a
command line or written in a file. Header values are never recorded anywhere: the
description that goes into results names the headers, not their values, and a URL's
password and query-string values are masked.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit, urlunsplit

from lasagna_cli.engine._errors import EngineUsageError

if TYPE_CHECKING:
    from lasagna_judge import Proxies

SystemKind = Literal["predictions", "callable", "http"]
DEFAULT_TIMEOUT = 60.0
DEFAULT_RETRIES = 3
DEFAULT_BACKOFF = 0.25
_ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_ATTRIBUTE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*\Z")
TARGET_HELP = (
    "package.module:attr (a function, a LangChain retriever or runnable, or a factory "
    "returning one; path/to/file.py:attr works too) or an http(s):// URL"
)


def usage(message: str) -> EngineUsageError:
    return EngineUsageError(message)


def _proxies(env: Mapping[str, str]) -> Proxies | None:
    """The proxies of an HTTP system, from the environment the command passes."""
    from lasagna_judge import JudgeError, Proxies

    try:
        return Proxies.from_environ(env)
    except JudgeError as exc:
        raise EngineUsageError(str(exc)) from None


@dataclass(frozen=True)
class SystemSpec:
    """One system under test. `target` is as the user gave it."""

    kind: SystemKind
    target: str = field(repr=False)  # a URL may carry a password: `describe()` masks it
    path: Path | None = None
    """predictions: the file (resolved against the sweep file's folder)."""
    allow_missing: bool = False
    timeout: float | None = None
    """Seconds: per attempt for http (None: DEFAULT_TIMEOUT), per question for a callable."""
    retries: int = DEFAULT_RETRIES
    backoff: float = DEFAULT_BACKOFF
    """The first retry waits up to this many seconds; each later one up to twice as long."""
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    from_data: bool = False
    """predictions: the outputs recorded in the data file itself (RAGAS `response` and
    `retrieved_contexts`, DeepEval `actual_output` and `retrieval_context`)."""
    data_format: str | None = None
    """from_data: the data's format (`lasagna_synth.load_data`'s `format=`); None: detected."""
    proxies: Proxies | None = field(default=None, repr=False, compare=False)
    """http: the proxies its requests go through (HTTP_PROXY, HTTPS_PROXY, NO_PROXY of the
    `env` the command passed); never recorded (a proxy URL may carry a password)."""

    @property
    def label(self) -> str:
        """How messages name the system."""
        if self.kind == "predictions" and self.from_data:
            return f"--predictions-from-data ({self.target})"
        if self.kind == "predictions":
            return f"--predictions {self.target}"
        if self.kind == "http":
            return f"--system {redact_url(self.target)}"
        return f"--system {self.target}"

    @property
    def http_timeout(self) -> float:
        return self.timeout if self.timeout is not None else DEFAULT_TIMEOUT

    def describe(self) -> dict[str, Any]:
        """What results and manifests record: never a header value or a password."""
        if self.kind == "predictions":
            described: dict[str, Any] = {
                "kind": "predictions",
                "file": self.target,
                "allow_missing": self.allow_missing,
            }
            if self.from_data:
                described["from_data"] = True
            return described
        if self.kind == "callable":
            described = {"kind": "callable", "target": self.target}
            if self.timeout is not None:
                described["timeout_s"] = self.timeout
            return described
        return {
            "kind": "http",
            "url": redact_url(self.target),
            "timeout_s": self.http_timeout,
            "retries": self.retries,
            "headers": sorted({name for name, _ in self.headers}),
        }


def redact_url(url: str) -> str:
    """The URL without its password and with query values masked (keys may sit there)."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, host = netloc.rpartition("@")
        user = userinfo.partition(":")[0]
        netloc = f"{user}:***@{host}" if ":" in userinfo else f"{user}@{host}"
    query = "&".join(
        f"{pair.partition('=')[0]}=***" if "=" in pair else pair
        for pair in parts.query.split("&")
        if pair
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def expand_env(text: str, where: str, env: Mapping[str, str]) -> str:
    """`${NAME}` replaced by the variable's value in `env` (the command passes the
    environment); a missing one is an error."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        found = env.get(name)
        if found is None:
            raise usage(f"{where}: the environment variable {name} is not set; export it first")
        return found

    return _ENV_REFERENCE.sub(value, text)


def parse_header(text: str, where: str, env: Mapping[str, str]) -> tuple[str, str]:
    name, sep, value = text.partition(":")
    if not sep or not name.strip() or any(c.isspace() for c in name.strip()):
        raise usage(
            f"{where}: expected 'Name: value', e.g. 'Authorization: Bearer ${{TOKEN}}'; got a "
            "header without a name"
            if sep
            else f"{where}: expected 'Name: value', e.g. 'Authorization: Bearer ${{TOKEN}}'"
        )
    return name.strip(), expand_env(value.strip(), where, env)


def _check_url(url: str, where: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise usage(f"{where}: expected an http(s)://host[:port]/path URL, got {url!r}")
    try:
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        raise usage(f"{where}: the port of {redact_url(url)} is not a number 0-65535") from None
    return url


def _check_callable(target: str, where: str) -> str:
    module, sep, attr = target.rpartition(":")
    if not sep or not module.strip() or not _ATTRIBUTE.match(attr):
        hint = ""
        if target.lower().endswith((".jsonl", ".json")):
            hint = "; a file of outputs is given with --predictions (or `predictions:`)"
        raise usage(f"{where}: expected {TARGET_HELP}; got {target!r}{hint}")
    return target


def spec_from_target(target: str, where: str, **http: Any) -> SystemSpec:
    """`--system TARGET`: a URL or a `module:attr` callable."""
    target = target.strip()
    if "://" in target:
        _check_credentials_once(target, http.get("headers", ()), where)
        return SystemSpec(kind="http", target=_check_url(target, where), **http)
    http.pop("proxies", None)
    if http.get("headers"):
        raise usage(f"{where}: headers are for an http(s):// system, not {target!r}")
    return SystemSpec(
        kind="callable", target=_check_callable(target, where), timeout=http.get("timeout")
    )


def _check_credentials_once(url: str, headers: Sequence[tuple[str, str]], where: str) -> None:
    """A URL's user:password and an Authorization header cannot both be sent."""
    has_userinfo = "@" in urlsplit(url.strip()).netloc
    if has_userinfo and any(name.lower() == "authorization" for name, _ in headers):
        raise usage(
            f"{where}: the URL carries credentials (user:password@) and a header gives "
            "Authorization too; keep one of the two: the header, or the URL's credentials"
        )


def _positive_number(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise usage(f"{where}: expected a number of seconds above 0, got {value!r}")
    if not math.isfinite(value):
        raise usage(f"{where}: expected a finite number of seconds, got {value!r}")
    return float(value)


def _retries(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise usage(f"{where}: expected a whole number >= 0, got {value!r}")
    return value


def spec_from_flags(
    *,
    system: str | None,
    predictions: str | None,
    allow_missing: bool,
    timeout: float | None,
    retries: int | None,
    headers: Sequence[str],
    env: Mapping[str, str],
    predictions_from_data: str | None = None,
    data_format: str | None = None,
) -> SystemSpec | None:
    """The system the command's flags name, or None for the built-in BM25 setup.

    `predictions_from_data`: the data file's path, when --predictions-from-data asks for
    the outputs it records (read in `data_format`)."""
    named = [
        flag
        for flag, given in (
            ("--system", system is not None),
            ("--predictions", predictions is not None),
            ("--predictions-from-data", predictions_from_data is not None),
        )
        if given
    ]
    if len(named) > 1:
        count = "two" if len(named) == 2 else "three"
        raise usage(
            f"{' and '.join(named)} name {count} systems; give one (a sweep file compares "
            "several, each a setup with `system:`)"
        )
    http_flags = [
        flag
        for flag, given in (
            ("--system-timeout", timeout is not None),
            ("--system-retries", retries is not None),
            ("--system-header", bool(headers)),
        )
        if given
    ]
    if predictions_from_data is not None:
        if http_flags:
            raise usage(
                f"{http_flags[0]} is for an http(s):// --system, not --predictions-from-data"
            )
        return SystemSpec(
            kind="predictions",
            target=predictions_from_data,
            path=Path(predictions_from_data).expanduser(),
            allow_missing=allow_missing,
            from_data=True,
            data_format=data_format,
        )
    if predictions is not None:
        if http_flags:
            raise usage(f"{http_flags[0]} is for an http(s):// --system, not --predictions")
        path = Path(predictions).expanduser()
        return SystemSpec(
            kind="predictions", target=predictions, path=path, allow_missing=allow_missing
        )
    if allow_missing:
        raise usage(
            "--allow-missing is for --predictions (questions a predictions file leaves out); "
            "a --system is asked every question"
        )
    if system is None:
        if http_flags:
            raise usage(f"{http_flags[0]} needs --system http(s)://...")
        return None
    options: dict[str, Any] = {}
    if timeout is not None:
        options["timeout"] = _positive_number(timeout, "--system-timeout")
    if retries is not None:
        options["retries"] = _retries(retries, "--system-retries")
    if headers:
        options["headers"] = tuple(parse_header(h, "--system-header", env) for h in headers)
    only_http = [flag for flag in http_flags if flag != "--system-timeout"]
    if "://" not in system and only_http:
        raise usage(f"{only_http[0]} is for an http(s):// --system, not {system!r}")
    return spec_from_target(system, "--system", proxies=_proxies(env), **options)


def default_setup_name(spec: SystemSpec) -> str:
    """A setup name (letters, digits, `._-`) that says which system it is."""
    if spec.kind == "predictions":
        raw = Path(spec.target).stem + ("-outputs" if spec.from_data else "")
    elif spec.kind == "callable":
        module, _, attr = spec.target.rpartition(":")
        module = Path(module).stem if module.endswith(".py") else module.rpartition(".")[2]
        raw = f"{module}.{attr}"
    else:
        parts = urlsplit(spec.target)
        raw = "-".join(
            p
            for p in ("http", parts.hostname or "", str(parts.port or ""), parts.path.strip("/"))
            if p
        )
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", raw).strip("-._")[:100]
    return name or "system"
