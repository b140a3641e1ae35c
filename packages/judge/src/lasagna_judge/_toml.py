"""TOML a user wrote, read as `tomllib` (or kag's TOML 1.1 parser) reads it, with its nesting
bounded before it is parsed.

`tomllib` recurses into each nested array and inline table: 5,000 `[` end in a
`RecursionError`. A dotted key of 100,000 parts (`a.a.a...`, or a `[a.a.a...]` header)
makes it allocate in proportion to the square of the parts (gigabytes). No sweep file,
rubric, price table or kag config is nested past a handful of levels, so a text nested past
`MAX_DEPTH` is refused here, in one scan of it, as a `TomlError` (a `ValueError`, which
every reader of TOML already reports in one line); so is any error of the parser.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from typing import Any

#: Nesting (arrays and inline tables inside each other, or the parts of a dotted key) no
#: file of lasagna's comes near.
MAX_DEPTH = 100

_KEY_PART = r"""(?:[A-Za-z0-9_-]+|"(?:[^"\\\n]|\\.)*"|'[^'\n]*')"""
# Strings and comments are passed over whole; what is left are brackets and dotted keys.
_TOKENS = re.compile(
    r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*'
    rf"|(?P<key>{_KEY_PART}(?:[ \t]*\.[ \t]*{_KEY_PART}){{{MAX_DEPTH},}})"
    r"|(?P<open>[\[{])|(?P<close>[\]}])"
)
_DEEP = "arrays, tables or dotted keys nested too deep to read (over {depth} levels)"


class TomlError(ValueError):
    """A TOML text that cannot be read: its syntax, or nesting too deep."""


def nesting_depth(text: str) -> int:
    """The deepest nesting of brackets in `text`, or a number over `MAX_DEPTH` when a dotted
    key has more parts than that (strings and comments aside)."""
    depth = deepest = 0
    for match in _TOKENS.finditer(text):
        if match.group("key") is not None:
            return MAX_DEPTH + 1
        if match.group("open") is not None:
            depth += 1
            deepest = max(deepest, depth)
        elif match.group("close") is not None:
            depth -= 1
    return deepest


def load_toml(
    text: str, *, loads: Callable[[str], dict[str, Any]] = tomllib.loads
) -> dict[str, Any]:
    """`loads(text)` (`tomllib.loads` unless told), refusing with a `TomlError` a text nested
    past `MAX_DEPTH`, and turning the parser's own errors into `TomlError` with its message."""
    if nesting_depth(text) > MAX_DEPTH:
        raise TomlError(_DEEP.format(depth=MAX_DEPTH))
    try:
        return loads(text)
    except RecursionError:
        raise TomlError(_DEEP.format(depth=MAX_DEPTH)) from None
    except ValueError as exc:  # tomllib's and tomli's TOMLDecodeError
        raise TomlError(str(exc)) from None
