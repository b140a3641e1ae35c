"""How close `lasagna judge grade` comes to the ideal throughput of a model server, and
whether lasagna-judge survives a flaky one.

Run from the repository root:

    uv run python benchmarks/judge_throughput.py

Against lasagna_judge.testing.FakeLLMServer (real HTTP on 127.0.0.1, in a child process of
its own) answering every request after 0.5 s, a model's latency (the project measures its
goals at 0.3-10 s: a near-instant server measures only the client's CPU):

1. The whole `lasagna judge grade INPUT --concurrency 50` process, interpreter start and
   imports included, on 2,000 answers to grade, in two shapes: `short` (a one-line
   question, two short references, a one-sentence answer: a 0.6 KB prompt) and `long`
   (answers of 120-200 words as a RAG generator writes them, three sentence-long
   references: a 2.5 KB prompt). The ideal is 2,000 x 0.5 / 50 = 20 s; the script prints
   the median wall time over the ideal (goal: at most 1.2x on both shapes), when the first
   request reached the server, and the same requests sent by a bare aiohttp client in a
   process of its own (the floor for any Python client on this machine, start included).
   Each run gets a fresh response cache (the default: on), as a first run does.
2. grade_batch in-process, 1,000 gradings at 50 ms with 20% of the replies a 429
   (Retry-After 0.05 s) or a 500: every item must still end graded, and the calls made
   must stay under 1.5x the items.

Where the time goes: every call goes through the openai SDK on httpx2, about 2 ms of CPU a
call in the client's thread (the SDK building the request and reading the reply a third,
httpcore's pool, which scans its connections for every request, and h11 the most of the
rest). The fixed latency makes the 50 replies of a round arrive together, so that CPU is
spent in bursts while nothing is in flight: the gap to the floor is those bursts. Kept:
the request's schema and cache-key parts encoded once per class, the cache writes of one
event loop turn committed together, chat completions sent with the client's own `post`
(its typed `create` walks every parameter, 0.6 ms a call). The figures of each day are in
lasagna-cli's CHANGELOG (Measured).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ITEMS = 2_000
LATENCY = 0.5
CONCURRENCY = 50
GOAL = 1.2
FAULT_ITEMS = 1_000
FAULT_LATENCY = 0.05
FAULT_RATE = 0.20
GRADE_REPLY = json.dumps({"reasoning": "The answer states the same fact.", "score": 4})
LASAGNA = Path(sys.executable).with_name("lasagna")


# -- the inputs -------------------------------------------------------------------------------


def short_rows(count: int, rng: random.Random) -> list[dict[str, Any]]:
    del rng
    return [
        {
            "id": f"q{i}",
            "question": f"In which year was building number {i} finished?",
            "answers": [f"{1900 + i % 120}", f"in {1900 + i % 120}"],
            "prediction": f"It was finished in {1900 + i % 120}.",
        }
        for i in range(count)
    ]


def long_rows(count: int, rng: random.Random) -> list[dict[str, Any]]:
    syllables = ["ka", "lo", "ri", "ten", "mar", "vo", "sel", "un", "pra", "di", "os", "ve"]
    vocab = ["".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))) for _ in range(5000)]

    def sentence(words: int) -> str:
        return " ".join(rng.choice(vocab) for _ in range(words)).capitalize() + "."

    rows = []
    for i in range(count):
        answer = " ".join(sentence(rng.randint(12, 25)) for _ in range(rng.randint(7, 10)))
        rows.append(
            {
                "id": f"q{i}",
                "question": f"{sentence(rng.randint(10, 20))[:-1]}?",
                "answers": [sentence(rng.randint(10, 25)) for _ in range(3)],
                "prediction": answer,
            }
        )
    return rows


SHAPES = {"short": short_rows, "long": long_rows}


def write_input(path: Path, rows: list[dict[str, Any]]) -> float:
    text = "".join(json.dumps(row) + "\n" for row in rows)
    path.write_text(text, encoding="utf-8")
    return len(text) / len(rows)


# -- the server, in a child process -----------------------------------------------------------


def serve_forever(latency: float, fault_rate: float, seed: int) -> None:
    """Child process mode: print the port; when stdin closes, the call count, the most
    requests in flight and the first and last arrival times (time.monotonic)."""
    from lasagna_judge.testing import FakeLLMServer, Fault

    rng = random.Random(seed)

    def reply(request: dict[str, Any]) -> str | Fault:
        draw = rng.random()
        if draw < fault_rate / 2:
            return Fault(status=429, retry_after=0.05)
        if draw < fault_rate:
            return Fault(status=500)
        return GRADE_REPLY

    with FakeLLMServer(reply=reply if fault_rate else GRADE_REPLY, latency=latency) as server:
        print(server.port, flush=True)
        sys.stdin.read()
        times = server.times
        stats = {
            "calls": server.calls,
            "max_in_flight": server.max_in_flight,
            "first": times[0] if times else None,
            "last": times[-1] if times else None,
        }
        print(json.dumps(stats), flush=True)


class Server:
    def __init__(self, latency: float, fault_rate: float = 0.0, seed: int = 0) -> None:
        self._args = [str(latency), str(fault_rate), str(seed)]
        self.base_url = ""
        self.stats: dict[str, Any] = {}

    def __enter__(self) -> Server:
        self._child = subprocess.Popen(
            [sys.executable, __file__, "--serve", *self._args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._child.stdout is not None
        self.base_url = f"http://127.0.0.1:{int(self._child.stdout.readline())}/v1"
        return self

    def __exit__(self, *exc_info: object) -> None:
        out, _ = self._child.communicate(timeout=30)
        self.stats = json.loads(out.strip().splitlines()[-1])


# -- 1. the command ---------------------------------------------------------------------------

# As installed packages run: with their bytecode cached (a sandbox's PYTHONDONTWRITEBYTECODE
# would make every run compile every module again).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """Start time (time.monotonic), wall seconds and CPU seconds of one whole process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"{' '.join(command[:4])} ... exited {done.returncode}:\n{done.stderr}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return start, wall, cpu


