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

from lasagna_cli.engine._config import BenchmarkEntry
from lasagna_cli.engine._data import Corpus, Dataset, Question
from lasagna_cli.engine._errors import EngineUsageError
from lasagna_synth import BenchmarkData, BenchmarkRow


def read_own(entry: BenchmarkEntry) -> BenchmarkData:
    """The entry's file or folder, every row checked (`lasagna_synth.DataError` lists the
    problems)."""
    from lasagna_synth import load_data

    assert entry.path is not None
    return load_data(
        entry.path, drop_unknown_judgments=entry.drop_unknown_judgments, format=entry.data_format
    )


def _question(row: BenchmarkRow) -> Question:
    return Question(
        id=row.id,
        text=row.question,
        references=tuple(row.answers),
        unanswerable=row.unanswerable,
        judgments=dict(row.judgments),
        evidence=tuple(row.contexts) if row.relevant else (),
        metadata=dict(row.metadata),
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
    return Dataset(
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


def _known_ids(data: BenchmarkData) -> set[str]:
    """Every question id the data has: each split's, and every query of a BEIR folder
    (a predictions file may cover queries that no judgment names)."""
    ids = {row.id for row in data.rows()}
    queries = Path(data.path) / "queries.jsonl"
    if data.kind == "beir" and queries.is_file():
        for line in queries.read_text(encoding="utf-8-sig").split("\n"):
            try:
                record = json.loads(line) if line.strip() else None
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict) and isinstance(record.get("_id"), str | int):
                ids.add(str(record["_id"]).strip())
    return ids
