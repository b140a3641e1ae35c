"""kag's result files as `kag stats` finds and reads them:
`<results>/<dataset>/<question>/<prefix><setup>.json`, and what is wrong with a damaged one."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lasagna_cli.engine._data import Question
from lasagna_cli.engine.kag._datasets import Datasets
from lasagna_cli.engine.kag._store import decode_result
from lasagna_metrics import parse_json

_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")


def is_kag_name(name: str) -> bool:
    """kag's `ComponentName`: non-empty, lowercase ASCII letters, digits and hyphens."""
    return bool(name) and _NAME_CHARS.issuperset(name)


def setup_of(file_name: str, prefix: str) -> str | None:
    """The setup a result file's name gives (`<prefix><setup>.json`), as kag reads it."""
    if not file_name.endswith(".json") or not file_name.startswith(prefix):
        return None
    setup = file_name[len(prefix) : -len(".json")]
    return setup if is_kag_name(setup) else None


@dataclass(frozen=True, slots=True)
class Recorded:
    """A run folder's MCQ grading as its task record keeps it (it holds no answer key)."""

    keyed: bool
    """The question has an answer (else: kag's "skipped")."""
    choice: str | None
    correct: bool | None


@dataclass(frozen=True, slots=True)
class Result:
    question: Question
    setup: str
    path: Path
    text: str | None
    """The answer, None for an error."""
    error: str | None
    stats: dict[str, Any]
    recorded: Recorded | None = None


Damaged = tuple[Path, str]
"""A file named as a result that is none, and what is wrong with it."""


def json_problem(data: bytes) -> tuple[Any, str | None]:
    """The JSON value of a file's bytes, or what is wrong with them (one phrase)."""
    if not data.strip():
        return None, "empty"
    try:
        return parse_json(data), None
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 (byte {exc.start})"
    except json.JSONDecodeError as exc:
        end = len(data.decode("utf-8", "replace").rstrip())
        # The text ran out: at the end, or inside a string (json names where it began).
        if exc.pos >= end or exc.msg.startswith("Unterminated string"):
            return None, f"truncated (its JSON stops mid-value after {len(data)} bytes)"
        return None, f"not JSON ({exc.msg} at character {exc.pos})"


def read_result(path: Path, question: Question, setup: str) -> Result | str:
    """The result in a file, or what is wrong with the file."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        return f"unreadable ({exc.strerror or exc})"
    value, problem = json_problem(data)
    if problem is not None:
        return problem
    record = decode_result(value)
    if record is None:
        return 'not a result (neither {"ok": {"result": ...}} nor {"error": ...})'
    if record.get("error") is not None:
        return Result(question, setup, path, None, str(record["error"]), {})
    text = str(record["generation"]["prediction"])
    return Result(question, setup, path, text, None, record.get("stats") or {})


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir() and not path.is_symlink()  # kag's file_type(): no symlinks
    except OSError:
        return False


def iter_results(
    datasets: Datasets, results: Path, prefix: str, damaged: list[Damaged] | None = None
) -> Iterator[Result]:
    """Every result file of the datasets' questions, in dataset, question, file order, as
    kag finds them: `<results>/<dataset>/<question>/<prefix><setup>.json`, regular files,
    `<setup>` a component name (anything else is not a result file and is passed over);
    the damaged ones go to `damaged`."""
    for dataset, questions in datasets.items():
        if not _is_dir(results / dataset):
            continue
        for question in questions.values():
            folder = results / dataset / question.id
            if not _is_dir(folder):
                continue
            with os.scandir(folder) as entries:
                files = sorted(
                    (e.name, setup)
                    for e in entries
                    if e.is_file(follow_symlinks=False)
                    and (setup := setup_of(e.name, prefix)) is not None
                )
            for name, setup in files:
                found = read_result(folder / name, question, setup)
                if isinstance(found, Result):
                    yield found
                elif damaged is not None:
                    damaged.append((folder / name, found))


def dataset_folders(results: Path) -> int:
    """kag's "Datasets": the folders under the results root whose name is a component
    name, whatever they hold."""
    try:
        with os.scandir(results) as entries:
            return sum(
                1 for e in entries if e.is_dir(follow_symlinks=False) and is_kag_name(e.name)
            )
    except OSError:
        return 0
