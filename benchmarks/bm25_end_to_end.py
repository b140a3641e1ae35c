"""BM25 end to end: the whole `lasagna benchmark run FOLDER --top-k 10 -o DIR` process
against a script doing the same work with bm25s (0.3, numba backend), in the same run.

Run from the repository root, with a Python that has the peer (kept out of lasagna's
environments: numba and bm25s are for this comparison only, the default install is
unchanged; a scratch environment takes a minute):

    uv venv /tmp/bm25s && uv pip install --python /tmp/bm25s/bin/python \\
        "bm25s==0.3.*" numba PyStemmer
    uv run python benchmarks/bm25_end_to_end.py --peer-python /tmp/bm25s/bin/python \\
        [--repeat 3] [--shapes zipf,long,msmarco]

The work, for both: read a BEIR folder (corpus.jsonl, queries.jsonl, qrels/test.tsv),
analyse the text the same way (lower case, \\w\\w+ tokens, Lucene's 33 English stopwords,
Snowball English stemming through PyStemmer), index it (BM25, Lucene's idf, k1 1.5, b 0.75),
retrieve the top 10 for every judged query, write the rankings and compute the metrics.
lasagna does what it always does: one task record per question (kill -9 safe), results.json
with nDCG@10, recall@10, MRR and hit@10, each with its seeded bootstrap interval, and the
manifest. The peer writes a TREC run file and the same four means (no intervals, no
records), retrieving with numba on one thread (`n_threads=1`) as lasagna uses one core.

Shapes (generated ones seeded, so identical every run; each query is 4 words of one
passage, its one relevant document):
- `zipf`: 100,000 passages of 40-80 words from a 50,000-word Zipf (s = 1.1) vocabulary,
  10,000 queries: the issue's row;
- `long`: 20,000 passages of 200-400 words from a 500,000-word Zipf (s = 1.0) vocabulary,
  10,000 queries: fewer, longer documents, a larger vocabulary;
- `msmarco`: the real BEIR subset in ../shared/data/datasets/beir/msmarco (5,000 passages,
  43 judged queries): mostly process start.
Each process is timed whole (interpreter start, imports, reading, writing), alternating
lasagna and the peer (the order flips each round), median of --repeat; peak RSS from the
kernel (wait4). Printed: the seconds, the ratio, nDCG@10 of both and how many queries got
the same top 10 from both, up to the order of equal scores (lasagna orders a tie by corpus
position, bm25s as its selection leaves it; bm25s scores in float32, lasagna in float64).

What the profile showed (cProfile and py-spy on the `zipf` shape, 24.5 s against the peer's
11.5 s, 2.1x): BM25 search 10.3 s (the most frequent Zipf words are in almost every passage,
and scattering a posting list of 100,000 entries costs 250 us a term), the bootstrap
intervals of results.json 2.4 s (four metrics, each 1,000 resamples of 10,000 values, each
drawing its own positions), writing 10,000 task files 2 to 5 s of file creation and fsync
(the event loop idle, waiting on the writer threads), the index build 3.3 s, reading the
folder 0.9 s, and 1.7 s at exit in repr: asyncio.run's Runner looks up SIGINT's handler,
and Python 3.11's `signal.getsignal` formats it (a partial holding the finished main task)
in full, the run's whole result included. The changes, the same rankings and figures:
(1) the terms in at least 1/16 of the documents keep a dense row too (added in 12 us
instead of scattered in 250 us), and a query whose postings cover the corpus takes its top
10 from the documents at or above a floor taken from a strided sample, instead of all the
scores; (2) `summarize_many`: the metrics of one length share each resample's positions
(the same stream as `random.choices`); (3) the records of tasks that call no model are
written 1,000 to an atomic batch file (`_writer.py`), resumed from as the per-task files
are; (4) `run_blocking` returns the result in a box repr does not open; (5) the index
build looks each word up in C (`map` over a word -> term id dict). What is left, about 8.5
s on `zipf`: the build 3.5 s (the regex and the look-ups; bm25s's tokenizer is Python as
well), the intervals 1.9 s (drawing 10 million positions, the floor of a stdlib
bootstrap that keeps its figures), search 1.3 s, encoding the records 0.6 s, reading,
imports and results.json the rest.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
MSMARCO = REPO.parent / "shared" / "data" / "datasets" / "beir" / "msmarco"
LASAGNA = Path(sys.executable).with_name("lasagna")

PEER = r"""
import json, math, sys
from pathlib import Path
import bm25s, Stemmer

folder, out = Path(sys.argv[1]), Path(sys.argv[2])
ids, texts = [], []
with open(folder / "corpus.jsonl", encoding="utf-8") as f:
    for line in f:
        if line.strip():
            row = json.loads(line)
            ids.append(row["_id"])
            texts.append(((row.get("title") or "") + " " + row["text"]).strip())
qrels = {}
with open(folder / "qrels" / "test.tsv", encoding="utf-8") as f:
    for line in f:
        q, d, s = line.rstrip("\n").split("\t")[:3]
        if q != "query-id" and int(s) > 0:
            qrels.setdefault(q, {})[d] = int(s)
