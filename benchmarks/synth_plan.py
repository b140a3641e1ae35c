"""How fast, and in how much memory, `lasagna benchmark synthesize` plans and runs, against
lasagna-rag 0.1.0 measured in the same run.

Run from the repository root:

    uv run --group dev python benchmarks/synth_plan.py --peer PATH

PATH is the `lasagna` executable of a lasagna-rag 0.1.0 environment (it installs from PyPI,
torch included, about 6 GB: `uv venv /tmp/peer && uv pip install -p /tmp/peer
lasagna-rag==0.1.0`, then `--peer /tmp/peer/bin/lasagna`). Without it, the figures recorded
for it on this machine stand in (said so in the output).

Two shapes of corpus, each 2,000 Markdown files of 600 words (6,000 passages of 200 words)
in a temporary folder: `english`, random lines of real English (httpx's documentation and
the plain-text files of ../shared/data: common words in most passages, 1.3 tokens a word),
and `random`, words drawn uniformly from a vocabulary of 200,000 made-up words (175,000
distinct words in the corpus, 3 tokens a word).

1. `synthesize CORPUS --n 1000 --dry-run` as a whole process (interpreter start, imports,
   reading, chunking, planning, the exact token count), with its peak resident memory (the
   child's ru_maxrss, from wait4): median of --repeat runs against lasagna-rag's median.
   Goal: at least 15x faster and at most 1/5 of its memory, on both shapes.
2. `synthesize CORPUS --n 200 --concurrency 16` for real, against a FakeLLMServer in a
   process of its own answering after 50 ms (schema-valid questions and verdicts that keep
   every question, for both programs), against lasagna-rag 0.1.0 (which calls one at a
   time). Goal: at least 15x faster, and within 1.5x of (planning time + 400 calls x 50 ms
   / 16), planning time being the dry run's whole process. Every run's file must be the
   same, byte for byte.
3. The dry run over 100,000 passages (5,000 files of 4,000 words): goal < 30 s.

What the profile showed (py-spy on both commands). Dry run, `random` (1.3 s, 7.2x before):
the multihop partners' word index numbered all 175,000 distinct words (0.4 s in the dict
alone, 25 MB), though planning only asks about the 400 passages it draws for multihop and
unanswerable questions; fixed by an index over those passages' words only (read with one
bytes.translate and split per passage), the full one being built only when a run's
unanswerable checks need it. The token count handed tiktoken one text at a time from a new
thread pool per 256 texts; now each thread counts one share. Run (3.65 s): the first call
left at 1.3 s, after the full index (0.6 s) and after importing instructor's OpenAI
handlers, which import the openai SDK (0.35 s: synth's check schema names a field in its
docstring, so the judge's plain path did not take it); each row computed four JSON schemas
for its prompt sha256. Fixed: the full index is built between the first calls, a few
passages per event-loop turn; the judge builds instructor's request itself for such models;
the sha256 is computed once per prompt.

Run again (timestamps in the process, py-spy, and the fake server's arrival times; both
shapes): the first call left at 0.6-0.7 s: after reading and cutting (0.09 s), the
multihop partners' restricted index (0.1-0.25 s, numpy's import included), a full garbage
collection of the plan's 60,000 objects (20 ms) and aiohttp's import (0.1 s, a third of it
two SSL contexts); then the full index (0.75 s of CPU on `random`, 0.3 s on `english`) was
built in slices of 48 passages, 6 ms each, one in front of every turn of the event loop, so
the first 10 rounds took 75 ms instead of 53; the interpreter's last collections took
0.07 s after the file was written. Fixed: a multihop item's partner is chosen when first
asked for (`lasagna_synth._partners`), from the one full index a run builds anyway; the
run sends its factoid items first and builds that index beside them in 1 ms slices, with
numpy's import and sort on a thread (the sort releases the GIL); the command freezes the
heap after planning and as it exits; the judge loads grading, calibration, embeddings and
rubrics on first use (lasagna-metrics and the grading's pydantic models no longer load
before the first call). Tried and dropped: importing aiohttp on a
thread while the corpus is read (slower: the reads hand the GIL to the import, which keeps
it for 5 ms), the whole index on a thread (1.8 s instead of 1.45 s for the calls), slices
that wait for an idle turn of the loop (the index came too late for the multihop items).

Where the goals stand (2026-12-01, the peer in the same run, load 0.3): the dry run 15.4x
(english) and 15.0x (random) faster in 0.24 and 0.25 of the peer's memory (0.95 s, 95 MB
and 0.91 s, 102 MB; ours did not change, within 3% of main's interleaved, the peer took
14.6 s and 13.6 s in this run); the run 1.91 s and 1.94 s (median of 5, first call at
0.42 s and 0.40 s), 15.0x and 15.1x the peer's 28.6 s and 29.4 s in this run (14.4x and
14.2x its recorded 27.5 s), 0.87x and 0.90x of planning + calls (interleaved with main's
in another run: 1.97 s and 1.95 s against 2.47 s and 2.46 s); every file identical to
main's, for the benchmark's seed and three other seeds and mixes. A second run: 1.89 s
and 1.92 s, 15.4x and 14.6x (the peer 29.1 s and 28.0 s). The dry run over 100,000
passages: 11.2 s, 425 MB (main's 413 MB: the partners' index, now built after planning,
peaks 12 MB higher). What is left
is a floor: 16 bare aiohttp workers making the same 26 calls in a row against this server
take 1.38-1.40 s (the calls' rounds take 53-55 ms, not 50); the run's take 1.44-1.50 s
with the index built beside them (1.42-1.54 s with it built before); before the
first call, the interpreter and the parsed command line take 0.13-0.14 s (typer 0.29
builds a pydantic adapter per option), the judge and lasagna-synth 0.03 s, reading and
cutting the 2,000 files 0.09 s (already at the regex engine's per-word cost) and
aiohttp's import 0.1 s; after the last reply, 0.04 s (closing, writing, exit). 1.8 s
would need the first call by 0.35 s. For the dry run: after the parsed command line and
the tokenizer (0.08 s, 28 MB of tiktoken's Rust tables), the multihop partners' overlaps
take 0.3-0.4 s (one dict lookup per word of 6,000 passages, then numpy's bincount), the
exact count 0.13 s (two threads); numpy adds 12 MB and the passages with their index
12-20 MB.

The dry run profiled again (RSS after each step, -X importtime, cProfile): typer 0.29
coerced every option through a pydantic TypeAdapter (the parsed command line 33 MB, 0.13 s
more than typer 0.28's), the schemas' token count imported pydantic again, and the partners'
numpy index cost numpy's import (16 MB, 0.1 s) for 400 queries. Fixed: typer pinned below
0.29, the schemas counted from their JSON text (checked against the models by a test), and
the overlaps of the plan's known passages summed in plain Python, one big integer per
passage with a field per query (lasagna_synth._query_overlaps); the output is the same,
byte for byte. Then (the peer in the same run, load 0.5): 1.20 s and 1.04 s, 72 MB and
77 MB, 16.8x and 19.7x faster in 0.18 and 0.19 of its memory (20.2 s, 389 MB and 20.4 s,
415 MB). Later, with the machine's CPU 1.5-1.7x slower (a plain Python loop 1.0-1.2 s
instead of 0.69 s): 17.9x and 13.9x, 0.18 and 0.19; the real run 15.6x and 12.1x, then
15.1x and 11.3x the peer's 31.9-33.6 s (the random vocabulary's full index, 0.75 s of CPU
built between the calls, no longer fits between their rounds). The dry run over 100,000
passages: 10.0 s, 310 MB.

Profiled again (2026-12-02, py-spy and cProfile; the machine's speed moved 1.4x within the
hour, so every comparison was interleaved with the code before): of the dry run's main
thread, the overlaps took 60%. Non-ASCII passages (two thirds of `english`, whose mojibake
"â€“" makes them so) were cut by the regex, 48 us each against 11 us for ASCII's translate
and split; the overlaps' words were decoded to str; and answering 400 queries iterated
6,000 Python integers a query (max, heapq, a comprehension: 0.19 s). Fixed: non-ASCII text
is cut by the same translate and split once its characters that are neither letters nor
digits are made spaces (one replace per distinct character; the regex is gone from the
index's words too), the words stay UTF-8 bytes, and a query's counts are searched as bytes
(a binary search of translate calls for the maximum, index for the positions: 0.08 s). The
exact count then ran after the overlaps on two threads; now the texts that need no
overlaps (factoid prompts, every item's own passage) are counted on a thread while the
overlaps are found, each call encoding 64,000 characters of texts joined by
<|endoftext|>, which tiktoken encodes between as if each text were alone (tested), and
which holds no GIL for the whole call (one call per text made that thread wait for the
GIL once per text). The dry run: 0.76x and 0.80x the time of the code before,
interleaved, +0.2 and +1.2 MB. Then (load 0.6): 0.95 s and 1.13 s, 18.1x and 20.2x the
peer's 17.3 s and 22.8 s, 0.18 and 0.19 of its memory; the real run 1.82 s and 2.58 s,
16.6x and 12.8x its 30.4 s and 33.1 s. A quiet run (load 0.2): 1.02 s and 1.08 s, 22.0x and
17.3x (22.4 s, 18.7 s), 0.18 and 0.19; the real run 1.92 s and 1.80 s, 15.8x and 17.5x
(30.4 s, 31.5 s), 0.85x and 0.77x of planning + calls. In the busier run, on the random
vocabulary, the run's multihop items waited about 0.4 s for the full index (ready 1.26 s
after the first call, 0.85 s of CPU in slices between the calls): building it in a process
of its own, on the idle core, is the lever left.
Tried and dropped: the whole index on a thread with a 0.2-0.5 ms switch interval (no
better than the slices), counting beside the overlaps one text a call (the overlaps
slowed by the GIL hand-offs as much as the count gained). The dry run over 100,000
passages: 11.9 s, 273 MB.
"""

