"""A sweep file's (or kag's SETUPS.toml's) `system:`, as a `SystemSpec`.

A setup says `system: <target>` (as --system takes it) or
`system: {predictions: PRED.jsonl, allow_missing: true}`,
`system: {callable: pkg.mod:attr, timeout: 120}` or
`system: {url: http://..., timeout: 30, retries: 3, backoff: 0.25, headers: {...}}`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lasagna_cli.engine._errors import did_you_mean
from lasagna_cli.engine.systems._spec import (
    TARGET_HELP,
    SystemSpec,
    _check_callable,
    _check_credentials_once,
    _check_url,
    _positive_number,
    _proxies,
    _retries,
    expand_env,
    spec_from_target,
    usage,
)

_SWEEP_KEYS = (
    "predictions",
    "allow_missing",
    "callable",
    "url",
    "timeout",
    "retries",
    "backoff",
    "headers",
)


def spec_from_sweep(
    value: object, where: str, base_dir: Path, env: Mapping[str, str]
) -> SystemSpec:
    """A sweep setup's `system:`: a target string or a mapping (see the module docstring)."""
    if isinstance(value, str):
        return spec_from_target(value, where, proxies=_proxies(env))
    if not isinstance(value, Mapping):
        raise usage(
            f"{where}: expected {TARGET_HELP}, or a mapping with `predictions:`, `callable:` "
            f"or `url:`; got {type(value).__name__}"
        )
    for key in value:
        if key not in _SWEEP_KEYS:
            hint = did_you_mean(str(key), _SWEEP_KEYS)
            raise usage(
                f'{where}: unknown key "{key}"{hint}; the keys are {", ".join(_SWEEP_KEYS)}'
            )
    kinds = [k for k in ("predictions", "callable", "url") if k in value]
    if len(kinds) != 1:
        raise usage(
            f"{where}: give exactly one of `predictions:` (a JSONL file), `callable:` "
            f"(package.module:attr) or `url:` (http(s)://...); got {len(kinds)}"
        )
    kind = kinds[0]
    given = value[kind]
    if not isinstance(given, str) or not given.strip():
        raise usage(f"{where}.{kind}: expected a non-empty string, got {given!r}")
    http_keys = [k for k in ("retries", "backoff", "headers") if k in value]
    if kind != "url" and http_keys:
        raise usage(f"{where}.{http_keys[0]}: applies to a `url:` system only")
    if kind == "predictions" and "timeout" in value:
        raise usage(f"{where}.timeout: applies to a `callable:` or `url:` system only")
    if kind != "predictions" and "allow_missing" in value:
        raise usage(f"{where}.allow_missing: applies to a `predictions:` file only")
    if kind == "predictions":
        allow = value.get("allow_missing", False)
        if not isinstance(allow, bool):
            raise usage(f"{where}.allow_missing: expected true or false, got {allow!r}")
        path = Path(given).expanduser()
        if not path.is_absolute():
            path = base_dir / path
        return SystemSpec(kind="predictions", target=given, path=path, allow_missing=allow)
    options: dict[str, Any] = {}
    if "timeout" in value:
        options["timeout"] = _positive_number(value["timeout"], f"{where}.timeout")
    if kind == "callable":
        return SystemSpec(
            kind="callable", target=_check_callable(given.strip(), f"{where}.callable"), **options
        )
    if "retries" in value:
        options["retries"] = _retries(value["retries"], f"{where}.retries")
    if "backoff" in value:
        options["backoff"] = _positive_number(value["backoff"], f"{where}.backoff")
    if "headers" in value:
        raw = value["headers"]
        if not isinstance(raw, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in raw.items()
        ):
            raise usage(f"{where}.headers: expected a mapping of header names to strings")
        options["headers"] = tuple(
            (name, expand_env(text, f"{where}.headers.{name}", env)) for name, text in raw.items()
        )
    _check_credentials_once(given, options.get("headers", ()), where)
    return SystemSpec(
        kind="http",
        target=_check_url(given.strip(), f"{where}.url"),
        proxies=_proxies(env),
        **options,
    )
