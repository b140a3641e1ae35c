"""How close lasagna-judge comes to the ideal throughput of a model server, and whether
it survives a flaky one.

Run from the repository root:

    uv run python benchmarks/judge_throughput.py

Against lasagna_judge.testing.FakeLLMServer (real HTTP on 127.0.0.1) answering every
request after 50 ms:

1. 1,000 gradings (grade_batch, the binary rubric, structured output through instructor's
   TOOLS mode) at concurrency 50. The ideal is 1,000 x 0.05 / 50 = 1.0 s; the script
   prints the wall time over the ideal (goal: at most 1.3x). For scale it also times the
   same 1,000 requests sent with bare aiohttp (no SDK, no instructor, no validation),
   the floor for any Python client on this machine, and grade_batch's time over that floor
   (the floor rises when other processes load the machine; lasagna's share does not).
2. The same with 20% of the replies a 429 (Retry-After 0.05 s) or a 500: every item must
   still end graded, and the calls made must stay under 1.5x the items.

By default the fake server runs in a child process, so that its work does not share the
client's interpreter lock (--server thread keeps it in this process, as tests do).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import subprocess
import sys
import time
from typing import Any

from lasagna_judge import RetryPolicy, grade_batch, load_rubric, make_llm
from lasagna_judge.testing import FakeLLMServer, Fault

ITEMS = 1_000
LATENCY = 0.05
CONCURRENCY = 50
FAULT_RATE = 0.20
GRADE_REPLY = json.dumps({"reasoning": "The answer states the same fact.", "score": 4})


def make_items(count: int) -> list[dict[str, Any]]:
    return [
        {
            "question": f"In which year was building number {i} finished?",
            "references": [f"{1900 + i % 120}", f"in {1900 + i % 120}"],
            "prediction": f"It was finished in {1900 + i % 120}.",
        }
        for i in range(count)
    ]


def make_reply(fault_rate: float, seed: int) -> Any:
    """Grade replies; with fault_rate > 0, that share of requests (seeded) fails."""
    if fault_rate <= 0:
        return GRADE_REPLY
    rng = random.Random(seed)

    def reply(request: dict[str, Any]) -> str | Fault:
        draw = rng.random()
        if draw < fault_rate / 2:
            return Fault(status=429, retry_after=0.05)
        if draw < fault_rate:
            return Fault(status=500)
        return GRADE_REPLY

    return reply


# -- the server, in this process or a child ---------------------------------------------------


def serve_forever(fault_rate: float, seed: int) -> None:
    """Child process mode: print the port and the call count when stdin closes."""
    with FakeLLMServer(reply=make_reply(fault_rate, seed), latency=LATENCY) as server:
        print(server.port, flush=True)
        sys.stdin.read()
        print(json.dumps({"calls": server.calls, "max_in_flight": server.max_in_flight}))


class Server:
    def __init__(self, mode: str, fault_rate: float, seed: int) -> None:
        self.mode = mode
        self._fault_rate, self._seed = fault_rate, seed
        self._thread_server: FakeLLMServer | None = None
        self._child: subprocess.Popen[str] | None = None
        self.base_url = ""
        self.stats: dict[str, int] = {}

    def __enter__(self) -> Server:
        if self.mode == "thread":
            server = FakeLLMServer(reply=make_reply(self._fault_rate, self._seed), latency=LATENCY)
            server.start()
            self._thread_server = server
            self.base_url = server.base_url
        else:
            self._child = subprocess.Popen(
                [sys.executable, __file__, "--serve", str(self._fault_rate), str(self._seed)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            assert self._child.stdout is not None
            port = int(self._child.stdout.readline())
            self.base_url = f"http://127.0.0.1:{port}/v1"
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._thread_server is not None:
            self.stats = {
                "calls": self._thread_server.calls,
                "max_in_flight": self._thread_server.max_in_flight,
            }
            self._thread_server.stop()
        if self._child is not None:
            out, _ = self._child.communicate(timeout=30)
            self.stats = json.loads(out.strip().splitlines()[-1])


# -- the measurements -------------------------------------------------------------------------


async def bare_aiohttp(base_url: str, count: int, concurrency: int) -> float:
    """The floor: the same requests with no SDK, no instructor, no validation."""
    import aiohttp

    body = json.dumps(
        {"model": "fake", "messages": [{"role": "user", "content": "grade"}], "temperature": 0}
    )
    semaphore = asyncio.Semaphore(concurrency)
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one() -> None:
            async with (
                semaphore,
                session.post(
                    f"{base_url}/chat/completions",
                    data=body,
                    headers={"Content-Type": "application/json"},
                ) as response,
            ):
                json.loads(await response.read())

        await one()  # open a connection before timing
        start = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(count)))
        return time.perf_counter() - start


async def grade_all(base_url: str, items: list[dict[str, Any]], seed: int) -> dict[str, Any]:
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
    rubric = load_rubric("binary")
    async with llm:
        await grade_batch(llm, rubric, items[:1], concurrency=1)  # warm up imports, a connection
        warm_calls = llm.calls_made
        cpu = time.process_time()
        start = time.perf_counter()
        grades = await grade_batch(llm, rubric, items, concurrency=CONCURRENCY)
        wall = time.perf_counter() - start
        cpu = time.process_time() - cpu
        calls = llm.calls_made - warm_calls
    statuses: dict[str, int] = {}
    for grade in grades:
        statuses[grade.status] = statuses.get(grade.status, 0) + 1
    return {
        "wall": wall,
        "cpu": cpu,
        "calls": calls,
        "statuses": statuses,
        "scores_ok": all(g.score == 4 for g in grades if g.status == "ok"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", choices=("process", "thread"), default="process")
    parser.add_argument("--items", type=int, default=ITEMS)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--serve", nargs=2, metavar=("FAULT_RATE", "SEED"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve_forever(float(args.serve[0]), int(args.serve[1]))
        return 0

    items = make_items(args.items)
    ideal = args.items * LATENCY / CONCURRENCY
    print(
        f"{args.items} gradings, {LATENCY * 1000:.0f} ms per reply, concurrency {CONCURRENCY}, "
        f"fake server in a {args.server}; ideal {ideal:.2f} s"
    )

    with Server(args.server, 0.0, args.seed) as server:
        floor = asyncio.run(bare_aiohttp(server.base_url, args.items, CONCURRENCY))
        clean = asyncio.run(grade_all(server.base_url, items, args.seed))
    print(f"  bare aiohttp requests  {floor:6.2f} s  {floor / ideal:5.2f}x ideal (the floor)")
    ratio = clean["wall"] / ideal
    print(
        f"  grade_batch            {clean['wall']:6.2f} s  {ratio:5.2f}x ideal   "
        f"(goal <= 1.30x; client CPU {clean['cpu'] / args.items * 1000:.2f} ms per grading; "
        f"{clean['calls']} calls; statuses {clean['statuses']}; "
        f"max in flight at the server {server.stats.get('max_in_flight')})"
    )
    print(
        f"  grade_batch over the bare-aiohttp floor of this run: {clean['wall'] / floor:.2f}x "
        "(what lasagna adds; the floor itself rises when other processes load the machine)"
    )

    with Server(args.server, FAULT_RATE, args.seed) as server:
        flaky = asyncio.run(grade_all(server.base_url, items, args.seed))
    call_ratio = flaky["calls"] / args.items
    graded = flaky["statuses"].get("ok", 0)
    print(
        f"  with {FAULT_RATE:.0%} 429/500     {flaky['wall']:6.2f} s  "
        f"{flaky['wall'] / ideal:5.2f}x ideal   graded {graded}/{args.items} (goal: all), "
        f"calls {flaky['calls']} = "
        f"{call_ratio:.2f}x items (goal < 1.50x); statuses {flaky['statuses']}"
    )
    ok = (
        clean["statuses"].get("ok", 0) == args.items
        and graded == args.items
        and call_ratio < 1.5
        and clean["scores_ok"]
        and flaky["scores_ok"]
    )
    print(
        f"  throughput {'meets' if ratio <= 1.3 else 'misses'} the 1.3x goal; "
        f"fault run {'meets' if graded == args.items and call_ratio < 1.5 else 'misses'} its goals"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
