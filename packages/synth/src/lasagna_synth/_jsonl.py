"""Writing rows as JSON Lines, atomically: a temporary file, fsync, then a rename."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from lasagna_synth._atomic import atomic_writer


def write_jsonl(rows: Iterable[Mapping[str, Any]], path: str | os.PathLike[str]) -> Path:
    """Write one JSON object per line (UTF-8, keys in row order); readers never see a
    half-written file. Returns the path written."""
    target = Path(path)
    with atomic_writer(target) as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False).encode("utf-8") + b"\n")
    return target
