"""nDCG@10 of BM25, WordLlama dense and hybrid (reciprocal rank fusion, k = 60) on the BEIR
subsets in ../shared/data/datasets/beir that hold a corpus (msmarco, dbpedia, arcd), side by
side: docs/performance.md's table, made by one `lasagna benchmark run` of a sweep file per subset,
read back from results.json (mean and 95% bootstrap interval over the queries).

    uv run python benchmarks/beir_dense.py [--beir ../shared/data/datasets/beir] [--markdown]

The subsets are BEIR's own queries, qrels and corpora cut to a few thousand documents, so
the figures are comparable between the three retrievers here, not with BEIR's published
full-corpus numbers (a smaller corpus is an easier search). Nothing is downloaded: the
embedder is the WordLlama model inside its wheel; vectors are embedded once and kept in a
temporary cache folder for the run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUBSETS = ("msmarco", "dbpedia", "arcd")
RETRIEVERS = ("bm25", "dense", "hybrid")


def measure(folder: Path, work: Path, env: dict[str, str]) -> dict[str, tuple[float, float, float]]:
    sweep = work / f"{folder.name}.yaml"
    setups = "".join(f"  - {{name: {r}, retriever: {{kind: {r}}}}}\n" for r in RETRIEVERS)
    sweep.write_text(f"benchmarks:\n  - path: {folder}\nsetups:\n{setups}tracks: [retrieval]\n")
    out = work / folder.name
    lasagna = Path(sys.executable).with_name("lasagna")
    done = subprocess.run(
        # arcd's subset judges queries and documents it does not hold: those are dropped.
        [
            str(lasagna),
            "benchmark",
            "run",
            str(sweep),
            "-o",
            str(out),
            "--format",
            "json",
            "--drop-unknown-judgments",
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{folder.name}: lasagna exited {done.returncode}: {done.stderr[-800:]}")
    figures = {}
    for result in json.loads((out / "results.json").read_text())["results"]:
        ndcg = result["metrics"]["retrieval"]["ndcg@10"]
        figures[result["setup"]["name"]] = (ndcg["mean"], ndcg["ci95_low"], ndcg["ci95_high"])
        figures["queries"] = (ndcg["count"], 0.0, 0.0)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--beir", type=Path, default=ROOT.parent / "shared/data/datasets/beir")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table only")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        env = {**os.environ, "LASAGNA_CACHE_DIR": str(work / "cache")}
        for name in SUBSETS:
            folder = args.beir / name
            documents = sum(1 for _ in (folder / "corpus.jsonl").open(encoding="utf-8"))
            figures = measure(folder, work, env)
            rows.append((name, documents, int(figures.pop("queries")[0]), figures))

    def shown(value: tuple[float, float, float]) -> str:
        mean, low, high = value
        return f"{mean:.3f} [{low:.3f}, {high:.3f}]"

    print("| subset | documents | queries | BM25 | WordLlama dense | hybrid (RRF) |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, documents, queries, figures in rows:
        cells = " | ".join(shown(figures[r]) for r in RETRIEVERS)
        print(f"| {name} | {documents:,} | {queries} | {cells} |")
    if not args.markdown:
        print(
            "\nnDCG@10, mean [95% bootstrap interval] over the queries scored (those with "
            "judgments in the subset's corpus)."
        )


if __name__ == "__main__":
    main()
