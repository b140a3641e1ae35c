"""The user's own data (a JSONL, CSV or SQuAD file, a BEIR folder, the rows of RAGAS,
DeepEval or a Hugging Face dataset) as a `Dataset`.

lasagna-synth reads and validates the file (`load_data`: every bad row named); here its rows
become questions: the references are the answers, the judgments the rows' passages (pooled
into one corpus) or the BEIR qrels, and the evidence a retrieved passage should contain is
the row's own passages (an unanswerable row has none: its passages are relevant to nothing).

A question file that asks the same question twice (the same text once case, punctuation
and articles are set aside: `lasagna_synth.normalize_question`) has it scored once, as its
first row, and says so in the dataset's notes: a copy would count its question twice in
every mean and in a paired comparison's n. Near duplicates are kept: a user's own set may
hold rephrasings on purpose (to test a retriever's robustness to wording), and
`validate-data` warns of them. A BEIR folder's queries are each scored, as trec_eval
scores each query id of its qrels.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from lasagna_cli.engine._counts import counted
from lasagna_cli.engine._data import Corpus, Dataset, Question
from lasagna_cli.engine._errors import EngineUsageError
from lasagna_cli.engine.config._config import BenchmarkEntry, ChunkingSpec
from lasagna_metrics import parse_json
from lasagna_synth import BenchmarkData, BenchmarkRow, EvidenceSpan, TrackSupport


def read_own(entry: BenchmarkEntry) -> BenchmarkData:
    """The entry's file or folder, every row checked (`lasagna_synth.DataError` lists the
    problems)."""
    from lasagna_synth import load_data

    assert entry.path is not None
    return load_data(
        entry.path, drop_unknown_judgments=entry.drop_unknown_judgments, format=entry.data_format
    )


def _question(row: BenchmarkRow, spans: tuple[EvidenceSpan, ...] | None = None) -> Question:
    """The row as a question; with `spans` (a corpus of documents), judged by them per
    chunking instead of by the pooled passages."""
    if spans is not None:
        return Question(
            id=row.id,
            text=row.question,
            references=tuple(row.answers),
            unanswerable=row.unanswerable,
            evidence=tuple(row.contexts) if not row.unanswerable else (),
            metadata=dict(row.metadata),
            spans=spans,
        )
    return Question(
        id=row.id,
        text=row.question,
        references=tuple(row.answers),
        unanswerable=row.unanswerable,
        judgments=dict(row.judgments),
        evidence=tuple(row.contexts) if row.relevant else (),
        metadata=dict(row.metadata),
    )


def corpus_folder(data: BenchmarkData, entry: BenchmarkEntry) -> Path | None:
    """The folder of documents the entry searches: its own (`--corpus`), else the one the
    rows name; None: the rows' passages pooled."""
    if entry.corpus is not None:
        return entry.corpus
    if data.documents is not None and not data.documents.exists():
        raise EngineUsageError(
            f"{entry.where}: its rows name their corpus {data.documents}, which does not "
            "exist; give the folder of documents they were written from with --corpus (or "
            "`corpus:` in a sweep file)"
        )
    return data.documents


def distinct_rows(
    data: BenchmarkData, rows: Sequence[BenchmarkRow]
) -> tuple[list[BenchmarkRow], dict[str, str]]:
    """The rows without the copies of an earlier row's question (all of a BEIR folder's),
    and `{copy's id: first's id}`."""
    if data.kind == "beir":
        return list(rows), {}
    from lasagna_synth import first_copies

    copies = first_copies([row.question for row in rows])
    kept = [row for i, row in enumerate(rows) if i not in copies]
    return kept, {rows[i].id: rows[j].id for i, j in copies.items()}


def duplicates_note(copies: Mapping[str, str], shown: int = 5) -> str:
    """The note on `copies`: "2 duplicate questions scored once: q7 = q3, q9 = q3" (the
    first `shown` pairs)."""
    pairs = [f"{copy} = {first}" for copy, first in list(copies.items())[:shown]]
    more = f", and {len(copies) - shown:,} more" if len(copies) > shown else ""
    return f"{counted(len(copies), 'duplicate question')} scored once: {', '.join(pairs)}{more}"


def _documents_dataset(
    data: BenchmarkData,
    entry: BenchmarkEntry,
    folder: Path,
    base: Dataset,
    rows: Sequence[BenchmarkRow],
) -> Dataset:
    from dataclasses import replace

    from lasagna_cli.engine.datasets._documents import (
        chunked_corpus,
        load_documents,
        locate_rows,
    )

    documents = load_documents(folder, entry.where)
    located = locate_rows(rows, documents)
    questions = tuple(_question(row, located.spans.get(row.id, ())) for row in rows)
    corpus = chunked_corpus(documents, ChunkingSpec())
    judged = sum(1 for q in questions if q.spans)
    tracks = dict(base.tracks)
    if judged:
        tracks["retrieval"] = TrackSupport(
            "retrieval",
            True,
            f"{judged:,} questions with evidence located in the {len(documents.texts):,} "
            f"documents of {folder}, searched as each setup chunks them",
        )
    else:
        tracks["retrieval"] = TrackSupport(
            "retrieval",
            False,
            f"no row's passages were found in the documents of {folder}",
            "give the folder the questions were written from (--corpus)",
        )
    return replace(
        base,
        questions=questions,
        corpus=corpus,
        tracks=tracks,
        notes=(*base.notes, located.note(folder)),
        documents=documents,
        _chunk=chunked_corpus,
    )


def own_dataset(data: BenchmarkData, entry: BenchmarkEntry) -> Dataset:
    """The entry's split of the data; a split it does not have is refused with the ones it has."""
    if entry.split not in data.splits:
        splits = ", ".join(sorted(data.splits))
        raise EngineUsageError(
            f'{entry.where}: has no split "{entry.split}"; it has {splits}. Choose one with '
            "--split (or `split:` in a sweep file)"
        )
    rows, copies = distinct_rows(data, data.splits[entry.split])
    corpus = None
    if data.corpus:
        corpus = Corpus(
            texts=data.corpus, provenance=data.corpus_provenance, titled=data.kind == "beir"
        )
    dataset = Dataset(
        name=data.name(entry.name),
        revision=data.revision,
        kind=data.kind,
        split=entry.split,
        questions=tuple(_question(row) for row in rows),
        corpus=corpus,
        tracks={str(track): found for track, found in data.track_support().items()},
        splits=tuple(sorted(data.splits)),
        notes=(*data.notes, duplicates_note(copies)) if copies else tuple(data.notes),
        known_ids=frozenset(_known_ids(data)),
        duplicates=copies,
    )
    folder = corpus_folder(data, entry) if data.kind != "beir" else entry.corpus
    if folder is None:
        return dataset
    if data.kind == "beir":
        raise EngineUsageError(
            f"{entry.where}: a BEIR folder has its own corpus (corpus.jsonl); --corpus is for "
            "a question file (JSONL, CSV, ...)"
        )
    return _documents_dataset(data, entry, folder, dataset, rows)


def _known_ids(data: BenchmarkData) -> set[str]:
    """Every question id the data has: each split's, and every query of a BEIR folder
    (a predictions file may cover queries that no judgment names)."""
    ids = {row.id for row in data.rows()}
    queries = Path(data.path) / "queries.jsonl"
    if data.kind == "beir" and queries.is_file():
        for line in queries.read_text(encoding="utf-8-sig").split("\n"):
            try:
                record = parse_json(line) if line.strip() else None
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict) and isinstance(record.get("_id"), str | int):
                ids.add(str(record["_id"]).strip())
    return ids
