"""Finding and reading a benchmark's raw files, with errors that say which file and where."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lasagna_cli.engine._errors import EngineError
from lasagna_cli.engine.benchmarks._model import BenchmarkFileError
from lasagna_metrics import parse_json
from lasagna_synth import write_bytes_atomic as write_bytes_atomic  # for the adapters


def find_file(
    source: Path,
    *,
    benchmark: str,
    split: str,
    names: Sequence[str],
    patterns: Sequence[str] = (),
    files_help: str,
) -> Path:
    """The split's file: `source` itself when it is a file, else the first of `names` in the
    folder, else the last match of `patterns` in sorted order (the highest version)."""
    if source.is_file():
        return source
    if not source.is_dir():
        raise BenchmarkFileError(
            f"{benchmark}: --data-dir {source} does not exist; expected a folder holding "
            f"{names[0]} (or that file itself). {files_help}"
        )
    for name in names:
        candidate = source / name
        if candidate.is_file():
            return candidate
    for pattern in patterns:
        matches = sorted(p for p in source.glob(pattern) if p.is_file())
        if matches:
            return matches[-1]
    raise BenchmarkFileError(
        f"{benchmark}: no {names[0]} for split {split!r} in {source}; found "
        f"{_listing(source)}. {files_help}"
    )


def _listing(folder: Path) -> str:
    entries = sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))
    if not entries:
        return "an empty folder"
    shown = ", ".join(entries[:6])
    return shown + (f" and {len(entries) - 6} more" if len(entries) > 6 else "")


def read_json(path: Path, *, benchmark: str) -> Any:
    try:
        with path.open("rb") as handle:
            return parse_json(handle.read())
    except ValueError as exc:
        raise EngineError(
            f"{benchmark}: {path} is not valid JSON ({exc}); re-download the file"
        ) from None


def read_jsonl(path: Path, *, benchmark: str) -> list[tuple[int, str, Any]]:
    """(line number, raw line, parsed object) for every non-blank line."""
    rows: list[tuple[int, str, Any]] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                rows.append((number, line.rstrip("\n"), parse_json(line)))
            except ValueError as exc:
                raise EngineError(
                    f"{benchmark}: {path} line {number} is not a JSON object ({exc}); "
                    "re-download the file"
                ) from None
    return rows


def decode_text(data: bytes, fallback: str = "cp1252") -> str:
    """UTF-8 (a BOM dropped) when the bytes are UTF-8, else the given legacy encoding; line
    ends normalised to "\\n" (old Mac files end lines with a bare CR)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode(fallback)
    return text.replace("\r\n", "\n").replace("\r", "\n")


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise EngineError(message)


def expect_lists(record: Any, keys: Sequence[str], where: str) -> None:
    """Each of `keys` in `record` (an object) is a list or absent (null): the readers then
    iterate them safely, and a malformed file is one line naming the place."""
    expect(isinstance(record, dict), f"{where} should be an object, found {type(record).__name__}")
    for key in keys:
        value = record.get(key)
        expect(
            value is None or isinstance(value, list),
            f"{where}: {key} should be a list, found {type(value).__name__}; re-download the file",
        )


def write_text_atomic(path: Path, text: str) -> None:
    write_bytes_atomic(path, text.encode("utf-8"))


def dump_json(obj: Any) -> str:
    """Subsets keep the raw files' shape; indentation keeps them readable and diffable."""
    return json.dumps(obj, ensure_ascii=False, indent=2) + "\n"
