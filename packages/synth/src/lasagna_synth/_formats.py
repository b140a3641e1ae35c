"""Reading benchmark data: JSONL, CSV, a BEIR folder, an official SQuAD JSON file, and the
rows of other tools: RAGAS, DeepEval, Hugging Face datasets.

The formats are lasagna-rag 0.1.0's ("Your own data"), read the same way so a file gets the
same name, rows and passage ids in both tools; where this reader accepts more, it says so.
`load_data` picks the reader by the path: a BEIR folder is read by `_format_beir`, a
`save_to_disk` folder, `.parquet` or `.arrow` file by `_format_hf`, a `.jsonl`, `.csv` or
`.json` file by `_format_jsonl`, `_format_csv` or `_format_squad` (a `.json` file holding
an array of row objects, as DeepEval saves goldens, is read as JSONL's rows), whose
docstrings say what each format holds. The rows of JSONL, JSON arrays and tables may be
RAGAS's or DeepEval's: their fields are read by meaning (`_format_foreign`), the system's
outputs kept apart (`load_data_and_outputs`), and `notes` say what was read as what.

Rows with contexts are pooled into one corpus: each passage is a document named by
`expected_docs` or `ctx-<12 hex of its sha256>`; a passage several rows share is one
document relevant to each; an unanswerable row's passages join the pool, relevant to none.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, NamedTuple

from lasagna_metrics import parse_json
from lasagna_synth._errors import SynthUsageError
from lasagna_synth._format_beir import _read_beir
from lasagna_synth._format_csv import _parse_csv
from lasagna_synth._format_foreign import DATA_FORMATS, LASAGNA
from lasagna_synth._format_hf import HF_SUFFIXES, is_hf_folder, read_hf_file, read_hf_folder
from lasagna_synth._format_reading import _decode, _Draft, _jsonl_records, json_type
from lasagna_synth._format_records import ParsedRecords, RecordedOutput, parse_records
from lasagna_synth._format_squad import _parse_squad
from lasagna_synth._naming import passage_id
from lasagna_synth._rows import BenchmarkData, BenchmarkRow, DataKind
from lasagna_synth._validate import DataError

DATA_SUFFIXES = (".jsonl", ".csv", ".json", *HF_SUFFIXES)


class DataAndOutputs(NamedTuple):
    """`load_data_and_outputs`'s answer: the data, and the system's outputs per row id."""

    data: BenchmarkData
    outputs: dict[str, RecordedOutput]


def load_data(
    path: str | Path, *, drop_unknown_judgments: bool = False, format: str | None = None
) -> BenchmarkData:
    """Read and validate benchmark data at `path`: a .jsonl, .csv, .json, .parquet or .arrow
    file, a BEIR folder, or a Hugging Face dataset saved to disk.

    `format`: "lasagna", "ragas", "deepeval" or "hf"; by default the fields tell (a RAGAS
    v0.1 file without ground truths has lasagna's own fields, with another meaning: give
    format="ragas"). The system's outputs a file holds are not part of the data: see
    `load_data_and_outputs`.

    `drop_unknown_judgments`: in a BEIR folder, drop judgments that name a document or query
    the folder does not have (recorded in `notes`) instead of refusing the folder.

    Raises:
        DataError: listing every problem found, each naming its file, row and field.
        SynthUsageError: an unknown `format`, or a reader's extra that is not installed.
    """
    return load_data_and_outputs(
        path, drop_unknown_judgments=drop_unknown_judgments, format=format
    ).data


def load_data_and_outputs(
    path: str | Path, *, drop_unknown_judgments: bool = False, format: str | None = None
) -> DataAndOutputs:
    """`load_data`, and what the file records as the system's outputs, per row id: RAGAS's
    `response`/`answer` and `retrieved_contexts`/`contexts`, DeepEval's `actual_output` and
    `retrieval_context` (a `RecordedOutput`: answer, retrieved passage texts). Rows without
    outputs are not in the mapping; lasagna's own formats hold none."""
    if format is not None and format not in DATA_FORMATS:
        raise SynthUsageError(
            f"unknown data format {format!r}: expected one of {', '.join(DATA_FORMATS)}"
        )
    given = Path(path).expanduser()
    if not given.exists():
        raise DataError(
            str(path),
            [
                f"{path}: no such file or folder; give a .jsonl, .csv, SQuAD .json, .parquet "
                "or .arrow file, a BEIR folder (corpus.jsonl, queries.jsonl, qrels/test.tsv) "
                "or a Hugging Face dataset saved to disk"
            ],
        )
    resolved = given.resolve()  # `.` and `folder/` name the folder itself
    suffix = resolved.suffix.lower()
    if resolved.is_dir() and not is_hf_folder(resolved):
        if format not in (None, "lasagna"):
            raise SynthUsageError(
                f"{resolved.name}: a folder is read as BEIR (corpus.jsonl, queries.jsonl, "
                f"qrels/) or as a Hugging Face dataset saved to disk (state.json or "
                f"dataset_dict.json), and this one is not the latter; format={format!r} "
                "does not apply"
            )
        return DataAndOutputs(_read_beir(resolved, drop_unknown_judgments), {})
    if resolved.is_dir() or suffix in HF_SUFFIXES:
        splits, sha256, notes = (
            read_hf_folder(resolved) if resolved.is_dir() else read_hf_file(resolved)
        )
        label = resolved.name
        problems: list[str] = []
        parsed = {
            split: parse_records(
                f"{label} [{split}]" if len(splits) > 1 else label,
                enumerate(rows, start=1),
                problems,
                given=format,
                drop_nulls=True,
            )
            for split, rows in splits.items()
        }
        return _build(resolved, "hf", sha256, parsed, problems, notes)
    if suffix not in DATA_SUFFIXES:
        raise DataError(
            resolved.name,
            [
                f"{resolved.name}: cannot read {suffix or 'a file with no extension'} as "
                "benchmark data; use a .jsonl file (one JSON object per line), a .csv file "
                "with a header, an official SQuAD .json file, a .parquet or .arrow table, a "
                "BEIR folder (corpus.jsonl, queries.jsonl, qrels/test.tsv) or a Hugging "
                "Face dataset saved to disk"
            ],
        )
    raw = resolved.read_bytes()
    label = resolved.name
    problems = []
    text = _decode(label, raw, problems)
    kind: DataKind = {".jsonl": "jsonl", ".csv": "csv"}.get(suffix, "squad")  # type: ignore[assignment]
    parsed_file = ParsedRecords(LASAGNA)
    if text is not None:
        if suffix == ".jsonl":
            # HF's `to_json` writes null for a value a row lacks
            parsed_file = parse_records(
                label,
                _jsonl_records(label, text, problems),
                problems,
                given=format,
                drop_nulls=format == "hf",
            )
        elif suffix == ".json" and text.lstrip().startswith("["):
            kind = "json"
            parsed_file = parse_records(
                label, _json_array(label, text, problems), problems, given=format, unit="item"
            )
        elif format not in (None, "lasagna"):
            what = "CSV" if suffix == ".csv" else "SQuAD JSON"
            raise SynthUsageError(
                f"{label}: format={format!r} reads JSONL, a JSON array of rows, Parquet, "
                f"Arrow or a saved Hugging Face dataset, not {what}"
            )
        elif suffix == ".csv":
            parsed_file.drafts = _parse_csv(label, text, problems)
        else:
            parsed_file.drafts = _parse_squad(label, text, problems)
    return _build(
        resolved, kind, hashlib.sha256(raw).hexdigest(), {"test": parsed_file}, problems, []
    )