def grade_once(data: Path, folder: Path) -> dict[str, float]:
    with tempfile.TemporaryDirectory(dir=folder) as cache, Server(LATENCY) as server:
        command = [
            str(LASAGNA), "judge", "grade", str(data), "--model", "openai/fake-judge",
            "--base-url", server.base_url, "--concurrency", str(CONCURRENCY),
            "--out", str(Path(cache) / "graded.jsonl"),
        ]  # fmt: skip
        start, wall, cpu = timed(command, {**ENV, "LASAGNA_CACHE_DIR": cache})
        graded = sum(1 for _ in (Path(cache) / "graded.jsonl").open())
    if graded != ITEMS or server.stats["calls"] != ITEMS:
        raise SystemExit(f"expected {ITEMS} graded rows and calls, got {graded}, {server.stats}")
    return {
        "wall": wall,
        "cpu": cpu,
        "first": server.stats["first"] - start,
        "tail": start + wall - server.stats["last"] - LATENCY,
    }


_BARE = """
import asyncio, json, sys
import aiohttp

async def main(url, n, concurrency, body):
    semaphore = asyncio.Semaphore(concurrency)
    connector = aiohttp.TCPConnector(limit=concurrency)
    headers = {"Content-Type": "application/json"}
    async with aiohttp.ClientSession(connector=connector) as session:
        async def one():
            async with semaphore, session.post(url, data=body, headers=headers) as response:
                json.loads(await response.read())
        await asyncio.gather(*(one() for _ in range(n)))

asyncio.run(main(sys.argv[1] + "/chat/completions", int(sys.argv[2]), int(sys.argv[3]),
                 sys.argv[4].encode()))
"""


def bare_once(prompt: str) -> float:
    body = json.dumps({"model": "fake", "messages": [{"role": "user", "content": prompt}]})
    with Server(LATENCY) as server:
        command = [sys.executable, "-c", _BARE, server.base_url, str(ITEMS), str(CONCURRENCY), body]
        return timed(command, ENV)[1]


