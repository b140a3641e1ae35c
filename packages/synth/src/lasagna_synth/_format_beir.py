"""Reading a BEIR folder as benchmark data, laid out as BEIR's own downloads are.

corpus.jsonl, queries.jsonl and qrels/<split>.tsv (three tab-separated columns, the header
line optional). A score above 0 is relevant and graded scores feed nDCG; only queries with
a relevant document are asked. Judgments naming a document or query the folder does not
have are an error (or, on request, dropped and counted).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lasagna_synth._errors import SynthUsageError
from lasagna_synth._format_reading import _decode, _jsonl_records
from lasagna_synth._naming import folder_sha256
from lasagna_synth._rows import BenchmarkData, BenchmarkRow
from lasagna_synth._validate import DataError, examples

BEIR_FILES = ("corpus.jsonl", "queries.jsonl")


def _beir_id(record: dict[str, Any], where: str, problems: list[str]) -> str | None:
    value = record.get("_id")
    if value is None:
        problems.append(f'{where}: field "_id" is missing')
        return None
    if isinstance(value, bool) or not isinstance(value, str | int) or not str(value).strip():
        problems.append(f'{where}: field "_id" must be a non-empty string or number')
        return None
    return str(value).strip()


def _read_beir(folder: Path, drop_unknown: bool) -> BenchmarkData:
    """corpus.jsonl, queries.jsonl and qrels/<split>.tsv, as BEIR's own downloads lay out."""
    label = folder.name
    qrels_dir = folder / "qrels"
    qrels_files = sorted(qrels_dir.glob("*.tsv")) if qrels_dir.is_dir() else []
    missing = [name for name in BEIR_FILES if not (folder / name).is_file()]
    missing += [] if qrels_files else ["qrels/test.tsv"]
    if missing:
        # The folder is not a BEIR folder (a wrong path: usage), as `info beir --data-dir`
        # and `run beir --data-dir` say of it.
        raise SynthUsageError(
            f"{folder}: a BEIR folder needs corpus.jsonl, queries.jsonl and qrels/<split>.tsv; "
            f"missing {', '.join(missing)}. Download a dataset from "
            "https://github.com/beir-cellar/beir, unzip it and pass the folder holding them"
        )
    problems: list[str] = []
    corpus = _beir_corpus(folder, problems)
    queries = _beir_queries(folder, problems)
    if not corpus and not problems:
        problems.append(f"{label}/corpus.jsonl: has no documents")

    splits: dict[str, list[BenchmarkRow]] = {}
    notes: list[str] = []
    for qrels_file in qrels_files:
        rel = f"{label}/qrels/{qrels_file.name}"
        judgments = _read_qrels(rel, qrels_file, problems)
        judgments = _known_judgments(rel, judgments, corpus, queries, drop_unknown, problems, notes)
        by_query: dict[str, dict[str, int]] = {}
        for query_id, doc_id, score in judgments:
            if score > 0:
                by_query.setdefault(query_id, {})[doc_id] = score
        rows = [
            BenchmarkRow(id=qid, question=text, judgments=by_query[qid])
            for qid, text in queries.items()
            if qid in by_query
        ]
        if not rows and judgments:
            problems.append(
                f"{rel}: no judgment has a score above 0, so no query has a relevant document"
            )
        unjudged = len(queries) - len(rows)
        if rows and unjudged:
            notes.append(
                f"{rel}: queries with no relevant document are not asked: {unjudged:,} of "
                f"{len(queries):,}"
            )
        splits[qrels_file.stem] = rows
    if problems:
        raise DataError(label, problems)
    read = [folder / name for name in BEIR_FILES] + qrels_files
    return BenchmarkData(
        path=folder,
        kind="beir",
        sha256=folder_sha256(folder, read),
        splits=splits,
        corpus=corpus,
        files=tuple(f.relative_to(folder).as_posix() for f in read),
        notes=tuple(notes),
    )


def _beir_jsonl(
    folder: Path, name: str, problems: list[str]
) -> Iterator[tuple[str, dict[str, Any]]]:
    label = f"{folder.name}/{name}"
    text = _decode(label, (folder / name).read_bytes(), problems)
    if text is not None:
        for number, record in _jsonl_records(label, text, problems):
            yield f"{label} row {number}", record


