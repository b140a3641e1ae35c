"""The one BM25 path: each corpus indexed once per retriever setting, every pending query
ranked in one batch, before any task runs.

A corpus is a dataset's own (its position in the plan) or a database a setup brings (kag);
the index depends on the BM25 settings, not on top_k, so setups that differ only in top_k
share one. Each query's ranking keeps `depth` documents (at least 10, for nDCG@10) and the
time its search took.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from lasagna_cli.engine._bm25 import BM25Index
from lasagna_cli.engine._data import Corpus
from lasagna_cli.engine._plan import Task
from lasagna_cli.engine._tasks import query_text

CorpusOf = Callable[[Task], Corpus | None]
Say = Callable[[str], None]


def rank_tasks(
    tasks: Sequence[Task], corpus_of: CorpusOf, labels: Callable[[Task], str], say: Say
) -> list[Task]:
    """`tasks` with the retriever's ranking filled in where their setup retrieves."""
    wanted: dict[tuple[int, tuple[Any, ...]], tuple[Task, dict[str, str], int]] = {}
    corpora: dict[int, Corpus] = {}
    for task in tasks:
        spec = task.setup.retriever
        if not task.planned.needs_retrieval or spec is None:
            continue
        corpus = corpus_of(task)
        assert corpus is not None
        corpora[id(corpus)] = corpus
        key = (id(corpus), spec.index_key())
        first, queries, depth = wanted.get(key, (task, {}, 0))
        queries[query_text(task.setup.query_prefix, task.question)] = ""
        wanted[key] = (first, queries, max(depth, spec.depth))
    found: dict[tuple[int, tuple[Any, ...], str], tuple[list[tuple[str, float]], float]] = {}
    for (corpus_id, index_key), (first, queries, depth) in wanted.items():
        corpus, spec = corpora[corpus_id], first.setup.retriever
        assert spec is not None
        started = time.perf_counter()
        index = BM25Index.build(
            list(corpus.texts),
            list(corpus.texts.values()),
            k1=spec.k1,
            b=spec.b,
            variant=spec.variant,  # type: ignore[arg-type]
            stemmer=spec.stemmer,
            stopwords=spec.stopwords,  # type: ignore[arg-type]
        )
        built = time.perf_counter() - started
        texts = list(queries)
        seconds: list[float] = []
        started = time.perf_counter()
        rankings = index.search_many(texts, depth, seconds=seconds)
        searched = time.perf_counter() - started
        say(
            f"indexed {labels(first)}: {len(index):,} documents in {built:.2f} s (BM25 "
            f"{spec.variant}, stemmer {spec.stemmer}); {len(texts):,} queries in {searched:.3f} s"
        )
        for text, ranking, took in zip(texts, rankings, seconds, strict=True):
            found[(corpus_id, index_key, text)] = (ranking, took)
    ranked = []
    for task in tasks:
        spec = task.setup.retriever
        if not task.planned.needs_retrieval or spec is None:
            ranked.append(task)
            continue
        corpus = corpus_of(task)
        ranking, took = found[
            (id(corpus), spec.index_key(), query_text(task.setup.query_prefix, task.question))
        ]
        ranked.append(replace(task, ranking=tuple(ranking[: spec.depth]), retrieval_seconds=took))
    return ranked
