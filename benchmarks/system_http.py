"""How much `lasagna benchmark run --system http://...` adds to a system's own latency, and
what a flaky system costs.

Run from the repository root:

    uv run python benchmarks/system_http.py

A system on 127.0.0.1 (a child process: examples/systems' contract, standard library
ThreadingHTTPServer) answers each question after LATENCY seconds with an answer and a
ranking of passage texts. Two shapes of data: `short` (one-line questions, answers and
passages; a ranking of 2) and `long` (RAG-sized: 150-word passages, 40-word answers, a
ranking of 10, so 10 KB a reply to map back onto the corpus and score). For 1,000
questions at --concurrency 32, on each shape:

1. the baseline: the same 1,000 POSTs with bare aiohttp at the same concurrency, nothing
   scored or written (the floor for any client on this machine);
2. `lasagna benchmark run DATA --system URL`: requests, retries, the ranking mapped to the
   corpus, EM/F1 and ranking metrics, one atomic file per question, results.json;
3. the same with 20% of first attempts a 503 (Retry-After: 0): every question must still
   be scored, each 503 costing one more request (about 1.2 requests per question).

Printed: wall times and the ratios over the baseline (goal: lasagna within 1.5x of bare
aiohttp when the system takes 50 ms a question, on both shapes).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUESTIONS = 1_000
CONCURRENCY = 32
GOAL = 1.5

SERVER = r"""
import json, random, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
latency, fail_rate, top = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
passages, answers = json.loads(sys.stdin.read())
seen, lock, counts = set(), threading.Lock(), {"requests": 0}
class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        data = json.dumps(counts).encode()
        self.send_response(200); self.send_header("Content-Length", str(len(data)))
        self.end_headers(); self.wfile.write(data)
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with lock:
            counts["requests"] += 1
            first = body["id"] not in seen
            seen.add(body["id"])
        time.sleep(latency)
        if first and random.random() < fail_rate:
            status, reply = 503, {"error": "busy"}
        else:
            i = int(body["id"][1:])
            ranking = [passages[(i + k) % len(passages)] for k in range(top)]
            status, reply = 200, {"answer": answers[i], "retrieved": ranking}
        data = json.dumps(reply).encode()
        self.send_response(status); self.send_header("Content-Type", "application/json")
        if status == 503: self.send_header("Retry-After", "0")
        self.send_header("Content-Length", str(len(data))); self.end_headers()
        self.wfile.write(data)
    def log_message(self, *a): pass