qids, qtexts = [], []
with open(folder / "queries.jsonl", encoding="utf-8") as f:
    for line in f:
        if line.strip():
            row = json.loads(line)
            if row["_id"] in qrels:
                qids.append(row["_id"])
                qtexts.append(row["text"])
stem = Stemmer.Stemmer("english")
tokens = bm25s.tokenize(texts, stopwords="en", stemmer=stem, show_progress=False)
retriever = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
retriever.index(tokens, show_progress=False)
queries = bm25s.tokenize(qtexts, stopwords="en", stemmer=stem, show_progress=False,
                         return_ids=False)
docs, scores = retriever.retrieve(queries, k=10, backend_selection="numba",
                                  show_progress=False, n_threads=1)
total = {"ndcg@10": 0.0, "recall@10": 0.0, "mrr": 0.0, "hit@10": 0.0}
out.mkdir(parents=True, exist_ok=True)
with open(out / "run.trec", "w", encoding="utf-8") as f:
    for qi, q in enumerate(qids):
        ranked = []
        for rank, (d, s) in enumerate(zip(docs[qi].tolist(), scores[qi].tolist()), 1):
            if s <= 0:
                break
            ranked.append(ids[d])
            f.write(f"{q} Q0 {ids[d]} {rank} {s:.6f} bm25s\n")
        rel = qrels[q]
        ideal = sorted(rel.values(), reverse=True)[:10]
        idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
        dcg = sum(rel.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:10]))
        found = [i for i, d in enumerate(ranked) if d in rel]
        total["ndcg@10"] += dcg / idcg
        total["recall@10"] += len(found) / len(rel)
        total["mrr"] += 1 / (found[0] + 1) if found else 0.0
        total["hit@10"] += 1.0 if found else 0.0
