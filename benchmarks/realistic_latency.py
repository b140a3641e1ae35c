"""What lasagna adds to a run that waits for a model: generations at a fake server that
answers in 0.3 s, against the run's own bound (tasks / concurrency x latency).

    uv run python benchmarks/realistic_latency.py [--tasks 1000] [--concurrency 32]

On two shapes: `short` (one 8-word passage a question) and `long` (five 300-word passages
a question, so each prompt is about 2,000 tokens). For each, one `lasagna benchmark run
--generator` in its own process (start, retrieval, calls, records, results.json), timed
whole, with the CPU it used. Goal: within 1.3x of the bound (the rest is the command's
start, the index and the tail of the last calls) on both shapes.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lasagna_judge.testing import FakeLLMServer

LATENCY = 0.3
WORDS = "pasta sauce oven layer cheese flour egg water salt pepper basil tomato".split()  # noqa: SIM905


def make_data(path: Path, n: int, shape: str) -> None:
    rng = random.Random(7)
    passages, words = (1, 8) if shape == "short" else (5, 300)
    rows = [
        {
            "id": f"q{i}",
            "question": f"what is item {i}?",
            "answer": "x",
            "contexts": [
                f"item {i} " + " ".join(rng.choice(WORDS) for _ in range(words))
                for _ in range(passages)
            ],
        }
        for i in range(n)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def run(n: int, concurrency: int, shape: str) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "questions.jsonl"
        make_data(data, n, shape)
        with FakeLLMServer(reply=lambda request: "x", latency=LATENCY) as server:
            env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "k",
                   "LASAGNA_CACHE_DIR": str(Path(tmp) / "cache")}  # fmt: skip
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            subprocess.run(
                [str(Path(sys.executable).parent / "lasagna"), "benchmark", "run", str(data),
                 "--generator", "openai/fake", "--tracks", "retrieval,generation",
                 "--concurrency", str(concurrency), "-o", str(Path(tmp) / "out")],
                env=env, check=True, capture_output=True,
            )  # fmt: skip
            wall = time.perf_counter() - started
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    bound = args.tasks / args.concurrency * LATENCY
    met = True
    for shape in ("short", "long"):
        wall, cpu = run(args.tasks, args.concurrency, shape)
        ratio = wall / bound
        ok = ratio <= 1.3
        met &= ok
        print(f"{shape}: {args.tasks:,} generations at {LATENCY} s, concurrency "
              f"{args.concurrency}: {wall:.2f} s, bound {bound:.2f} s: {ratio:.2f}x "
              f"(goal <= 1.3x: {'met' if ok else 'NOT met'}); CPU {cpu:.2f} s")  # fmt: skip
    raise SystemExit(0 if met else 1)


if __name__ == "__main__":
    main()