def command_shapes(repeat: int, seed: int) -> bool:
    ideal = ITEMS * LATENCY / CONCURRENCY
    print(
        f"1. `lasagna judge grade`, {ITEMS:,} gradings, {LATENCY * 1000:.0f} ms per reply, "
        f"--concurrency {CONCURRENCY}, whole process; ideal {ideal:.1f} s; median of {repeat}"
    )
    met = True
    with tempfile.TemporaryDirectory(prefix="judge-bench-") as tmp:
        for shape, make in SHAPES.items():
            rows = make(ITEMS, random.Random(seed))
            data = Path(tmp) / f"{shape}.jsonl"
            size = write_input(data, rows)
            runs = []
            floors = []
            for _ in range(repeat):  # alternating, so that a passing load hits both alike
                runs.append(grade_once(data, Path(tmp)))
                floors.append(bare_once(rows[0]["prediction"] * 4))
            wall = statistics.median(r["wall"] for r in runs)
            first = statistics.median(r["first"] for r in runs)
            floor = statistics.median(floors)
            ratio = wall / ideal
            met &= ratio <= GOAL
            print(
                f"  {shape:<6} ({size:,.0f} bytes a row): {wall:.2f} s = {ratio:.2f}x the ideal "
                f"(goal <= {GOAL}x: {'met' if ratio <= GOAL else 'MISSED'}); runs "
                + ", ".join(f"{r['wall']:.2f}" for r in runs)
                + f"\n         first request after {first:.2f} s, "
                f"{statistics.median(r['tail'] for r in runs):.2f} s from the last reply to "
                f"the end, CPU {statistics.median(r['cpu'] for r in runs):.2f} s; bare aiohttp "
                f"process {floor:.2f} s = {floor / ideal:.2f}x the ideal"
            )
    return met


# -- 2. faults, in-process --------------------------------------------------------------------


async def grade_flaky(base_url: str, seed: int) -> dict[str, Any]:
    from lasagna_judge import RetryPolicy, grade_batch, load_rubric, make_llm

    llm = make_llm(
        "openai/fake-judge",
        base_url=base_url,
        api_key="benchmark",
        cache=False,
        concurrency=CONCURRENCY,
        max_retries=6,
        retry_policy=RetryPolicy(max_retries=6, base_delay=0.05, max_delay=1.0),
        seed=seed,
    )
    items = [
        {"question": r["question"], "references": r["answers"], "prediction": r["prediction"]}
        for r in short_rows(FAULT_ITEMS, random.Random(seed))
    ]
    async with llm:
        start = time.perf_counter()
        grades = await grade_batch(llm, load_rubric("binary"), items, concurrency=CONCURRENCY)
        wall = time.perf_counter() - start
    statuses: dict[str, int] = {}
    for grade in grades:
        statuses[grade.status] = statuses.get(grade.status, 0) + 1
    return {
        "wall": wall,
        "calls": llm.calls_made,
        "statuses": statuses,
        "scores_ok": all(g.score == 4 for g in grades if g.status == "ok"),
    }


def fault_run(seed: int) -> bool:
    with Server(FAULT_LATENCY, FAULT_RATE, seed) as server:
        flaky = asyncio.run(grade_flaky(server.base_url, seed))
    graded = flaky["statuses"].get("ok", 0)
    call_ratio = flaky["calls"] / FAULT_ITEMS
    ok = graded == FAULT_ITEMS and call_ratio < 1.5 and flaky["scores_ok"]
    print(
        f"\n2. grade_batch, {FAULT_ITEMS:,} gradings at {FAULT_LATENCY * 1000:.0f} ms with "
        f"{FAULT_RATE:.0%} 429/500: {flaky['wall']:.2f} s, graded {graded}/{FAULT_ITEMS} "
        f"(goal: all), calls {flaky['calls']} = {call_ratio:.2f}x items (goal < 1.50x): "
        f"{'met' if ok else 'MISSED'}"
    )
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs of each shape (median)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--serve", nargs=3, metavar="X", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve_forever(float(args.serve[0]), float(args.serve[1]), int(args.serve[2]))
        return 0
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    met = command_shapes(args.repeat, args.seed)
    faults = fault_run(args.seed)
    return 0 if met and faults else 1


if __name__ == "__main__":
    sys.exit(main())
