"""Reading JSON a user or a server gave: what `json.loads` lets through, refused as bad JSON.

`json.loads` raises `RecursionError` on arrays nested 100,000 deep (no reader of it expects
that) and returns lone UTF-16 surrogates (`"\\ud800"`) as strings that cannot be written
back as UTF-8, so a file that "is valid" crashes whatever writes a row of it later. Both
come out here as `json.JSONDecodeError`, which every reader already turns into its one-line
message with the file and the line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

# A \uD800-\uDFFF escape and the backslashes before it (an even run is an escaped backslash
# followed by the letter u, not an escape). A high one may carry its low one after it.
_SURROGATE = re.compile(
    r"(\\+)u([dD][89abAB][0-9a-fA-F]{2})(\\u[dD][c-fC-F][0-9a-fA-F]{2})?"
    r"|(\\+)u([dD][c-fC-F][0-9a-fA-F]{2})"
)


def parse_json(
    text: str | bytes,
    *,
    object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None,
) -> Any:
    """`json.loads(text)`, with JSON nested too deep to read and lone surrogate escapes
    raised as `json.JSONDecodeError` (its `msg` says which, its `pos` where, when known)."""
    try:
        value = json.loads(text, object_pairs_hook=object_pairs_hook)
    except RecursionError:
        doc = text if isinstance(text, str) else text.decode("utf-8", "replace")
        raise json.JSONDecodeError(
            "arrays or objects nested too deep to read (hundreds of levels deep)",
            doc,
            0,
        ) from None
    if isinstance(text, bytes):
        if b"\\u" not in text:
            return value
        text = text.decode("utf-8", "replace")
    elif "\\u" not in text:
        return value
    lone = _lone_surrogate(text)
    if lone is not None:
        start, escape = lone
        raise json.JSONDecodeError(
            f"a lone UTF-16 surrogate {escape} (half of a pair; no UTF-8 text can hold it)",
            text,
            start,
        )
    return value


def _lone_surrogate(text: str) -> tuple[int, str] | None:
    """(position, escape) of the first surrogate escape without its other half."""
    for match in _SURROGATE.finditer(text):
        high_run, high, low_after, low_run, low = match.groups()
        if high is not None:
            if len(high_run) % 2 == 1 and low_after is None:
                return match.start(2) - 2, f"\\u{high}"
            if len(high_run) % 2 == 0 and low_after is not None:
                return match.start(3), low_after
        elif len(low_run) % 2 == 1:
            return match.start(5) - 2, f"\\u{low}"
    return None
