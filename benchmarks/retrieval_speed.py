"""BM25 speed and memory: lasagna's sparse-matrix index against rank-bm25, in the same run.

Run from the repository root:

    uv run --group dev python benchmarks/retrieval_speed.py [--passages 200000] \
        [--baseline-queries 40]

Two corpora:
1. ../shared/data/datasets/beir/msmarco (5,000 documents, its 43 judged queries), nDCG@10
   against its qrels.
2. A generated corpus of 200,000 passages (40 to 80 words drawn, seeded, from MS MARCO's
   own word frequencies); each query is 4 content words of one passage, which is the one
   relevant document.

Each engine runs in its own process, so its peak memory (max RSS, including the Python
interpreter and imports) is its own. Both engines see the same analysed terms (lowercase,
\\w\\w+, Lucene's English stopwords, Snowball English stemming); rank-bm25 gets them
pre-tokenised and its build time excludes that step, ours includes it. Compared:
- index build time, queries per second (ours: one batch, and one query at a time), peak RSS;
- nDCG@10: rank-bm25's BM25Okapi against our `okapi` variant (the same formula: the
  rankings must be identical) and our default `lucene` variant.
The goal: at least 20x rank-bm25's query throughput at equal nDCG@10.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

MSMARCO = (
    Path(__file__).resolve().parents[1].parent / "shared" / "data" / "datasets" / "beir" / "msmarco"
)


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def msmarco() -> tuple[list[str], list[str], list[str], list[dict[str, int]]]:
    from lasagna_synth import load_data

    data = load_data(MSMARCO)
    rows = data.rows("test")
    return (
        list(data.corpus),
        list(data.corpus.values()),
        [r.question for r in rows],
        [dict(r.judgments) for r in rows],
    )


def generated(
    n_passages: int, n_queries: int
) -> tuple[list[str], list[str], list[str], list[dict[str, int]]]:
    """Passages whose words follow MS MARCO's word frequencies; seeded, so identical each run."""
    import numpy as np

    from lasagna_cli.engine.retrieval._bm25 import LUCENE_ENGLISH_STOPWORDS

    counts: Counter[str] = Counter()
    for line in (MSMARCO / "corpus.jsonl").read_text(encoding="utf-8").split("\n"):
        if line.strip():
            counts.update(json.loads(line)["text"].lower().split())
    words = [w for w, c in counts.items() if w.isalpha()]
    weights = np.array([counts[w] for w in words], dtype=np.float64)
    rng = np.random.default_rng(0)
    lengths = rng.integers(40, 81, size=n_passages)
    drawn = rng.choice(len(words), size=int(lengths.sum()), p=weights / weights.sum())
    texts, start = [], 0
    for n in lengths.tolist():
        texts.append(" ".join(words[i] for i in drawn[start : start + n]))
        start += n
    ids = [f"p{i}" for i in range(n_passages)]
    pick = random.Random(0)
    queries, qrels = [], []
    for i in pick.sample(range(n_passages), n_queries):
        content = [w for w in texts[i].split() if w not in LUCENE_ENGLISH_STOPWORDS]
        queries.append(" ".join(pick.sample(content, 4)))
        qrels.append({ids[i]: 1})
    return ids, texts, queries, qrels


def load(
    corpus: str, passages: int, queries: int
) -> tuple[list[str], list[str], list[str], list[dict[str, int]]]:
    return msmarco() if corpus == "msmarco" else generated(passages, queries)


def mean_ndcg(rankings: list[list[str]], qrels: list[dict[str, int]]) -> float:
    from lasagna_metrics import ndcg_at_k

    return sum(ndcg_at_k(r, q, 10) for r, q in zip(rankings, qrels, strict=True)) / len(qrels)


