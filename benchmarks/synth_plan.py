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
   process of its own answering after 0.5 s, a model's realistic latency (schema-valid
   questions and verdicts that keep every question, for both programs), against
   lasagna-rag 0.1.0 (which calls one at a time: 3.5 minutes a shape). Goal: at least 15x
   faster, and within 1.5x of (planning time + 400 calls x 0.5 s / 16), planning time
   being the dry run's whole process. Every run's file must be the same, byte for byte.
3. The same run at 50 ms a call, lasagna alone: what it adds when the model is fast, within
   1.5x of (planning time + 400 calls x 50 ms / 16). (Until 2026-12-06 the peer was timed
   at 50 ms too: about 14.5x, the ceiling being 16x less lasagna's start; the project's
   goals are measured at a model's latency, 0.3 s and up, where that start is noise.)
4. The dry run over 100,000 passages (5,000 files of 4,000 words): goal < 30 s.

Where the time goes (py-spy, cProfile and the fake server's arrival times). The latest
figures are in docs/performance.md, how they moved in packages/cli/CHANGELOG.md
("Measured").

- The dry run: the parsed command line and the tokenizer (0.08 s, 28 MB of tiktoken's
  tables); the multihop partners' overlaps, over the passages the plan draws only, in plain
  Python (one big integer per passage with a field per query, searched as bytes); the exact
  token count on a thread beside them (64,000 characters of texts joined by <|endoftext|> a
  call, which holds no GIL). Every passage is cut by one bytes.translate and split, ASCII
  or not.
- The real run: the first call leaves at 0.4-0.6 s, after the interpreter and the command
  line (0.13 s; typer stays below 0.29, which builds a pydantic adapter per option), the
  judge and lasagna-synth (0.03 s), reading and cutting the 2,000 files (0.09 s), pydantic
  and the question schemas (0.1 s) and aiohttp (0.1 s, 50-70 ms of it the two TLS contexts
  it makes as it is imported). Factoid items go first; a multihop item's partner is chosen
  when first asked for, from the full index built beside the calls in 1 ms slices. After
  the last reply: 0.04 s (the heap is frozen as the command exits).
- The floor at 50 ms a call: 16 bare aiohttp workers making the same 400 calls take
  1.38-1.40 s (rounds of 53-55 ms, not 50), so lasagna's start is a quarter of its run
  there; at 0.5 s a call it is 4%.

Tried and dropped: aiohttp imported on a thread while the corpus is read (the reads hand
the GIL to the import, which keeps it for 5 ms; the same for `benchmark run`'s index and
searches, 2026-12-06: no gain in 10 starts each); the whole index on a thread, with a
0.2-0.5 ms switch interval too (no better than the slices); slices that wait for an idle
turn of the loop (the index came too late for the multihop items); counting one text a call
beside the overlaps (the GIL hand-offs cost what the count gained).
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
# dry run seconds, its peak MB, the real run's seconds (at REALISTIC, 2026-12-06)
RECORDED_PEER = {"english": (13.7, 389.0, 211.8), "random": (11.9, 415.0, 209.4)}
RUN_N, RUN_CONCURRENCY = 200, 16
REALISTIC, FAST = 0.5, 0.05  # seconds a call
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


def serve_forever(latency: float) -> None:
    from lasagna_judge.testing import FakeLLMServer

    with FakeLLMServer(reply=reply, latency=latency) as server:
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


def real_run(
    executable: Path, corpus: Path, folder: Path, ours: bool, latency: float
) -> tuple[float, float, str]:
    """Wall seconds, seconds to the first call, and the sha256 of the file written."""
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        server = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(latency)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
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

    runs = [real_run(LASAGNA, corpus, folder, True, REALISTIC) for _ in range(args.run_repeat)]
    wall, ok = ours_against_bound(2, runs, seconds, REALISTIC, args.run_repeat)
    met &= ok
    if peer is not None and not args.skip_peer_run:
        peer_run, _, _ = real_run(peer, corpus, folder, False, REALISTIC)
        run_label = "lasagna-rag 0.1.0 (one call at a time) in this run"
    else:
        peer_run = RECORDED_PEER[shape][2]
        run_label = "lasagna-rag 0.1.0 as recorded on this machine (no --peer)"
    print(
        f"   {run_label}: {peer_run:.1f} s, {peer_run / wall:.1f}x faster "
        f"(goal >= 15x: {verdict(peer_run / wall >= 15)})"
    )
    met &= peer_run / wall >= 15
    fast = [real_run(LASAGNA, corpus, folder, True, FAST) for _ in range(args.run_repeat)]
    met &= ours_against_bound(3, fast, seconds, FAST, args.run_repeat)[1]
    return met


def ours_against_bound(
    step: int, runs: list[tuple[float, float, str]], planning: float, latency: float, repeat: int
) -> tuple[float, bool]:
    """The median run against planning + the calls at `latency`; every file the same."""
    wall = statistics.median(r[0] for r in runs)
    first = statistics.median(r[1] for r in runs)
    same = len({r[2] for r in runs}) == 1
    ideal = planning + 2 * RUN_N * latency / RUN_CONCURRENCY
    print(
        f"{step}. run --n {RUN_N} --concurrency {RUN_CONCURRENCY}, {latency * 1000:.0f} ms a "
        f"call: {wall:.2f} s (median of {repeat}; first call after {first:.2f} s); every file "
        f"the same: {'yes' if same else 'NO'}\n"
        f"   {wall / ideal:.2f}x (planning {planning:.2f} s + calls {ideal - planning:.2f} s) "
        f"(goal <= 1.5x: {verdict(wall <= 1.5 * ideal)})"
    )
    return wall, same and wall <= 1.5 * ideal


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peer", type=Path, help="lasagna-rag 0.1.0's `lasagna` executable")
    parser.add_argument("--shapes", default="english,random")
    parser.add_argument("--repeat", type=int, default=5, help="dry runs of ours per shape")
    parser.add_argument("--peer-repeat", type=int, default=2, help="dry runs of the peer")
    parser.add_argument("--run-repeat", type=int, default=3, help="real runs of ours per shape")
    parser.add_argument("--skip-peer-run", action="store_true", help="3.5 minutes a shape")
    parser.add_argument("--skip-large", action="store_true", help="skip the 100,000 passages")
    parser.add_argument("--serve", type=float, help=argparse.SUPPRESS)  # a server's latency
    args = parser.parse_args()
    if args.serve is not None:
        serve_forever(args.serve)
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
            print(f"\n4. {next(line for line in out.splitlines() if line.startswith('Passages'))}")
            print(
                f"   dry run over 100,000 passages, --n 1000: {wall:.1f} s, peak {peak:.0f} MB "
                f"(goal < 30 s: {verdict(wall < 30)})"
            )
            met &= wall < 30
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
