"""The user's own data (a JSONL, CSV or SQuAD file, a BEIR folder, the rows of RAGAS,
DeepEval or a Hugging Face dataset) as a `Dataset`.

lasagna-synth reads and validates the file (`load_data`: every bad row named); here its rows
become questions: the references are the answers, the judgments the rows' passages (pooled
into one corpus) or the BEIR qrels, and the evidence a retrieved passage should contain is
the row's own passages (an unanswerable row has none: its passages are relevant to nothing).
"""

from __future__ import annotations

import json
from pathlib import Path

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


def _documents_dataset(
    data: BenchmarkData, entry: BenchmarkEntry, folder: Path, base: Dataset
) -> Dataset:
    from dataclasses import replace

    from lasagna_cli.engine.datasets._documents import (
        chunked_corpus,
        load_documents,
        locate_rows,
    )

    documents = load_documents(folder, entry.where)
    rows = data.splits[entry.split]
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
        questions=tuple(_question(row) for row in data.splits[entry.split]),
        corpus=corpus,
        tracks={str(track): found for track, found in data.track_support().items()},
        splits=tuple(sorted(data.splits)),
        notes=tuple(data.notes),
        known_ids=frozenset(_known_ids(data)),
    )
    folder = corpus_folder(data, entry) if data.kind != "beir" else entry.corpus
    if folder is None:
        return dataset
    if data.kind == "beir":
        raise EngineUsageError(
            f"{entry.where}: a BEIR folder has its own corpus (corpus.jsonl); --corpus is for "
            "a question file (JSONL, CSV, ...)"
        )
    return _documents_dataset(data, entry, folder, dataset)


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
