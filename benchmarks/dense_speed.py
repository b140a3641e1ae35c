"""Dense retrieval's cost against the libraries it wraps, in one process, on two shapes of
real passages (BEIR msmarco's short ones and dbpedia's abstracts, ../shared/data) and a
long one (eight dbpedia abstracts joined, about 400 words):

1. embedding throughput (passages per second) of the embedded default, lasagna's
   `Embedder.embed` (dedup, batching on a worker thread, token counting, normalising)
   against WordLlama's own `embed(texts, norm=True)` on the same loaded model;
2. the in-process index: build + query of `VectorIndex` (exact, numpy) against the same
   matrix product and top-k written directly, and (above EXACT_LIMIT) the HNSW graph
   against usearch's `Index.add` + `search` directly, on the same vectors.

Each is timed `--repeat` times, interleaved, and the medians compared; the goal is
lasagna's time at most 1.3x the bare library's. Exit 1 when a ratio misses it.

    uv run --group hnsw python benchmarks/dense_speed.py [--beir ../shared/data/datasets/beir]
        [--repeat 5] [--hnsw 50000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
GOAL = 1.3


def passages(folder: Path) -> list[str]:
    with (folder / "corpus.jsonl").open(encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines]
    return [f"{r.get('title', '')}\n\n{r['text']}".strip() for r in rows]


def timed(fn: Callable[[], Any], repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def compare(
    label: str, ours: Callable[[], Any], bare: Callable[[], Any], repeat: int, n: int
) -> bool:
    ours(), bare()  # warm-up: the first call pays for caches and thread start
    mine, theirs = [], []
    for _ in range(repeat):  # interleaved, so load on the machine hits both alike
        mine += timed(ours, 1)
        theirs += timed(bare, 1)
    a, b = statistics.median(mine), statistics.median(theirs)
    ratio = a / b
    ok = ratio <= GOAL
    print(
        f"{label:<44} lasagna {a * 1000:9.1f} ms ({n / a:10,.0f}/s)  bare {b * 1000:9.1f} ms "
        f"({n / b:10,.0f}/s)  {ratio:4.2f}x {'ok' if ok else f'OVER {GOAL}x'}"
    )
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--beir", type=Path, default=ROOT.parent / "shared/data/datasets/beir")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--hnsw", type=int, default=50_000, help="vectors in the HNSW test")
    args = parser.parse_args()

    from lasagna_cli.engine.retrieval import _vectors
    from lasagna_judge import make_embedder

    short = passages(args.beir / "msmarco")
    abstracts = passages(args.beir / "dbpedia")
    long = ["\n\n".join(abstracts[i : i + 8]) for i in range(0, len(abstracts), 8)]
    embedder = make_embedder("local/wordllama")
    backend: Any = embedder._backend
    from lasagna_judge._embed_backends import WordLlamaBackend

    model = WordLlamaBackend(backend._meter)._load()
    del model.tokenize  # WordLlama's own tokenize, without lasagna's token count
    ok = True
    print(f"embedding (WordLlama l2_supercat 256, {backend.batch_size} a batch)")
    for label, texts in (
        (f"msmarco passages ({len(short):,}, short)", short),
        (f"dbpedia abstracts ({len(abstracts):,})", abstracts),
        (f"8 abstracts joined ({len(long):,}, ~400 words)", long),
    ):

        def ours(texts: list[str] = texts) -> Any:
            return asyncio.run(embedder.embed(texts))

        def bare(texts: list[str] = texts) -> Any:
            return model.embed(texts, norm=True)

        ok &= compare(f"  {label}", ours, bare, args.repeat, len(texts))

    vectors = asyncio.run(embedder.embed(abstracts))
    queries = asyncio.run(embedder.embed(short[:500]))
    ids = [f"d{i}" for i in range(len(vectors))]
    print(f"index: {len(vectors):,} vectors, {len(queries)} queries, top 10")

    def exact_ours() -> Any:
        return _vectors.VectorIndex(ids, vectors).search_many(queries, 10)

    def exact_bare() -> Any:
        scores = queries @ vectors.T
        top = np.argpartition(-scores, 9, axis=1)[:, :10]
        order = np.argsort(-np.take_along_axis(scores, top, axis=1), axis=1)
        return np.take_along_axis(top, order, axis=1)

    ok &= compare(
        "  exact (numpy), build + query", exact_ours, exact_bare, args.repeat, len(queries)
    )

    from usearch.index import Index

    rng = np.random.default_rng(0)
    big = vectors[rng.integers(0, len(vectors), args.hnsw)]
    big = big + 0.05 * rng.standard_normal(big.shape).astype(np.float32)
    big /= np.linalg.norm(big, axis=1, keepdims=True)
    big_ids = [f"d{i}" for i in range(len(big))]
    limit = _vectors.EXACT_LIMIT
    _vectors.EXACT_LIMIT = len(big) - 1

    def hnsw_ours() -> Any:
        return _vectors.VectorIndex(big_ids, big).search_many(queries, 10)

    def hnsw_bare() -> Any:
        index = Index(ndim=big.shape[1], metric="cos", dtype="f32")
        index.add(np.arange(len(big), dtype=np.uint64), big)
        return index.search(queries, 10)

    ok &= compare(
        f"  HNSW (usearch) over {len(big):,}, build + query",
        hnsw_ours,
        hnsw_bare,
        max(1, args.repeat // 2),
        len(queries),
    )
    _vectors.EXACT_LIMIT = limit
    print("goal met" if ok else f"goal missed: lasagna over {GOAL}x the bare library")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