def run_ours(args: argparse.Namespace) -> dict[str, Any]:
    from lasagna_cli.engine.retrieval._bm25 import BM25Index

    ids, texts, queries, qrels = load(args.corpus, args.passages, args.queries)
    BM25Index.build(["warm"], ["imports loaded before the clock starts"])
    out: dict[str, Any] = {}
    for variant in ("okapi", "lucene"):
        started = time.perf_counter()
        index = BM25Index.build(ids, texts, variant=variant)  # type: ignore[arg-type]
        build = time.perf_counter() - started
        index.search_many(queries[:5], 10)  # warm up
        rounds = max(1, 2000 // len(queries))  # a small query set is timed several times over
        started = time.perf_counter()
        for _ in range(rounds):
            batch = index.search_many(queries, 10)
        batch_s = (time.perf_counter() - started) / rounds
        started = time.perf_counter()
        for _ in range(rounds):
            single = [index.search(q, 10) for q in queries]
        single_s = (time.perf_counter() - started) / rounds
        assert single == batch, "one-by-one and batched search must agree"
        rankings = [[doc for doc, _ in hits] for hits in batch]
        out[variant] = {
            "build_s": build,
            "qps_batch": len(queries) / batch_s,
            "qps_single": len(queries) / single_s,
            "ndcg@10_baseline_queries": mean_ndcg(
                rankings[: args.baseline_queries], qrels[: args.baseline_queries]
            ),
            "ndcg@10": mean_ndcg(rankings, qrels),
            "rankings": rankings if variant == "okapi" else None,
        }
        del index
    out["peak_rss_mb"] = _peak_rss_mb()
    return out


def run_rank_bm25(args: argparse.Namespace) -> dict[str, Any]:
    import numpy as np
    from rank_bm25 import BM25Okapi

    from lasagna_cli.engine.retrieval._bm25 import Analyzer

    ids, texts, queries, qrels = load(args.corpus, args.passages, args.queries)
    mapper = Analyzer().term_mapper()
    started = time.perf_counter()
    tokenized = [mapper.terms(t) for t in texts]
    tokenize_s = time.perf_counter() - started
    started = time.perf_counter()
    bm25 = BM25Okapi(tokenized)
    build = time.perf_counter() - started
    del tokenized
    limit = len(queries) if args.corpus == "msmarco" else min(len(queries), args.baseline_queries)
    rounds = 5 if args.corpus == "msmarco" else 1
    started = time.perf_counter()
    for _ in range(rounds):
        rankings = []
        for query in queries[:limit]:
            scores = bm25.get_scores(mapper.terms(query))
            order = np.lexsort((np.arange(len(scores)), -scores))[:10]
            rankings.append([ids[i] for i in order if scores[i] > 0])
    search_s = (time.perf_counter() - started) / rounds
    return {
        "tokenize_s": tokenize_s,
        "build_s": build,
        "qps": limit / search_s,
        "queries_timed": limit,
        "ndcg@10": mean_ndcg(rankings, qrels[:limit]),
        "rankings": rankings,
        "peak_rss_mb": _peak_rss_mb(),
    }


def child(engine: str, corpus: str, args: argparse.Namespace) -> dict[str, Any]:
    command = [
        sys.executable,
        __file__,
        "--child",
        engine,
        "--corpus",
        corpus,
        "--passages",
        str(args.passages),
        "--queries",
        str(args.queries),
        "--baseline-queries",
        str(args.baseline_queries),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{engine} on {corpus} failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--passages", type=int, default=200_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument(
        "--baseline-queries",
        type=int,
        default=40,
        help="rank-bm25 queries timed on the generated corpus (it is slow)",
    )
    parser.add_argument("--child", choices=["ours", "rank-bm25"], help=argparse.SUPPRESS)
    parser.add_argument("--corpus", default="msmarco", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        run = run_ours if args.child == "ours" else run_rank_bm25
        print(json.dumps(run(args)))
        return
    if not MSMARCO.is_dir():
        raise SystemExit(f"needs {MSMARCO} (the shared data folder beside the repository)")
    for corpus in ("msmarco", "generated"):
        label = (
            "msmarco, 5,000 documents"
            if corpus == "msmarco"
            else f"generated, {args.passages:,} passages"
        )
        base = child("rank-bm25", corpus, args)
        ours = child("ours", corpus, args)
        okapi, lucene = ours["okapi"], ours["lucene"]
        n = base["queries_timed"]
        same = okapi["rankings"][:n] == base["rankings"]
        print(f"== {label}")
        print(
            f"  rank-bm25 BM25Okapi: build {base['build_s']:.2f} s (+ {base['tokenize_s']:.2f} s "
            f"tokenising), {base['qps']:.1f} queries/s over {n} queries, nDCG@10 "
            f"{base['ndcg@10']:.4f}, peak RSS {base['peak_rss_mb']:.0f} MB"
        )
        for name, found in (("okapi", okapi), ("lucene", lucene)):
            same_queries = (
                f" ({found['ndcg@10_baseline_queries']:.4f} on rank-bm25's {n})"
                if n < len(found["rankings"] or okapi["rankings"])
                else ""
            )
            print(
                f"  lasagna BM25 {name:<6}: build {found['build_s']:.2f} s (tokenising "
                f"included), {found['qps_batch']:,.0f} queries/s batched, "
                f"{found['qps_single']:,.0f} one at a time, nDCG@10 {found['ndcg@10']:.4f}"
                f"{same_queries}"
            )
        print(f"  lasagna peak RSS (both variants built in turn): {ours['peak_rss_mb']:.0f} MB")
        print(f"  rankings identical to rank-bm25 (okapi, first {n} queries): {same}")
        print(
            f"  throughput ratio vs rank-bm25: {okapi['qps_batch'] / base['qps']:,.0f}x batched, "
            f"{okapi['qps_single'] / base['qps']:,.0f}x one at a time (goal >= 20x)"
        )


if __name__ == "__main__":
    main()