from __future__ import annotations

import argparse
import hashlib
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

LASAGNA = Path(sys.executable).with_name("lasagna")
SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "corpora"
# lasagna-rag 0.1.0 on this machine when it is not given (2026-12-01, --peer, load about 1):
# dry run seconds, its peak MB, the real run's seconds
RECORDED_PEER = {"english": (13.7, 389.0, 27.6), "random": (11.9, 415.0, 27.5)}
RUN_N, RUN_CONCURRENCY, LATENCY = 200, 16, 0.05
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


# -- the corpora ------------------------------------------------------------------------------


def english_lines() -> list[str]:
    lines: list[str] = []
    for path in sorted((SHARED / "httpx-docs").rglob("*.md")) + sorted(
        (SHARED / "mixed-formats").glob("*.txt")
    ):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if len(line.split()) >= 4:
                lines.append(line.strip())
    return lines


def random_vocabulary(rng: random.Random, size: int = 200_000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = {"".join(rng.choices(letters, k=rng.randint(3, 10))) for _ in range(size)}
    return sorted(words)


def build_corpus(folder: Path, shape: str, files: int, words_per_file: int, seed: int) -> None:
    """`files` Markdown files of `words_per_file` words, in folders of 500."""
    rng = random.Random(seed)
    pool = english_lines() if shape == "english" else []
    if shape == "english" and len(pool) < 1000:
        raise SystemExit("the english shape needs ../shared/data/corpora; use --shapes random")
    vocab = random_vocabulary(rng) if shape == "random" else []
    for i in range(files):
        sub = folder / f"part{i // 500:03d}"
        sub.mkdir(parents=True, exist_ok=True)
        lines: list[str] = []
        count = 0
        while count < words_per_file:
            if vocab:
                line = rng.choices(vocab, k=min(12, words_per_file - count))
            else:
                line = rng.choice(pool).split()[: words_per_file - count]
            count += len(line)
            lines.append(" ".join(line))
        (sub / f"doc{i:05d}.md").write_text(f"# Document {i}\n\n" + "\n".join(lines) + "\n")


# -- the fake model, in a process of its own ----------------------------------------------------


def reply(request: dict[str, Any]) -> str:
    """A reply both programs keep: lasagna's schema-enforced calls (by the tool asked for)
    and lasagna-rag's plain prompts (a JSON question, then "yes" or "no")."""
    tools = request.get("tools") or []
    name = tools[0]["function"]["name"] if tools else None
    question = {"question": "Which harbour opened first?", "answer": "Port Elvar"}
    if name in ("AnsweredQuestion", "OpenQuestion"):
        return json.dumps(question if name == "AnsweredQuestion" else {"question": "Why?"})
    if name == "SupportCheck":
        return json.dumps({"reason": "It says so.", "supported": "yes"})
    if name == "AnswerCheck":
        return json.dumps({"reason": "Nothing says so.", "answered": "no"})
    prompt = json.dumps(request.get("messages"))
    if "You are checking a test question" in prompt:
        return "yes" if "Reference answer:" in prompt else "no"
    return json.dumps(question)


def serve_forever() -> None:
    from lasagna_judge.testing import FakeLLMServer

    with FakeLLMServer(reply=reply, latency=LATENCY) as server:
        print(server.base_url, flush=True)
        sys.stdin.read()
        times = server.times
        print(json.dumps({"calls": server.calls, "first": times[0] if times else None}))


# -- measuring --------------------------------------------------------------------------------


def peak_of(command: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Wall seconds, peak RSS in MB (wait4), stdout."""
    start = time.monotonic()
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    assert process.stdout is not None and process.stderr is not None
    stdout, stderr = process.stdout.read(), process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise SystemExit(f"{' '.join(command[:4])} ... failed ({process.returncode}):\n{stderr}")
    return wall, usage.ru_maxrss / 1024, stdout


def dry_run(executable: Path, corpus: Path, n: int) -> list[str]:
    return [str(executable), "benchmark", "synthesize", str(corpus), "--n", str(n), "--dry-run"]


def real_run(executable: Path, corpus: Path, folder: Path, ours: bool) -> tuple[float, float, str]:
    """Wall seconds, seconds to the first call, and the sha256 of the file written."""
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        server = subprocess.Popen(
            [sys.executable, __file__, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        assert server.stdout is not None and server.stdin is not None
        base_url = server.stdout.readline().decode().strip()
        out = Path(tmp) / "synthetic_qa.jsonl"
        env = {
            **ENV,
            "OPENAI_BASE_URL": base_url,
            "OPENAI_API_KEY": "benchmark",
            "LASAGNA_CACHE_DIR": tmp,
            "MODEL_NAME": "openai/fake",
        }
        command = [
            str(executable), "benchmark", "synthesize", str(corpus), "--n", str(RUN_N),
            "--model", "openai/fake", "--out", str(out),
        ]  # fmt: skip
        if ours:
            command += ["--concurrency", str(RUN_CONCURRENCY)]
        try:
            start = time.monotonic()
            done = subprocess.run(command, env=env, capture_output=True, text=True)
            wall = time.monotonic() - start
        finally:
            server.stdin.close()
            stats = json.loads(server.stdout.read().decode().strip().splitlines()[-1])
            server.wait()
        if done.returncode:
            raise SystemExit(f"{command[0]} synthesize failed:\n{done.stdout}\n{done.stderr}")
        if stats["calls"] != 2 * RUN_N:
            raise SystemExit(f"expected {2 * RUN_N} calls, the server saw {stats['calls']}")
        return wall, stats["first"] - start, hashlib.sha256(out.read_bytes()).hexdigest()


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def shape_figures(shape: str, folder: Path, args: argparse.Namespace) -> bool:
    corpus = folder / shape
    started = time.perf_counter()
    build_corpus(corpus, shape, 2_000, 600, seed=0)
    print(f"\n== {shape}: 2,000 files x 600 words, built in {time.perf_counter() - started:.1f} s")
    peer = args.peer
    met = True

    peak_of(dry_run(LASAGNA, corpus, 1000), ENV)  # warm the file cache and .pyc files
    ours = [peak_of(dry_run(LASAGNA, corpus, 1000), ENV) for _ in range(args.repeat)]
    seconds = statistics.median(r[0] for r in ours)
    memory = max(r[1] for r in ours)
    print(next(line for line in ours[0][2].splitlines() if line.startswith("Passages")))
    if peer is not None:
        theirs = [peak_of(dry_run(peer, corpus, 1000), ENV) for _ in range(args.peer_repeat)]
        peer_s, peer_mb = statistics.median(r[0] for r in theirs), max(r[1] for r in theirs)
        label = f"lasagna-rag 0.1.0 in this run, median of {args.peer_repeat}"
    else:
        peer_s, peer_mb, _ = RECORDED_PEER[shape]
        label = "lasagna-rag 0.1.0 as recorded on this machine (no --peer)"
    speed, share = peer_s / seconds, memory / peer_mb
    met &= speed >= 15 and share <= 0.2
    print(
        f"1. dry run --n 1000: {seconds:.2f} s (median of {args.repeat}; runs "
        + ", ".join(f"{r[0]:.2f}" for r in ours)
        + f"), peak {memory:.0f} MB; {label}: {peer_s:.1f} s, {peer_mb:.0f} MB\n"
        f"   {speed:.1f}x faster (goal >= 15x: {verdict(speed >= 15)}), "
        f"{share:.2f} of its memory (goal <= 0.20: {verdict(share <= 0.2)})"
    )

    runs = [real_run(LASAGNA, corpus, folder, ours=True) for _ in range(args.run_repeat)]
    wall = statistics.median(r[0] for r in runs)
    first = statistics.median(r[1] for r in runs)
    same = len({r[2] for r in runs}) == 1
    ideal = seconds + 2 * RUN_N * LATENCY / RUN_CONCURRENCY
    if peer is not None and not args.skip_peer_run:
        peer_run, _, _ = real_run(peer, corpus, folder, ours=False)
        run_label = "lasagna-rag 0.1.0 (one call at a time) in this run"
    else:
        peer_run = RECORDED_PEER[shape][2]
        run_label = "lasagna-rag 0.1.0 as recorded in issue 15"
    print(
        f"2. run --n {RUN_N} --concurrency {RUN_CONCURRENCY}, {LATENCY * 1000:.0f} ms a call: "
        f"{wall:.2f} s (median of {args.run_repeat}; first call after {first:.2f} s); every "
        f"file the same: {'yes' if same else 'NO'}\n"
        f"   {wall / ideal:.2f}x (planning {seconds:.2f} s + calls {ideal - seconds:.2f} s) "
        f"(goal <= 1.5x: {verdict(wall <= 1.5 * ideal)})"
    )
    met &= same and wall <= 1.5 * ideal
    if peer_run is not None:
        print(
            f"   {run_label}: {peer_run:.1f} s, {peer_run / wall:.1f}x faster "
            f"(goal >= 15x: {verdict(peer_run / wall >= 15)})"
        )
        met &= peer_run / wall >= 15
    return met


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peer", type=Path, help="lasagna-rag 0.1.0's `lasagna` executable")
    parser.add_argument("--shapes", default="english,random")
    parser.add_argument("--repeat", type=int, default=5, help="dry runs of ours per shape")
    parser.add_argument("--peer-repeat", type=int, default=2, help="dry runs of the peer")
    parser.add_argument("--run-repeat", type=int, default=3, help="real runs of ours per shape")
    parser.add_argument("--skip-peer-run", action="store_true", help="50 s a shape")
    parser.add_argument("--skip-large", action="store_true", help="skip the 100,000 passages")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve_forever()
        return 0
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    met = True
    with tempfile.TemporaryDirectory(prefix="synth-bench-") as tmp:
        for shape in args.shapes.split(","):
            met &= shape_figures(shape, Path(tmp), args)
        if not args.skip_large:
            large = Path(tmp) / "large"
            build_corpus(
                large, "english" if "english" in args.shapes else "random", 5_000, 4_000, 1
            )
            wall, peak, out = peak_of(dry_run(LASAGNA, large, 1000), ENV)
            print(f"\n3. {next(line for line in out.splitlines() if line.startswith('Passages'))}")
            print(
                f"   dry run over 100,000 passages, --n 1000: {wall:.1f} s, peak {peak:.0f} MB "
                f"(goal < 30 s: {verdict(wall < 30)})"
            )
            met &= wall < 30
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
