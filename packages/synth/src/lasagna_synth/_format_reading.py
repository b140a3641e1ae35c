"""What every benchmark data reader shares: the row as read, before its passages are pooled
(`_Draft`), UTF-8 decoding, JSON type names for messages, and the records of a JSONL file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from lasagna_metrics import parse_json
from lasagna_synth._evidence import EvidenceSpan


@dataclass
class _Draft:
    """A row as read, before its passages are pooled into document ids."""

    number: int
    id: str
    question: str
    answers: list[str] = field(default_factory=list)
    contexts: list[str] = field(default_factory=list)
    doc_names: list[str] = field(default_factory=list)
    unanswerable: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)
    evidence: list[EvidenceSpan] = field(default_factory=list)
    corpus: str | None = None


def _decode(label: str, raw: bytes, problems: list[str]) -> str | None:
    try:
        # utf-8-sig: a spreadsheet's CSV export often starts with a byte-order mark.
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        problems.append(f"{label}: not UTF-8 text (byte {exc.start}); save it as UTF-8")
        return None


def json_type(value: object) -> str:
    """The JSON name of a value's type, for messages about JSON data."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _jsonl_records(
    label: str, text: str, problems: list[str]
) -> Iterator[tuple[int, dict[str, Any]]]:
    # Split on "\n" only: str.splitlines() also breaks at U+2028, U+0085 and other
    # characters that may stand inside a JSON string (MS MARCO's passages have them).
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = parse_json(line)
        except json.JSONDecodeError as exc:
            problems.append(
                f"{label} row {number}: not valid JSON ({exc.msg} at column {exc.colno})"
            )
            continue
        if not isinstance(record, dict):
            problems.append(f"{label} row {number}: must be a JSON object, got {json_type(record)}")
            continue
        yield number, record
