"""Databases, loaded and indexed once per sweep (never per task).

A `documents` database is a folder read by lasagna-synth's loaders and cut by its chunkers
(passage ids `<doc>#<i>`); a `beir` database is the corpus of a BEIR folder, read by
lasagna-synth's data formats. Each becomes one BM25 index (lasagna_cli._retrieval) that all
the setups naming that database share.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lasagna_cli._errors import CliError
from lasagna_cli._sweep._config import Database

if TYPE_CHECKING:
    from lasagna_cli._retrieval import BM25Index


@dataclass
class Index:
    """A database's passages and their BM25 index."""

    database: Database
    texts: Mapping[str, str]
    bm25: BM25Index
    skipped_files: int = 0

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        return self.bm25.search(query, k)

    def text(self, doc_id: str) -> str:
        return self.texts[doc_id]

    def describe(self) -> dict[str, Any]:
        return {"passages": len(self.texts), **self.bm25.describe()}


def load_passages(database: Database) -> tuple[dict[str, str], int]:
    """`{passage id: text}` in corpus order, and how many files were skipped."""
    if database.kind == "beir":
        from lasagna_synth import DataError, load_data

        try:
            # Only the corpus is searched: judgments naming ids the folder lacks do not matter.
            data = load_data(database.path, drop_unknown_judgments=True)
        except DataError as exc:
            raise CliError(f"database {database.name!r}: {exc}") from None
        return dict(data.corpus), 0
    from lasagna_synth import chunk_documents, load_corpus

    corpus = load_corpus(database.path)
    passages = chunk_documents(corpus.documents, database.chunker, database.chunk_words)  # type: ignore[arg-type]
    return {p.id: p.text for p in passages}, len(corpus.skipped)


def build_index(database: Database) -> Index:
    from lasagna_cli._retrieval import BM25Index

    texts, skipped = load_passages(database)
    if not texts:
        raise CliError(
            f"database {database.name!r}: no passage in {database.path}; check the folder "
            "(supported documents, not empty)"
        )
    return Index(database, texts, BM25Index.build(list(texts), list(texts.values())), skipped)


def build_indexes(databases: Iterable[Database]) -> dict[str, Index]:
    """One index per distinct database, in the order first named."""
    indexes: dict[str, Index] = {}
    for database in databases:
        if database.name not in indexes:
            indexes[database.name] = build_index(database)
    return indexes