def _json_array(label: str, text: str, problems: list[str]) -> list[tuple[int, dict[str, Any]]]:
    """A JSON array of row objects, numbered from 1 (DeepEval's `save_as("json")`)."""
    try:
        items = parse_json(text)
    except json.JSONDecodeError as exc:
        problems.append(f"{label}: not valid JSON ({exc.msg} at line {exc.lineno})")
        return []
    records = []
    for number, item in enumerate(items, start=1):
        if isinstance(item, dict):
            records.append((number, item))
        else:
            problems.append(f"{label} item {number}: must be a JSON object, got {json_type(item)}")
    return records


def _build(
    path: Path,
    kind: DataKind,
    sha256: str,
    parsed: dict[str, ParsedRecords],
    problems: list[str],
    notes: list[str],
) -> DataAndOutputs:
    label = path.name
    if not problems and not any(p.drafts for p in parsed.values()):
        problems.append(f"{label}: the file has no rows")
    for split, found in parsed.items():
        where = f"{label} [{split}]" if len(parsed) > 1 else label
        _check_unique_ids(where, found.drafts, problems)
    splits, corpus = _pool_splits(label, {s: p.drafts for s, p in parsed.items()}, problems)
    documents = _named_corpus(label, path, [d for p in parsed.values() for d in p.drafts], problems)
    if problems:
        raise DataError(label, problems)
    for found in parsed.values():
        notes += [n for n in found.notes if n not in notes]
    outputs: dict[str, RecordedOutput] = {}
    for found in parsed.values():
        outputs.update(found.outputs)
    data = BenchmarkData(
        path=path,
        kind=kind,
        sha256=sha256,
        splits=splits,
        corpus=corpus,
        files=(label,),
        notes=tuple(notes),
        documents=documents,
    )
    return DataAndOutputs(data, outputs)


def _named_corpus(label: str, path: Path, drafts: list[_Draft], problems: list[str]) -> Path | None:
    """The one corpus folder the rows' `corpus` fields name, relative to the file's folder."""
    named = {d.corpus: d.number for d in drafts if d.corpus is not None}
    if not named:
        return None
    if len(named) > 1:
        (first, at), (other, row) = list(named.items())[:2]
        problems.append(
            f'{label} row {row}: field "corpus" is {other!r}, and row {at}\'s is {first!r}; '
            "the rows of one file share one corpus"
        )
        return None
    folder = Path(next(iter(named))).expanduser()
    return (folder if folder.is_absolute() else path.parent / folder).resolve()


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


def _pool_splits(
    label: str, drafts: dict[str, list[_Draft]], problems: list[str]
) -> tuple[dict[str, list[BenchmarkRow]], dict[str, str]]:
    """Every row's passages, of every split, as one corpus (as a BEIR folder has one), and
    each answerable row's own as its relevant set.

    Pooled over the whole file, not a sample, so `-n` changes how many questions are asked,
    never how many passages there are to search.
    """
    corpus: dict[str, str] = {}
    defined_by: dict[str, int] = {}
    splits: dict[str, list[BenchmarkRow]] = {}
    for split, split_drafts in drafts.items():
        splits[split] = _pool(label, split_drafts, problems, corpus, defined_by)
    return splits, corpus


def _pool(
    label: str,
    drafts: list[_Draft],
    problems: list[str],
    corpus: dict[str, str],
    defined_by: dict[str, int],
) -> list[BenchmarkRow]:
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
                evidence=tuple(draft.evidence),
            )
        )
    return rows
