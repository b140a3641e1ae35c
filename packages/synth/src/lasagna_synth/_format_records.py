"""Records (JSON objects, or the rows of a Hugging Face table) to rows, in any field format.

The file's field format is detected from the fields its records use, or given
(`_format_foreign.choose`). Each record's fields are read by their meaning in that format:
the question, reference answers, gold passages and metadata make the row (through the same
checks as lasagna's own JSONL rows, with the messages naming the file's own fields); the
system's answer and retrieved passages are kept apart as the row's `RecordedOutput`. The
notes say what was read as what, for `validate-data`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from lasagna_synth._format_foreign import (
    LASAGNA,
    MEANINGS,
    SHORT,
    SQUAD_COLUMNS,
    FieldFormat,
    choose,
    field_hint,
    format_option,
    public_name,
)
from lasagna_synth._format_jsonl import _draft_from_record
from lasagna_synth._format_reading import _Draft, json_type


@dataclass(frozen=True, slots=True)
class RecordedOutput:
    """What a system produced for one row, as the data file records it: its answer and
    its retrieved passages (texts, best first); None where the file has none."""

    answer: str | None = None
    retrieved: tuple[str, ...] | None = None


@dataclass
class ParsedRecords:
    fmt: FieldFormat
    drafts: list[_Draft] = field(default_factory=list)
    outputs: dict[str, RecordedOutput] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def parse_records(
    label: str,
    records: Iterable[tuple[int, dict[str, Any]]],
    problems: list[str],
    *,
    given: str | None,
    drop_nulls: bool = False,
    unit: str = "row",
) -> ParsedRecords:
    """Every record as a draft row (bad ones add problems), with the outputs it holds.

    `drop_nulls`: a null value is an absent field (a table has every column in every row).
    """
    # The format is told by every record's fields, so the records are read first; each
    # record's problems then go where a reader going line by line would have put them.
    listed: list[tuple[int, dict[str, Any], int]] = []
    for number, record in records:
        listed.append((number, record, len(problems)))
    keys = {key for _, record, _ in listed for key in record}
    squad_answers = any(isinstance(r.get("answers"), dict) for _, r, _ in listed)
    chosen = choose(given, keys, squad_answers)
    if isinstance(chosen, str):
        problems.append(f"{label}: {chosen}")
        return ParsedRecords(LASAGNA)
    if chosen is not LASAGNA:
        drop_nulls = True  # other tools' exports write null for a field a row lacks
    parsed = ParsedRecords(chosen)
    found: list[tuple[int, list[str]]] = []
    for number, record, mark in listed:
        if drop_nulls:
            record = _without_nulls(record)
        where = f"{label} {unit} {number}"
        own: list[str] = []
        if chosen is LASAGNA:
            draft = _draft_from_record(record, where, number, own)
            output = None
        else:
            draft, output = _foreign_row(record, chosen, where, number, own)
        found.append((mark, own))
        if draft is None:
            continue
        parsed.drafts.append(draft)
        if output is not None:
            parsed.outputs[draft.id] = output
    for mark, own in reversed(found):
        problems[mark:mark] = own
    if chosen is not LASAGNA:
        parsed.notes = _notes(chosen, keys, len(parsed.outputs), given)
    return parsed


def _without_nulls(record: dict[str, Any]) -> dict[str, Any]:
    """A table's row without its nulls: a column, or a key of a struct column (metadata), that
    this row has no value for."""
    return {
        k: {kk: vv for kk, vv in v.items() if vv is not None} if isinstance(v, dict) else v
        for k, v in record.items()
        if v is not None
    }


def _foreign_row(
    record: dict[str, Any], fmt: FieldFormat, where: str, number: int, problems: list[str]
) -> tuple[_Draft | None, RecordedOutput | None]:
    before = len(problems)
    mapped: dict[str, Any] = {}
    # lasagna's field -> the file's, for the messages
    renamed = {"question": fmt.with_role("question")[0], "metadata": fmt.with_role("metadata")[0]}
    references: list[tuple[str, Any]] = []
    extra: dict[str, Any] = {}
    answer: str | None = None
    retrieved: tuple[str, ...] | None = None
    metadata_field = fmt.with_role("metadata")[0]
    for key, value in record.items():
        role = fmt.fields.get(key)
        if role is None:
            problems.append(
                f'{where}: unknown field "{key}"{field_hint(key, fmt)}; put fields of your '
                f'own under "{metadata_field}"'
            )
        elif role in ("id", "question", "gold", "metadata"):
            target = {"gold": "contexts"}.get(role, role)
            mapped[target] = value
            renamed[target] = key
        elif role == "reference":
            references.append((key, value))
        elif role == "extra_metadata":
            extra[key] = value
        elif role == "answer_out":
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                problems.append(f'{where}: field "{key}" must be a string, got {json_type(value)}')
            else:
                answer = value if isinstance(value, str) else str(value)
        elif role == "retrieved_out":
            retrieved = _passages(value, key, where, problems)
    if references:
        key = references[-1][0]
        renamed["answers"] = key
        if fmt is SQUAD_COLUMNS:
            texts = _squad_texts(references[0][1], key, where, problems)
            mapped["answers"] = texts
            if texts == []:  # squad_v2: no answer text is an unanswerable question
                meta = mapped.get("metadata", {})
                if isinstance(meta, dict):
                    mapped["metadata"] = {**meta, "unanswerable": True}
        else:
            mapped["answers"] = _merge_references(references)
    if extra:
        meta = mapped.get("metadata", {})
        if isinstance(meta, dict):
            mapped["metadata"] = {**extra, **meta}
    start = len(problems)
    draft = _draft_from_record(mapped, where, number, problems)
    for i in range(start, len(problems)):
        problems[i] = _rename(problems[i], renamed)
    if draft is None or len(problems) > before:
        return None, None
    output = None if answer is None and retrieved is None else RecordedOutput(answer, retrieved)
    return draft, output


def _rename(problem: str, renamed: dict[str, str]) -> str:
    for ours, theirs in renamed.items():
        if ours == theirs:
            continue
        problem = problem.replace(f'"{ours}"', f'"{theirs}"').replace(f'"{ours}.', f'"{theirs}.')
    return problem


def _merge_references(references: list[tuple[str, Any]]) -> Any:
    """One field's value as it is; RAGAS v0.1's ground_truth and ground_truths together as
    one list, in that order, without repeats."""
    if len(references) == 1:
        return references[0][1]
    merged: list[Any] = []
    for _, value in references:
        for item in value if isinstance(value, list) else [value]:
            if item not in merged:
                merged.append(item)
    return merged


def _squad_texts(value: Any, key: str, where: str, problems: list[str]) -> list[Any]:
    texts = value.get("text") if isinstance(value, dict) else None
    if not isinstance(texts, list):
        problems.append(
            f'{where}: field "{key}" must be {{"text": [...], "answer_start": [...]}}, got '
            f"{json_type(value)}"
        )
        return []
    return list(dict.fromkeys(t.strip() if isinstance(t, str) else t for t in texts))


def _passages(value: Any, key: str, where: str, problems: list[str]) -> tuple[str, ...] | None:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        problems.append(
            f'{where}: field "{key}" must be a list of strings (passage texts, best first), '
            f"got {json_type(value)}"
        )
        return None
    return tuple(items)


def _notes(fmt: FieldFormat, keys: set[str], with_outputs: int, given: str | None) -> list[str]:
    how = (
        "detected from its fields"
        if given in (None, "hf")
        else f"as asked with {format_option(public_name(fmt))}"
    )
    read = [
        f"{MEANINGS[role]} <- {key}"
        for key, role in fmt.fields.items()
        if key in keys
        and role in ("question", "reference", "gold", "metadata", "id")
        and not (key == role and role in ("id", "metadata"))
    ]
    notes = [f"read as {fmt.label} ({how}): " + "; ".join(read)]
    outputs = [
        f"{key} ({SHORT[role]})"
        for key, role in fmt.fields.items()
        if key in keys and role in ("answer_out", "retrieved_out")
    ]
    if outputs:
        notes.append(
            "the system's outputs, kept apart and never read as references or gold passages: "
            + ", ".join(outputs)
            + f", in {with_outputs:,} rows; score them as predictions"
        )
    kept = [key for key, role in fmt.fields.items() if key in keys and role == "extra_metadata"]
    if kept:
        notes.append("kept in metadata: " + ", ".join(kept))
    ignored = [key for key, role in fmt.fields.items() if key in keys and role == "ignored"]
    if ignored:
        notes.append("not read: " + ", ".join(ignored))
    return notes
