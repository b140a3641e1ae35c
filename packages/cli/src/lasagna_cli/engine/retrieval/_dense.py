"""A dense retriever's rankings for a batch of queries: the corpus's vectors (kept between
runs), searched in-process (`_vectors`) or in Chroma (`_chroma`), with every component
checked before any question is asked: the embedder answers, and its dimension is the
store's."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from lasagna_cli.engine._counts import counted
from lasagna_cli.engine._data import Corpus
from lasagna_cli.engine._errors import EngineError
from lasagna_cli.engine.config._config import RetrieverSpec
from lasagna_cli.engine.retrieval._vectors import (
    Ranking,
    VectorFacts,
    VectorIndex,
    corpus_vectors,
    vectors_key,
)

if TYPE_CHECKING:
    from lasagna_judge import Embedder


async def dense_rankings(
    corpus: Corpus,
    spec: RetrieverSpec,
    embedder: Embedder,
    queries: list[str],
    depth: int,
    folder: Path | None,
    label: str,
    say: Callable[[str], None],
    *,
    per_document: bool = False,
) -> tuple[list[Ranking], list[float], VectorFacts]:
    from lasagna_judge import JudgeError

    try:
        # The queries first: a few calls that show the embedder answers, and its dimension,
        # before a whole corpus is sent.
        query_vectors = await embedder.embed(queries)
        key = vectors_key(corpus, embedder, spec.dimensions)
        if spec.store is not None:
            return await _in_store(corpus, spec, embedder, query_vectors, depth, key, label, say)
        vectors, facts = await corpus_vectors(
            corpus, embedder, key, folder, say, per_document=per_document
        )
    except JudgeError as exc:
        # The judge's message names the embedder (and its server) already.
        raise EngineError(f"{label}: embedder {exc}") from None
    index = VectorIndex(
        list(corpus.texts), vectors, hnsw_path=folder / f"{key}.usearch" if folder else None
    )
    facts.index = index.kind
    seconds: list[float] = []
    started = time.perf_counter()
    rankings = index.search_many(query_vectors, depth, seconds=seconds)
    made = "read" if facts.reused else f"embedded in {facts.insertion_seconds:.2f} s"
    say(
        f"indexed {label}: {counted(len(index), 'document')} ({embedder.model}, "
        f"{facts.dimension} dimensions, {index.kind}; vectors {made}); "
        f"{counted(len(queries), 'query', 'queries')} in "
        f"{time.perf_counter() - started:.3f} s"
    )
    return rankings, seconds, facts


async def _in_store(
    corpus: Corpus,
    spec: RetrieverSpec,
    embedder: Embedder,
    query_vectors: object,
    depth: int,
    key: str,
    label: str,
    say: Callable[[str], None],
) -> tuple[list[Ranking], list[float], VectorFacts]:
    from lasagna_cli.engine.retrieval._chroma import ChromaStore

    assert spec.store is not None
    dimension = int(embedder.dimension or 0)
    name = spec.collection or f"lasagna-{key[:24]}"
    async with ChromaStore(spec.store, name, owned=spec.collection is None) as store:
        await store.open(dimension)
        facts = VectorFacts(embedder.model, embedder.endpoint, dimension, spec.store, 0)
        if store.owned and store.count != len(corpus.texts):
            # Built here (again, if a run stopped half way): upserts are idempotent.
            vectors, made = await corpus_vectors(corpus, embedder, key, None, say)
            facts.embedding_tokens = made.embedding_tokens
            facts.insertion_seconds = made.insertion_seconds + await store.fill(
                list(corpus.texts), vectors
            )
        else:
            facts.reused = True
        facts.documents = store.count
        seconds: list[float] = []
        started = time.perf_counter()
        rankings = await store.search_many(query_vectors, depth, set(corpus.texts), seconds)
    how = "found full" if facts.reused else f"filled in {facts.insertion_seconds:.2f} s"
    say(
        f"indexed {label}: {counted(store.count, 'document')} in {spec.store} collection "
        f"{name!r} ({embedder.model}, {dimension} dimensions; {how}); "
        f"{counted(len(rankings), 'query', 'queries')} in "
        f"{time.perf_counter() - started:.3f} s"
    )
    return rankings, seconds, facts
