"""`stats find REGEX`: the results whose response matches, as kag's `stats find` finds them.

kag walks the whole tree under `--results`, every depth, and counts each file whose name
starts with `--prefix` and ends in `.json` as a result file inspected; a file it cannot
read, or an `{"error"}` file, holds no response; the others match when the regular
expression finds a match anywhere in the trimmed response. JSON: `{matches, total, paths}`.
A run folder of `benchmark run` is searched through its task records instead.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from lasagna_cli.engine._data import Question
from lasagna_cli.engine.kag._kag_metrics import RUST_WHITESPACE
from lasagna_cli.engine.kag._result_files import Damaged, Result, read_result
from lasagna_synth import TEMP_PREFIX


@dataclass
class Found:
    matches: list[Result] = field(default_factory=list)
    total: int = 0
    damaged: list[Damaged] = field(default_factory=list)

    def as_json(self) -> dict[str, object]:
        return {
            "matches": len(self.matches),
            "total": self.total,
            "paths": [str(r.path) for r in self.matches],
        }


def _walk(folder: Path) -> Iterator[Path]:
    with os.scandir(folder) as scanned:
        entries = sorted(scanned, key=lambda e: e.name)
    for entry in entries:
        path = folder / entry.name
        if entry.is_dir(follow_symlinks=False):
            yield from _walk(path)
        else:
            yield path


def find(results: Path, prefix: str, pattern: re.Pattern[str]) -> Found:
    """The matching ok results under `results`, in path order, and the count inspected."""
    found = Found()
    for path in _walk(results):
        name = path.name
        if not name.endswith(".json") or not name.startswith(prefix):
            continue
        if name.startswith(TEMP_PREFIX):  # lasagna's writer's, mid-rename
            continue
        found.total += 1
        parts = path.relative_to(results).parts
        question = Question(
            id=parts[-2] if len(parts) > 1 else "",
            text="",
            metadata={"dataset": parts[-3] if len(parts) > 2 else "", "question": ""},
        )
        result = read_result(path, question, name[len(prefix) : -len(".json")])
        if isinstance(result, str):
            found.damaged.append((path, result))
        elif result.text is not None and pattern.search(result.text.strip(RUST_WHITESPACE)):
            found.matches.append(result)
    return found


def find_in(results: list[Result], pattern: re.Pattern[str]) -> Found:
    """The same over answers already read (a run folder's task records)."""
    found = Found(total=len(results))
    found.matches = [
        r for r in results if r.text is not None and pattern.search(r.text.strip(RUST_WHITESPACE))
    ]
    return found
