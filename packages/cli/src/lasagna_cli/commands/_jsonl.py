"""JSONL input of the judge commands: one object per line, each bad line one message."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from lasagna_cli.commands._errors import USAGE_ERROR, CliError
from lasagna_metrics import parse_json


def json_lines(path: Path, what: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line; a bad line is a one-line error."""
    if path.is_dir():
        raise CliError(f"{what} {path} is a folder; give the path to a .jsonl file", USAGE_ERROR)
    if not path.is_file():
        raise CliError(f"{what} not found: {path}; give the path to a .jsonl file", USAGE_ERROR)
    try:
        # utf-8-sig: a byte-order mark some editors write is not part of the first row
        with path.open(encoding="utf-8-sig") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    value = parse_json(line)
                except json.JSONDecodeError as exc:
                    raise CliError(
                        f"{path}:{number}: expected one JSON object per line, found text that "
                        f"is not JSON ({exc.msg} at column {exc.colno})"
                    ) from None
                if not isinstance(value, dict):
                    raise CliError(
                        f"{path}:{number}: expected a JSON object, found {type(value).__name__}"
                    )
                yield number, value
    except UnicodeDecodeError as exc:
        raise CliError(
            f"{path}: expected UTF-8 text, found undecodable bytes ({exc.reason})"
        ) from None


def reference_text(value: object) -> str | None:
    """A reference as text: strings as they are, numbers (1577, 8.7) as written."""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return json.dumps(value)
    return None


def did_you_mean_field(name: str, data: Mapping[str, Any]) -> str:
    """ " (found 'answer': a typo?)" when the row has a near miss of the field `name`."""
    import difflib

    close = difflib.get_close_matches(name, [str(k) for k in data], n=1, cutoff=0.6)
    return f" (found {close[0]!r}: a typo?)" if close else ""
