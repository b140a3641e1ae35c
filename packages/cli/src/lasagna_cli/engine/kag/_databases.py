"""kag's databases, loaded once per sweep (never per task) into the engine's one corpus model.

A `documents` database is a folder read by lasagna-synth's loaders and cut into passages by
the engine's one chunking rule (`datasets._passages`: passage ids `<doc>#<i>`); a `beir`
database is the corpus of a BEIR folder. The runner indexes each once for every setup that
names it.
"""

from __future__ import annotations

from collections.abc import Iterable

from lasagna_cli.engine._data import Corpus
from lasagna_cli.engine._errors import EngineError
from lasagna_cli.engine.config._config import DatabaseSpec
from lasagna_cli.engine.datasets import chunk_rule, cut_documents
from lasagna_synth import Chunker


def database_corpus(database: DatabaseSpec) -> Corpus:
    """The database's passages, `{passage id: text}` in corpus order."""
    if database.kind == "beir":
        from lasagna_synth import DataError, SynthUsageError, load_data

        try:
            # Only the corpus is searched: judgments naming ids the folder lacks do not matter.
            data = load_data(database.path, drop_unknown_judgments=True)
        except (DataError, SynthUsageError) as exc:  # config.toml's content: exit 1
            raise EngineError(f"database {database.name!r}: {exc}") from None
        texts = dict(data.corpus)
        return Corpus(texts=texts, provenance="native", titled=True)
    from lasagna_synth import load_corpus

    corpus = load_corpus(database.path)
    chunker: Chunker = "sentences" if database.chunker == "sentences" else "fixed"
    ids, doc_ids, chunks = cut_documents(
        ((doc.id, doc.text) for doc in corpus.documents), chunker, database.chunk_words
    )
    if not ids:
        raise EngineError(
            f"database {database.name!r}: no passage in {database.path}; check the folder "
            "(supported documents, not empty)"
        )
    return Corpus(
        texts=dict(zip(ids, chunks, strict=True)),
        provenance="native",
        document_of=dict(zip(ids, doc_ids, strict=True)),
        rule=chunk_rule(chunker, database.chunk_words),
    )


def load_databases(databases: Iterable[DatabaseSpec]) -> dict[str, Corpus]:
    """One corpus per distinct database, in the order first named."""
    found: dict[str, Corpus] = {}
    for database in databases:
        if database.name not in found:
            found[database.name] = database_corpus(database)
    return found
