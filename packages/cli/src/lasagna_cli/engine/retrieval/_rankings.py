"""The one ranking path: each corpus indexed once per retriever setting, every pending
query ranked in one batch, before any task runs.

A corpus is a dataset's own (its position in the plan) or a database a setup brings (kag).
A retriever is BM25, dense (the embedder's vectors, searched in-process or in a vector
database) or hybrid (reciprocal rank fusion of the two). Each part is computed once for
all the setups that share it: a BM25 index depends on the BM25 settings, not on top_k; a
dense index on the embedder and the store; a hybrid setup reuses both. Each query's ranking
keeps `depth` documents (at least 10, for nDCG@10) and the time its search took.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lasagna_cli.engine._counts import counted
from lasagna_cli.engine._data import Corpus
from lasagna_cli.engine._steps import Step, no_step
from lasagna_cli.engine.config._config import RetrieverSpec
from lasagna_cli.engine.plan._plan import Task
from lasagna_cli.engine.retrieval._bm25 import BM25Index
from lasagna_cli.engine.retrieval._vectors import VectorFacts
from lasagna_cli.engine.run._tasks import query_text

if TYPE_CHECKING:
    from lasagna_judge import Embedder

CorpusOf = Callable[[Task], Corpus | None]
Say = Callable[[str], None]
EmbedderOf = Callable[[RetrieverSpec], "Embedder"]
Ranking = list[tuple[str, float]]
#: How deep each list a hybrid retriever fuses is (a passage 50th in one list and 3rd in
#: the other must still count).
FUSION_DEPTH = 100

# (corpus id, "bm25" or "dense", the settings of that part)
PartKey = tuple[int, str, tuple[Any, ...]]


def _parts(spec: RetrieverSpec) -> list[tuple[str, tuple[Any, ...]]]:
    parts: list[tuple[str, tuple[Any, ...]]] = []
    if spec.uses_bm25:
        parts.append(("bm25", spec.bm25_key()))
    if spec.uses_vectors:
        parts.append(("dense", spec.dense_key()))
    return parts


def _part_depth(spec: RetrieverSpec) -> int:
    return max(spec.depth, FUSION_DEPTH) if spec.kind == "hybrid" else spec.depth


async def rank_tasks(
    tasks: Sequence[Task],
    corpus_of: CorpusOf,
    labels: Callable[[Task], str],
    say: Say,
    *,
    embedder_of: EmbedderOf | None = None,
    vector_folder: Path | None = None,
    per_document: bool = False,
    on_step: Step = no_step,
) -> tuple[list[Task], dict[str, VectorFacts]]:
    """`tasks` with the retriever's ranking filled in where their setup retrieves, and
    what each dense index is and cost (by corpus label); a BM25 index's build is told to
    `on_step` as `indexing <corpus>: N documents (BM25)`."""
    wanted: dict[PartKey, tuple[Task, dict[str, str], int]] = {}
    corpora: dict[int, Corpus] = {}
    for task in tasks:
        spec = task.setup.retriever
        if not task.planned.needs_retrieval or spec is None:
            continue
        corpus = corpus_of(task)
        assert corpus is not None
        corpora[id(corpus)] = corpus
        for kind, settings in _parts(spec):
            key = (id(corpus), kind, settings)
            first, queries, depth = wanted.get(key, (task, {}, 0))
            queries[query_text(task.setup.query_prefix, task.question)] = ""
            wanted[key] = (first, queries, max(depth, _part_depth(spec)))
    found: dict[PartKey, dict[str, tuple[Ranking, float]]] = {}
    facts: dict[PartKey, VectorFacts] = {}
    for key, (first, queries, depth) in wanted.items():
        corpus, spec = corpora[key[0]], first.setup.retriever
        assert spec is not None
        texts = list(queries)
        if key[1] == "bm25":
            rankings, seconds = _bm25(corpus, spec, texts, depth, labels(first), say, on_step)
        else:
            if embedder_of is None:
                raise RuntimeError("a dense retriever needs embedder_of")
            from lasagna_cli.engine.retrieval._dense import dense_rankings

            rankings, seconds, facts[key] = await dense_rankings(
                corpus,
                spec,
                embedder_of(spec),
                texts,
                depth,
                vector_folder,
                labels(first),
                say,
                per_document=per_document,
            )
        found[key] = {t: (r, s) for t, r, s in zip(texts, rankings, seconds, strict=True)}
    ranked = []
    described: dict[str, VectorFacts] = {}
    for task in tasks:
        spec = task.setup.retriever
        if not task.planned.needs_retrieval or spec is None:
            ranked.append(task)
            continue
        corpus = corpus_of(task)
        query = query_text(task.setup.query_prefix, task.question)
        lists = [found[(id(corpus), kind, s)][query] for kind, s in _parts(spec)]
        if spec.kind == "hybrid":
            ranking = fuse([r for r, _ in lists], spec.weights, spec.rrf_k)
        else:
            ranking = lists[0][0]
        index = None
        if spec.uses_vectors:
            part = facts[(id(corpus), "dense", spec.dense_key())]
            index = part.describe()
            described[labels(task)] = part
        ranked.append(
            replace(
                task,
                ranking=tuple(ranking[: spec.depth]),
                retrieval_seconds=sum(s for _, s in lists),
                retrieval_index=index,
            )
        )
    return ranked, described


def fuse(rankings: Sequence[Ranking], weights: Sequence[float], k: int) -> Ranking:
    """Reciprocal rank fusion: each list gives a passage weight / (k + its rank, from 1);
    equal totals keep the order in which the lists first name the passages."""
    totals: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, (doc, _) in enumerate(ranking, start=1):
            totals[doc] = totals.get(doc, 0.0) + weight / (k + rank)
    order = {doc: i for i, doc in enumerate(totals)}
    return sorted(totals.items(), key=lambda item: (-item[1], order[item[0]]))


def _bm25(
    corpus: Corpus,
    spec: RetrieverSpec,
    texts: list[str],
    depth: int,
    label: str,
    say: Say,
    on_step: Step = no_step,
) -> tuple[list[Ranking], list[float]]:
    stage = f"indexing {label}: {counted(len(corpus.texts), 'document')} (BM25)"
    on_step(stage, 0, len(corpus.texts))
    started = time.perf_counter()
    index = BM25Index.build(
        list(corpus.texts),
        list(corpus.texts.values()),
        k1=spec.k1,
        b=spec.b,
        variant=spec.variant,  # type: ignore[arg-type]
        stemmer=spec.stemmer,
        stopwords=spec.stopwords,  # type: ignore[arg-type]
        on_progress=lambda done, total: on_step(stage, done, total),
    )
    built = time.perf_counter() - started
    seconds: list[float] = []
    started = time.perf_counter()
    rankings = index.search_many(texts, depth, seconds=seconds)
    searched = time.perf_counter() - started
    say(
        f"indexed {label}: {counted(len(index), 'document')} in {built:.2f} s (BM25 "
        f"{spec.variant}, stemmer {spec.stemmer}); {counted(len(texts), 'query', 'queries')} "
        f"in {searched:.3f} s"
    )
    return rankings, seconds