class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256
server = Server(("127.0.0.1", 0), Handler)
print(server.server_port, flush=True)
server.serve_forever()
"""


SHAPES = {"short": (0, 0, 2), "long": (150, 40, 10)}
"""shape -> (words added to a passage, words added to an answer, passages a ranking)"""
FILLER = (
    "the harbour council met in spring to vote on the new quay its fees and the ferry "
    "timetable while the fishermen asked for a longer season and better lights"
)


def words(n: int, i: int) -> str:
    """`n` words of filler from position `i` on, after a space (none for n = 0)."""
    filler = FILLER.split(" ")
    return "".join(" " + filler[(i + k) % len(filler)] for k in range(n))


def make_data(folder: Path, n: int, shape: str) -> tuple[Path, list[str], list[str]]:
    passage_words, answer_words, _ = SHAPES[shape]
    answers = [f"answer {i}{words(answer_words, i)}" for i in range(n)]
    passages = [
        f"Passage {i} says that the answer to question {i} is {answers[i]}."
        f"{words(passage_words, 7 * i)}"
        for i in range(n)
    ]
    path = folder / f"questions-{shape}.jsonl"
    with path.open("w", encoding="utf-8") as f:
        for i in range(n):
            f.write(
                json.dumps(
                    {
                        "id": f"q{i}",
                        "question": f"What is the answer to question {i}?",
                        "answer": answers[i],
                        "contexts": [passages[i]],
                    }
                )
                + "\n"
            )
    return path, passages, answers


def start_server(
    passages: list[str], answers: list[str], top: int, latency: float, fail_rate: float
) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(latency), str(fail_rate), str(top)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(json.dumps([passages, answers]))
    process.stdin.close()
    port = int(process.stdout.readline())
    return process, f"http://127.0.0.1:{port}/answer"


async def bare_client(url: str, n: int, concurrency: int) -> float:
    import aiohttp

    queue = iter(range(n))
    started = time.perf_counter()
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:

        async def worker() -> None:
            for i in queue:
                body = {
                    "question": f"What is the answer to question {i}?",
                    "id": f"q{i}",
                    "top_k": 10,
                }
                async with session.post(url, json=body) as response:
                    await response.json()

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - started


def lasagna_run(
    data: Path, url: str, out: Path, concurrency: int
) -> tuple[float, dict[str, object]]:
    started = time.perf_counter()
    done = subprocess.run(
        [
            str(Path(sys.executable).parent / "lasagna"),
            "benchmark",
            "run",
            str(data),
            "--system",
            url,
            "--concurrency",
            str(concurrency),
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"lasagna run failed ({done.returncode}): {done.stderr[-2000:]}")
    (result,) = json.loads((out / "results.json").read_text())["results"]
    return seconds, result


def requests_made(url: str) -> int:
    import urllib.request

    with urllib.request.urlopen(url.rsplit("/", 1)[0] + "/counts") as reply:
        return int(json.loads(reply.read())["requests"])


def measure(shape: str, folder: Path, args: argparse.Namespace) -> float:
    """Both runs of `shape`, printed; the steady run's ratio to the bare client."""
    n, c = args.questions, args.concurrency
    data, passages, answers = make_data(folder, n, shape)
    top = SHAPES[shape][2]
    print(f"\n== {shape}: {len(passages[0].split())}-word passages, rankings of {top}")
    ratio = 0.0
    for label, fail_rate in (("steady", 0.0), ("20% 503 on first attempts", 0.2)):
        server, url = start_server(passages, answers, top, args.latency, fail_rate)
        try:
            baseline = asyncio.run(bare_client(url, n, c)) if fail_rate == 0 else None
            before = requests_made(url)
            seconds, result = lasagna_run(data, url, folder / f"run-{shape}-{fail_rate}", c)
            made = requests_made(url) - before
        finally:
            server.terminate()
            server.wait()
        counts = result["counts"]
        print(f"{label}:")
        if baseline is not None:
            print(f"  bare aiohttp (baseline): {baseline:.2f} s, {n / baseline:,.0f} requests/s")
        print(
            f"  lasagna benchmark run:   {seconds:.2f} s (process start, data, scoring, "
            f"{n:,} task files and results.json included), {n / seconds:,.0f} questions/s"
        )
        if baseline is not None:
            ratio = seconds / baseline
            verdict = "met" if ratio <= GOAL else "MISSED"
            print(f"  lasagna / baseline:      {ratio:.2f}x (goal <= {GOAL}x: {verdict})")
        print(
            f"  scored {counts['scored']:,} of {counts['questions']:,}, failed "  # type: ignore[index]
            f"{counts['failed']}; {made:,} requests ({made / n:.2f} per question)"  # type: ignore[index]
        )
    return ratio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=QUESTIONS)
    parser.add_argument("--concurrency", type=int, default=CONCURRENCY)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--shapes", default="short,long")
    args = parser.parse_args()
    n, c = args.questions, args.concurrency
    print(f"{n:,} questions, concurrency {c}, the system takes {args.latency * 1000:.0f} ms")
    print(f"ideal (latency x questions / concurrency): {args.latency * n / c:.2f} s")
    with tempfile.TemporaryDirectory() as tmp:
        ratios = [measure(shape, Path(tmp), args) for shape in args.shapes.split(",")]
    raise SystemExit(0 if all(r <= GOAL for r in ratios) else 1)


if __name__ == "__main__":
    main()