def _beir_corpus(folder: Path, problems: list[str]) -> dict[str, str]:
    corpus: dict[str, str] = {}
    for where, record in _beir_jsonl(folder, "corpus.jsonl", problems):
        doc_id = _beir_id(record, where, problems)
        title, body = record.get("title") or "", record.get("text") or ""
        if not isinstance(title, str) or not isinstance(body, str):
            problems.append(f'{where}: fields "title" and "text" must be strings')
            continue
        if doc_id is None:
            continue
        # Title and text joined as lasagna-rag joins them, so the searched text is the same.
        text = f"{title}\n\n{body}".strip() if title else body.strip()
        if not text:
            problems.append(f'{where}: document "{doc_id}" has no text and no title')
        elif doc_id in corpus:
            problems.append(f'{where}: document id "{doc_id}" is used twice')
        else:
            corpus[doc_id] = text
    return corpus


def _beir_queries(folder: Path, problems: list[str]) -> dict[str, str]:
    queries: dict[str, str] = {}
    for where, record in _beir_jsonl(folder, "queries.jsonl", problems):
        query_id = _beir_id(record, where, problems)
        text = record.get("text")
        if not isinstance(text, str) or not text.strip():
            problems.append(f'{where}: field "text" must be a non-empty string')
        elif query_id is not None and query_id in queries:
            problems.append(f'{where}: query id "{query_id}" is used twice')
        elif query_id is not None:
            queries[query_id] = text.strip()
    return queries


def _read_qrels(rel: str, qrels_file: Path, problems: list[str]) -> list[tuple[str, str, int]]:
    text = _decode(rel, qrels_file.read_bytes(), problems)
    if text is None:
        return []
    judgments: list[tuple[str, str, int]] = []
    seen: dict[tuple[str, str], tuple[int, int]] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        cells = [c.strip() for c in line.split("\t")]
        if number == 1 and cells[:2] == ["query-id", "corpus-id"]:
            continue  # BEIR's optional header
        if len(cells) != 3:
            problems.append(
                f"{rel} row {number}: needs three tab-separated columns "
                f"(query-id, corpus-id, score), got {len(cells)}"
            )
            continue
        try:
            score = int(cells[2])
        except ValueError:
            problems.append(f'{rel} row {number}: score must be a whole number, got "{cells[2]}"')
            continue
        key = (cells[0], cells[1])
        if key in seen and seen[key][1] != score:
            problems.append(
                f'{rel} row {number}: query "{key[0]}" and document "{key[1]}" were judged '
                f"{seen[key][1]} in row {seen[key][0]} and {score} here"
            )
            continue
        if key not in seen:
            seen[key] = (number, score)
            judgments.append((cells[0], cells[1], score))
    return judgments


def _known_judgments(
    rel: str,
    judgments: list[tuple[str, str, int]],
    corpus: dict[str, str],
    queries: dict[str, str],
    drop_unknown: bool,
    problems: list[str],
    notes: list[str],
) -> list[tuple[str, str, int]]:
    """Judgments naming a missing document or query: an error, or dropped and counted."""
    missing_docs = list(dict.fromkeys(d for _, d, _ in judgments if d not in corpus))
    missing_queries = list(dict.fromkeys(q for q, _, _ in judgments if q not in queries))
    found = []
    for ids, what, where in (
        (missing_docs, "document", "corpus.jsonl"),
        (missing_queries, "query", "queries.jsonl"),
    ):
        if ids:
            n = len(ids)
            noun = f"{what} id{'s' if n > 1 else ''}"
            found.append((n, noun, where, ids))
    if not found:
        return judgments
    if not drop_unknown:
        for n, noun, where, ids in found:
            problems.append(
                f"{rel}: {n:,} judged {noun} {'are' if n > 1 else 'is'} not in {where}, "
                f"for example {examples(ids)}; fix the qrels or {where}, or drop those "
                "judgments with --drop-unknown-judgments"
            )
        return judgments
    kept = [j for j in judgments if j[0] in queries and j[1] in corpus]
    dropped = len(judgments) - len(kept)
    parts = [
        f"{n:,} {noun} not in {where} ({examples(ids, 3)}, ...)" for n, noun, where, ids in found
    ]
    notes.append(f"{rel}: dropped {dropped:,} judgments naming " + " and ".join(parts))
    return kept
