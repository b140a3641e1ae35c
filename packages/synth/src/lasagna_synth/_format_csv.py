"""Reading a CSV benchmark file: a header row, then one row per question.

The columns: `question` (required), `answer`, `contexts`, `id`; several passages in one
cell separated by `|||`. CSV cannot mark a question unanswerable.
"""

from __future__ import annotations

import csv
import io

from lasagna_synth._format_foreign import CSV_FORMAT, detect, field_hint
from lasagna_synth._format_reading import _Draft

CSV_CONTEXT_SEPARATOR = "|||"
"""What separates several passages in one CSV `contexts` cell."""
CSV_COLUMNS = tuple(CSV_FORMAT.fields)


def _parse_csv(label: str, text: str, problems: list[str]) -> list[_Draft]:
    try:
        records = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        problems.append(f"{label}: not readable as CSV ({exc})")
        return []
    if not records:
        return []
    header = [cell.strip() for cell in records[0]]
    foreign = detect(header, False)
    if foreign:
        problems.append(
            f"{label} row 1: the columns are those of {foreign[0].label} "
            f"({', '.join(sorted(foreign[0].markers & set(header)))}), which lasagna reads "
            "from JSONL, Parquet or a Hugging Face dataset, not from CSV (their lists of "
            "passages do not survive a CSV cell): export the rows as JSONL"
        )
        return []
    if "question" not in header:
        shown = ", ".join(f'"{h}"' for h in header) or "nothing"
        problems.append(
            f"{label} row 1: the first row must be a header naming the columns "
            f"({', '.join(CSV_COLUMNS)}); it has {shown}"
        )
        return []
    for column in header:
        if column in CSV_COLUMNS:
            continue
        if column.lower() in ("unanswerable", "metadata"):
            problems.append(
                f'{label} row 1: unknown column "{column}"; CSV cannot mark a question '
                'unanswerable: use a JSONL file with "metadata": {"unanswerable": true}'
            )
        else:
            hint = field_hint(column, CSV_FORMAT)
            problems.append(
                f'{label} row 1: unknown column "{column}"{hint}; the columns are '
                f"{', '.join(CSV_COLUMNS)}"
            )
    for column in sorted({c for c in header if header.count(c) > 1}):
        problems.append(f'{label} row 1: column "{column}" is named twice')
    if problems:
        return []

    drafts: list[_Draft] = []
    # Numbered as a spreadsheet numbers them: the header is row 1.
    for number, cells in enumerate(records[1:], start=2):
        if not any(cell.strip() for cell in cells):
            continue
        where = f"{label} row {number}"
        if len(cells) != len(header):
            cells_found = f"{len(cells)} cell{'s' if len(cells) != 1 else ''}"
            problems.append(f"{where}: has {cells_found}, the header has {len(header)}")
            continue
        record = dict(zip(header, cells, strict=True))
        question = record["question"].strip()
        if not question:
            problems.append(f'{where}: column "question" is empty')
            continue
        contexts: list[str] = []
        if record.get("contexts", "").strip():
            contexts = [c.strip() for c in record["contexts"].split(CSV_CONTEXT_SEPARATOR)]
            if not all(contexts):
                problems.append(
                    f'{where}: column "contexts" has an empty passage between '
                    f'"{CSV_CONTEXT_SEPARATOR}" separators'
                )
                continue
        answer = record.get("answer", "").strip()
        drafts.append(
            _Draft(
                number=number,
                id=record.get("id", "").strip() or f"row{number}",
                question=question,
                answers=[answer] if answer else [],
                contexts=contexts,
            )
        )
    return drafts
