"""lasagna's indented JSON, with long lists one item a line.

`json.dumps(indent=1)` is what a person opens best, but with an indent json's C encoder does
not run, and the pure-Python one is slow on a large run's results.json. Here the layout is
the same as `json.dumps(obj, indent=1, sort_keys=True, ensure_ascii=False)`, byte for byte,
except that a list of more than `LONG_LIST` items puts each item on one line, encoded by the
C encoder: a file of per-question rows is then one question a line (`grep` finds one),
smaller and written in a fraction of the time.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from operator import itemgetter
from typing import Any

LONG_LIST = 50
"""Items above which a list is written one compact item a line."""

_compact = json.JSONEncoder(
    ensure_ascii=False, sort_keys=True, separators=(", ", ": ")
).encode  # the C encoder; `indent=1`'s separators inside a line, as json.dumps(indent=None)


def dumps_indented(obj: Any) -> str:
    """`obj` as JSON text laid out as the module docstring says."""
    return _layout(obj, 0)


def _layout(obj: Any, level: int) -> str:
    if isinstance(obj, dict) and obj:
        inner = "\n" + " " * (level + 1)
        items = (
            f"{_compact(_key(key))}: {_layout(value, level + 1)}"
            for key, value in sorted(obj.items(), key=itemgetter(0))
        )
        return "{" + inner + ("," + inner).join(items) + "\n" + " " * level + "}"
    if isinstance(obj, (list, tuple)) and obj:
        inner = "\n" + " " * (level + 1)
        rows: Iterable[str]
        if len(obj) > LONG_LIST:
            rows = map(_compact, obj)
        else:
            rows = (_layout(item, level + 1) for item in obj)
        return "[" + inner + ("," + inner).join(rows) + "\n" + " " * level + "]"
    return _compact(obj)


def _key(key: Any) -> str:
    """A key as json writes it: numbers, booleans and None as their JSON text."""
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, (int, float)):  # bool is an int
        return _compact(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")