metrics = {name: value / len(qids) for name, value in total.items()}
(out / "metrics.json").write_text(json.dumps(metrics))
print(json.dumps(metrics))
"""


def zipf_folder(
    folder: Path, passages: int, vocabulary: int, s: float, lengths: tuple[int, int]
) -> Path:
    """A BEIR folder of seeded Zipf passages (made once, kept in `folder`)."""
    import numpy as np

    if (folder / "qrels" / "test.tsv").is_file():
        return folder
    rng = np.random.default_rng(0)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words: set[str] = set()
    while len(words) < vocabulary:
        words.add("".join(rng.choice(letters, int(rng.integers(3, 10)))))
    vocab = sorted(words)
    rng.shuffle(vocab)
    p = 1.0 / np.arange(1, vocabulary + 1) ** s
    sizes = rng.integers(lengths[0], lengths[1] + 1, passages)
    drawn = rng.choice(vocabulary, size=int(sizes.sum()), p=p / p.sum())
    texts, start = [], 0
    for n in sizes.tolist():
        texts.append(" ".join(vocab[i] for i in drawn[start : start + n]))
        start += n
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    with (folder / "corpus.jsonl").open("w", encoding="utf-8") as f:
        for i, text in enumerate(texts):
            f.write(json.dumps({"_id": f"d{i}", "title": "", "text": text}) + "\n")
    pick = random.Random(0)
    with (
        (folder / "queries.jsonl").open("w", encoding="utf-8") as f,
        (folder / "qrels" / "test.tsv").open("w", encoding="utf-8") as g,
    ):
        g.write("query-id\tcorpus-id\tscore\n")
        for q, i in enumerate(pick.sample(range(passages), 10_000)):
            query = " ".join(pick.sample(texts[i].split(), 4))
            f.write(json.dumps({"_id": f"q{q}", "text": query}) + "\n")
            g.write(f"q{q}\td{i}\t1\n")
    return folder


def shape(name: str, scratch: Path) -> tuple[str, Path]:
    if name == "zipf":
        folder = zipf_folder(scratch / "zipf", 100_000, 50_000, 1.1, (40, 80))
        return "zipf: 100,000 passages of 40-80 words, 50,000-word vocabulary", folder
    if name == "long":
        folder = zipf_folder(scratch / "long", 20_000, 500_000, 1.0, (200, 400))
        return "long: 20,000 passages of 200-400 words, 500,000-word vocabulary", folder
    if name == "msmarco":
        if not MSMARCO.is_dir():
            raise SystemExit(f"needs {MSMARCO} (the shared data folder beside the repository)")
        return "msmarco: BEIR subset, 5,000 passages, 43 judged queries", MSMARCO
    raise SystemExit(f"unknown shape {name!r}; use zipf, long or msmarco")


def timed(command: list[str]) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (MB, from /usr/bin/time's wait4) and stdout of one process."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as report:
        started = time.perf_counter()
        done = subprocess.run(
            ["/usr/bin/time", "-f", "%M", "-o", report.name, *command],
            capture_output=True, text=True, env=env,
        )  # fmt: skip
        seconds = time.perf_counter() - started
        if done.returncode:
            raise SystemExit(
                f"{' '.join(command[:4])} ... exited {done.returncode}:\n{done.stderr}"
            )
        return seconds, int(report.read().strip().splitlines()[-1]) / 1024, done.stdout


Ranking = list[tuple[str, float]]


def lasagna_rankings(out: Path) -> dict[str, Ranking]:
    from lasagna_cli.engine.records._store import RunStore, iter_records

    return {
        str(r["task"]["item"]): [(doc, score) for doc, score in r["retrieval"]["ranking"]][:10]
        for _, r in iter_records(RunStore(out))
    }


def peer_rankings(out: Path) -> dict[str, Ranking]:
    found: dict[str, Ranking] = {}
    for line in (out / "run.trec").read_text(encoding="utf-8").splitlines():
        q, _, doc, _, score, _ = line.split()
        found.setdefault(q, []).append((doc, float(score)))
    return found


def same_up_to_ties(mine: Ranking, theirs: Ranking) -> bool:
    """Whether the peer's top k is lasagna's but for the order inside lasagna's ties (equal
    float64 scores); the documents of the last group are not compared, since the cut at k
    may take different ones of a tie that goes on past it."""
    if len(mine) != len(theirs):
        return False
    start = 0
    for end in range(1, len(mine) + 1):
        if end == len(mine) or mine[end][1] != mine[start][1]:
            group = slice(start, end)
            if end < len(mine) and {d for d, _ in mine[group]} != {d for d, _ in theirs[group]}:
                return False
            start = end
    return True


def measure(label: str, folder: Path, args: argparse.Namespace, scratch: Path) -> None:
    ours: list[tuple[float, float]] = []
    peers: list[tuple[float, float]] = []
    last: dict[str, Any] = {}
    for round_ in range(args.repeat):
        out, peer_out = scratch / f"run-{round_}", scratch / f"peer-{round_}"
        for path in (out, peer_out):
            subprocess.run(["rm", "-rf", str(path)], check=True)
        lasagna = [str(LASAGNA), "benchmark", "run", str(folder), "--top-k", "10", "-o", str(out)]
        peer = [args.peer_python, "-c", PEER, str(folder), str(peer_out)]
        order = [("ours", lasagna), ("peer", peer)]
        for side, command in order if round_ % 2 == 0 else order[::-1]:
            seconds, rss, stdout = timed(command)
            (ours if side == "ours" else peers).append((seconds, rss))
            if side == "peer":
                last["peer"] = json.loads(stdout.strip().splitlines()[-1])
        results = json.loads((out / "results.json").read_text(encoding="utf-8"))
        last["ours"] = results["results"][0]["metrics"]["retrieval"]
        last["out"], last["peer_out"] = out, peer_out
    ours_s = statistics.median(s for s, _ in ours)
    peer_s = statistics.median(s for s, _ in peers)
    mine, theirs = lasagna_rankings(last["out"]), peer_rankings(last["peer_out"])
    same = sum(1 for q, r in mine.items() if [d for d, _ in theirs.get(q, [])] == [d for d, _ in r])
    tied = sum(1 for q, r in mine.items() if same_up_to_ties(r, theirs.get(q, [])))
    print(f"== {label}")
    print(
        f"  lasagna benchmark run: {ours_s:.2f} s (runs {', '.join(f'{s:.2f}' for s, _ in ours)})"
        f", peak RSS {max(r for _, r in ours):.0f} MB, nDCG@10 "
        f"{last['ours']['ndcg@10']['mean']:.4f}"
    )
    print(
        f"  bm25s 0.3 (numba):     {peer_s:.2f} s (runs {', '.join(f'{s:.2f}' for s, _ in peers)})"
        f", peak RSS {max(r for _, r in peers):.0f} MB, nDCG@10 {last['peer']['ndcg@10']:.4f}"
    )
    print(
        f"  same top 10 for {tied:,} of {len(mine):,} queries up to the order of equal scores "
        f"({same:,} in the same order: lasagna orders a tie by corpus position)"
    )
    print(f"  ratio lasagna / bm25s: {ours_s / peer_s:.2f}x (goal <= 1.0x)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--peer-python", required=True, help="a Python with bm25s, numba")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--shapes", default="zipf,long,msmarco")
    parser.add_argument(
        "--data", type=Path, default=Path(tempfile.gettempdir()) / "lasagna-bm25-e2e",
        help="where the generated folders are kept between runs",
    )  # fmt: skip
    args = parser.parse_args()
    check = subprocess.run(
        [args.peer_python, "-c", "import bm25s, numba, Stemmer; print(bm25s.__version__)"],
        capture_output=True, text=True,
    )  # fmt: skip
    if check.returncode:
        raise SystemExit(f"{args.peer_python} lacks bm25s, numba or PyStemmer:\n{check.stderr}")
    print(f"peer: bm25s {check.stdout.strip()} ({args.peer_python})")
    args.data.mkdir(parents=True, exist_ok=True)
    for name in args.shapes.split(","):
        label, folder = shape(name, args.data)
        with tempfile.TemporaryDirectory(prefix="bm25-e2e-") as scratch:
            measure(label, folder, args, Path(scratch))


if __name__ == "__main__":
    main()
