"""`loads`: `lasagna_metrics.parse_json`'s values and errors, faster on the files a
run writes (results.json, the task records).

orjson decodes what it accepts to the same values as `json.loads`, and refuses more: NaN and
Infinity, numbers out of a double's range, lone surrogates, a byte-order mark, nesting
over 1,024 levels. What it refuses goes to `parse_json`, which reads it or raises as
before. The one difference it does not refuse: an integer past 64 bits comes back as a
float, so a document with a number of 19 digits or more is left to `parse_json` whole.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from lasagna_metrics import parse_json

# Each byte as its part in a number: "0" a digit, "s" what may come just before a number's
# first digit ([ : , whitespace, minus), "x" the rest (a fraction's digits follow a dot).
# bytes.translate and `in` scan a large file faster than a regular expression does.
_SHAPE = bytes(48 if chr(c).isdigit() and c < 128 else 115 if c in b"[:, \t\n\r-" else 120
               for c in range(256))  # fmt: skip
_DIGITS = b"0" * 19  # 2^63 has 19 digits; a string holding such digits only costs time
_LONG = b"s" + _DIGITS


def _long_integer(data: bytes) -> bool:
    shape = data.translate(_SHAPE)
    return _LONG in shape or shape.startswith(_DIGITS)


def loads(data: bytes, *, text: bool = False) -> Any:
    """`parse_json(data)`; with `text`, `parse_json(data.decode("utf-8"))` (a file read as
    UTF-8 text, whose byte-order mark is refused)."""
    return _decode(data, orjson_first=not _long_integer(data), text=text)


def loads_lines(data: bytes) -> Iterator[Any]:
    """`loads` of each line of `data` (a batch of task records), a line that is not JSON
    left out. The scan for long integers is made once for the whole buffer, not once a
    line: a report reads 40,000 lines."""
    orjson_first = not _long_integer(data)
    for line in data.splitlines():
        try:
            yield _decode(line, orjson_first=orjson_first)
        except ValueError:
            continue


def _decode(data: bytes, *, orjson_first: bool, text: bool = False) -> Any:
    if orjson_first:
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
    return parse_json(data.decode("utf-8") if text else data)
