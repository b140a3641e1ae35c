"""Reading benchmark data: JSONL, CSV, a BEIR folder, or an official SQuAD JSON file.

The formats are lasagna-rag 0.1.0's ("Your own data"), read the same way so a file gets the
same name, rows and passage ids in both tools; where this reader accepts more, it says so.
`load_data` picks the reader by the path: a folder is read by `_format_beir`, a `.jsonl`,
`.csv` or `.json` file by `_format_jsonl`, `_format_csv` or `_format_squad`, whose
docstrings say what each format holds.

Rows with contexts are pooled into one corpus: each passage is a document named by
`expected_docs` or `ctx-<12 hex of its sha256>`; a passage several rows share is one
document relevant to each; an unanswerable row's passages join the pool, relevant to none.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from lasagna_synth._format_beir import _read_beir
from lasagna_synth._format_csv import _parse_csv
from lasagna_synth._format_jsonl import _parse_jsonl
from lasagna_synth._format_reading import _decode, _Draft
from lasagna_synth._format_squad import _parse_squad
from lasagna_synth._naming import passage_id
from lasagna_synth._rows import BenchmarkData, BenchmarkRow
from lasagna_synth._validate import DataError

DATA_SUFFIXES = (".jsonl", ".csv", ".json")


def load_data(path: str | Path, *, drop_unknown_judgments: bool = False) -> BenchmarkData:
    """Read and validate benchmark data at `path`: a .jsonl, .csv or .json file, or a BEIR
    folder.

    `drop_unknown_judgments`: in a BEIR folder, drop judgments that name a document or query
    the folder does not have (recorded in `notes`) instead of refusing the folder.

    Raises:
        DataError: listing every problem found, each naming its file, row and field.
    """
    given = Path(path).expanduser()
    if not given.exists():
        raise DataError(
            str(path),
            [
                f"{path}: no such file or folder; give a .jsonl, .csv or SQuAD .json file, "
                "or a BEIR folder (corpus.jsonl, queries.jsonl, qrels/test.tsv)"
            ],
        )
    resolved = given.resolve()  # `.` and `folder/` name the folder itself
    if resolved.is_dir():
        return _read_beir(resolved, drop_unknown_judgments)
    suffix = resolved.suffix.lower()
    if suffix not in DATA_SUFFIXES:
        raise DataError(
            resolved.name,
            [
                f"{resolved.name}: cannot read {suffix or 'a file with no extension'} as "
                "benchmark data; use a .jsonl file (one JSON object per line), a .csv file "
                "with a header, an official SQuAD .json file, or a BEIR folder "
                "(corpus.jsonl, queries.jsonl, qrels/test.tsv)"
            ],
        )
    raw = resolved.read_bytes()
    label = resolved.name
    problems: list[str] = []
    text = _decode(label, raw, problems)
    drafts: list[_Draft] = []
    if text is not None:
        if suffix == ".jsonl":
            drafts = _parse_jsonl(label, text, problems)
        elif suffix == ".csv":
            drafts = _parse_csv(label, text, problems)
        else:
            drafts = _parse_squad(label, text, problems)
    if not problems and not drafts:
        problems.append(f"{label}: the file has no rows")
    _check_unique_ids(label, drafts, problems)
    rows, corpus = _pool(label, drafts, problems)
    if problems:
        raise DataError(label, problems)
    return BenchmarkData(
        path=resolved,
        kind="squad" if suffix == ".json" else "jsonl" if suffix == ".jsonl" else "csv",
        sha256=hashlib.sha256(raw).hexdigest(),
        splits={"test": rows},
        corpus=corpus,
        files=(label,),
    )


# ------------------------------------------------------------------------------- pooling


def _check_unique_ids(label: str, drafts: list[_Draft], problems: list[str]) -> None:
    first: dict[str, int] = {}
    for draft in drafts:
        if draft.id in first:
            problems.append(
                f'{label} row {draft.number}: id "{draft.id}" is also used by row {first[draft.id]}'
            )
        else:
            first[draft.id] = draft.number


def _pool(
    label: str, drafts: list[_Draft], problems: list[str]
) -> tuple[list[BenchmarkRow], dict[str, str]]:
    """Every row's passages as one corpus, and each answerable row's own as its relevant set.

    Pooled over the whole file, not a sample, so `-n` changes how many questions are asked,
    never how many passages there are to search.
    """
    corpus: dict[str, str] = {}
    defined_by: dict[str, int] = {}
    rows: list[BenchmarkRow] = []
    for draft in drafts:
        doc_ids = draft.doc_names or [passage_id(text) for text in draft.contexts]
        for doc_id, text in zip(doc_ids, draft.contexts, strict=True):
            if doc_id in corpus and corpus[doc_id] != text:
                first = defined_by[doc_id]
                problems.append(
                    f'{label} row {draft.number}: field "expected_docs" names document '
                    f'"{doc_id}", whose text in "contexts" differs from row {first}\'s; one '
                    "name, one text"
                )
                continue
            corpus.setdefault(doc_id, text)
            defined_by.setdefault(doc_id, draft.number)
        rows.append(
            BenchmarkRow(
                id=draft.id,
                question=draft.question,
                answers=tuple(draft.answers),
                contexts=tuple(draft.contexts),
                judgments={} if draft.unanswerable else dict.fromkeys(doc_ids, 1),
                unanswerable=draft.unanswerable,
                metadata=draft.metadata,
            )
        )
    return rows, corpus
