"""How fast does `lasagna benchmark sweep` run tasks when the model answers instantly, against
a bare aiohttp client sending the same requests at the same concurrency to the same server?

    uv run python benchmarks/sweep_speed.py [--tasks 4000] [--parallel 64] [--rounds 3] [--keep]

The fake OpenAI-compatible server runs in a process of its own (off the GIL of what it
serves). Two shapes of task: `short` (kag's MCQ rows: a one-line question, two options, a
one-line system prompt: 0.2 KB a request) and `long` (a RAG-sized prompt: a 60-word system
prompt and a 350-word question, 2.5 KB a request). For each shape, interleaved `--rounds`
times, medians reported:
1. the peer: a bare aiohttp client in a process of its own (interpreter start included)
   sending the same chat completions, same messages, at `--parallel` in flight;
2. the same client also writing each reply to a file of kag's layout on its event loop, as
   the sweep did until 2026-12-02 (a temporary file renamed into place, a folder per
   question): what one file per task costs a client that writes them itself;
3. `lasagna benchmark sweep` as a whole process (start included): prompts, one result file
   per task written atomically, progress; goal: at most 1.5x the peer's time;
4. the runner in this process against raw `llm.complete` calls through one LLM object: the
   runner's own milliseconds per task (prompt, record, file, bookkeeping).

At a real model's 0.3 to 10 s a call none of this shows (docs/performance.md): the 1.5x
checked here guards against regressions. What a task costs today: the runner's prompt,
record, file and bookkeeping (0.3-0.55 ms of CPU, `engine_overhead.py`) and aiohttp's
client; each record is written atomically on a small thread pool, renamed into place without
fsync, and the files are flushed to disk in groups, once a second. How the figure got there,
and what was tried and later removed (the writer threads, then the writer process,
lasagna-judge's own HTTP/1.1 client), is in packages/cli/CHANGELOG.md ("Measured").

What is left is the disk. kag's layout gives every question a folder
(out/<dataset>/<question>/<setup>.json): 2,000 mkdirs and 4,000 files: 30-40 us of kernel
time a file on tmpfs and in a quiet folder of this disk, 150-350 us near many files deleted
in the last minutes (perf: on this journal-less ext4 the kernel's inode allocation skips
recently freed inodes, `recently_deleted` in `find_inode_bit`, scanning past each). Over
about 100 us a file, the files take longer than the calls and the sweep waits for them, as
the bare client writing the same files does: the sweep is then 0.9-1.05x that client. This
script's own cleanup (it deletes the 120,000 files it made) makes such a disk for the next
minutes, and so does any large delete (a test suite's temporary folders). It prints what a
file costs in its folder before each shape: give it TMPDIR on a tmpfs (/dev/shm) to measure
lasagna itself, or a folder of a quiet disk (a probe under 60 us) to measure it with the
disk; each timed run starts after os.sync(), so that no run flushes another's files.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import clean_env, file_cost, server_process, timed, write_sweep

GOAL = 1.5
SYSTEM = {"short": "Pick one.", "long": " ".join(["Answer from the passages, briefly."] * 12)}
FILLER = "the harbour opened in spring after the council voted on the new quay and its fees "


def question(shape: str, i: int) -> str:
    if shape == "short":
        return f"Question {i}: which option?"  # the harness's MCQ question
    return f"Question {i}: " + (FILLER * 22).strip() + " Which option?"


def write_inputs(folder: Path, base_url: str, tasks: int, shape: str) -> list[dict[str, Any]]:
    """The sweep's input files for `tasks` tasks (2 setups); the request bodies it sends,
    for the bare client."""
    write_sweep(
        folder,
        base_url,
        tasks,
        2,
        mcq=True,
        question=lambda i: question(shape, i),
        system_prompt=SYSTEM[shape],
    )
    return [
        {
            "model": f"setup-{s}",
            "messages": [
                {"role": "system", "content": SYSTEM[shape]},
                {"role": "user", "content": f"{question(shape, i)}\n\na: yes\nb: no"},
            ],
        }
        for i in range(tasks // 2)
        for s in range(2)
    ]


# The peer: the same bodies, nothing but aiohttp, in a process of its own. Given a folder, it
# also writes each reply to a file of kag's layout (<folder>/bench/q<i>/<setup>.json) on its
# event loop: a temporary file, then a rename, the question's folder made with its first
# file (what the sweep did before its writer process).
BARE = """
import asyncio, json, os, sys
import aiohttp

FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL

def keep(folder, i, body, reply):
    question = os.path.join(folder, "bench", f"q{i // 2}")
    temp = os.path.join(question, f".tmp-{i}")
    data = json.dumps({"ok": {"result": reply, "request": body}}).encode()
    try:
        fd = os.open(temp, FLAGS, 0o666)
    except FileNotFoundError:
        os.makedirs(question, exist_ok=True)
        fd = os.open(temp, FLAGS, 0o666)
    os.write(fd, data)
    os.close(fd)
    os.rename(temp, os.path.join(question, body["model"] + ".json"))

async def main(url, path, parallel, folder):
    bodies = [json.loads(line) for line in open(path)]
    semaphore = asyncio.Semaphore(parallel)
    connector = aiohttp.TCPConnector(limit=parallel)
    headers = {"Authorization": "Bearer dummy"}
    async with aiohttp.ClientSession(connector=connector, headers=headers) as session:
        async def one(i, body):
            async with semaphore:
                async with session.post(url + "/chat/completions", json=body) as response:
                    response.raise_for_status()
                    reply = (await response.json())["choices"][0]["message"]["content"]
                    assert reply
            if folder:
                keep(folder, i, body, reply)
        await asyncio.gather(*(one(i, body) for i, body in enumerate(bodies)))

url, path, parallel, *folder = sys.argv[1:]
asyncio.run(main(url, path, int(parallel), folder[0] if folder else ""))
"""


def sweep_command(folder: Path, output: Path, parallel: int) -> list[str]:
    lasagna = str(Path(sys.executable).with_name("lasagna"))
    return [
        lasagna, "benchmark", "sweep", "--datasets", str(folder / "datasets.json"),
        "--benchmark", str(folder / "setups.toml"), "--config", str(folder / "config.toml"),
        "--output", str(output), "--parallel", str(parallel),
    ]  # fmt: skip


async def raw_calls(base_url: str, bodies: list[dict[str, Any]], parallel: int) -> float:
    from lasagna_judge import make_llm

    llm = make_llm("openai/m0", base_url=base_url, cache=False, concurrency=parallel)
    semaphore = asyncio.Semaphore(parallel)

    async def one(body: dict[str, Any]) -> None:
        async with semaphore:
            await llm.complete(body["messages"])

    await asyncio.gather(*(one(b) for b in bodies[:200]))  # warm the connections
    start = time.perf_counter()
    await asyncio.gather(*(one(b) for b in bodies))
    seconds = time.perf_counter() - start
    await llm.aclose()
    return seconds


def sweep_in_process(folder: Path, output: Path, parallel: int) -> float:
    """The same tasks through the engine's runner in this process (kag's door, its store)."""
    from lasagna_cli.commands._sweep import setup_llm
    from lasagna_cli.engine.kag import KagStore, load_sweep, sweep_tasks
    from lasagna_cli.engine.run._executor import LocalExecutor
    from lasagna_cli.engine.run._options import RunOptions
    from lasagna_cli.engine.run._runner import Models, execute
    from lasagna_cli.engine.run._system_tasks import SystemState

    sweep = load_sweep(
        folder / "datasets.json", folder / "setups.toml", folder / "config.toml", [], {}
    )
    tasks = sweep_tasks(sweep.plan)
    by_model = {s.generator.key: s for s in sweep.setups.values() if s.generator is not None}
    llms = {key: setup_llm(setup, parallel) for key, setup in by_model.items()}
    failed: list[str] = []

    async def main() -> float:
        start = time.perf_counter()
        await execute(
            sweep.plan,
            tasks,
            KagStore(output, "", sweep.setups),
            LocalExecutor(parallel),
            Models(lambda spec, role: llms[spec.key]),
            RunOptions(concurrency=parallel, retry_failed=False, probe_systems=False),
            SystemState(),
            on_progress=lambda status: failed.append(status) if status == "failed" else None,
            say=lambda line: None,
        )
        seconds = time.perf_counter() - start
        for llm in llms.values():
            await llm.aclose()
        return seconds

    seconds = asyncio.run(main())
    assert not failed, f"{len(failed)} tasks failed"
    return seconds


def measure(shape: str, base_url: str, args: argparse.Namespace, work: Path) -> bool:
    folder = work / shape
    folder.mkdir()
    bodies = write_inputs(folder, base_url, args.tasks, shape)
    requests = folder / "bodies.jsonl"
    requests.write_text("".join(json.dumps(b) + "\n" for b in bodies))
    n = len(bodies)
    per_file = file_cost(work)
    bare = [sys.executable, "-c", BARE, base_url, str(requests), str(args.parallel)]
    peer, writing, ours, raw, runner = [], [], [], [], []
    for round_ in range(args.rounds):
        # Each timed run starts with nothing left to flush: the last one's files (and
        # their writeback) would otherwise fall on the next, and a sweep's flush of the
        # filesystem would write the other client's files too.
        os.sync()
        peer.append(timed(bare, clean_env())[0])
        kept = work / f"{shape}-writing-{round_}"
        os.sync()
        writing.append(timed([*bare, str(kept)], clean_env())[0])
        files = sum(1 for _ in kept.glob("*/*/*.json"))
        assert files == n, f"the writing client kept {files} files for {n} tasks"
        out = work / f"{shape}-cli-{round_}"
        os.sync()
        ours.append(timed(sweep_command(folder, out, args.parallel), clean_env())[0])
        files = sum(1 for _ in out.glob("*/*/*.json"))
        assert files == n, f"{files} result files for {n} tasks"
        os.sync()
        raw.append(asyncio.run(raw_calls(base_url, bodies, args.parallel)))
        os.sync()
        runner.append(sweep_in_process(folder, work / f"{shape}-in-{round_}", args.parallel))
    peer_s, ours_s = statistics.median(peer), statistics.median(ours)
    writing_s = statistics.median(writing)
    raw_s, runner_s = statistics.median(raw), statistics.median(runner)
    ratio = ours_s / peer_s
    size = len(json.dumps(bodies[0]).encode())
    print(f"\n== {shape}: {n} tasks, {size / 1024:.1f} KB a request, --parallel {args.parallel}")
    print(
        f"   a task file in this folder: {per_file:.0f} us to make ({n * per_file / 1e6:.2f} s "
        "for all; over 100 us, the disk bounds the sweep: see the docstring)"
    )
    print(
        f"   bare aiohttp client, whole process: {peer_s:.2f} s ({n / peer_s:,.0f}/s; "
        f"runs {', '.join(f'{s:.2f}' for s in peer)})"
    )
    print(
        f"   lasagna benchmark sweep, whole process: {ours_s:.2f} s ({n / ours_s:,.0f}/s; "
        f"runs {', '.join(f'{s:.2f}' for s in ours)})"
    )
    print(
        f"   the bare client writing one file per task on its loop: {writing_s:.2f} s "
        f"({writing_s / peer_s:.2f}x the bare client; "
        f"runs {', '.join(f'{s:.2f}' for s in writing)})"
    )
    verdict = "met" if ratio <= GOAL else "MISSED"
    print(
        f"   {ratio:.2f}x the bare client (goal <= {GOAL}x: {verdict}); {ours_s / writing_s:.2f}x "
        "the writing client"
    )
    print(
        f"   in process: the runner {runner_s / n * 1e3:.3f} ms a task, raw llm.complete "
        f"{raw_s / n * 1e3:.3f} ms a call: the runner's own {(runner_s - raw_s) / n * 1e3:.3f} ms"
    )
    return ratio <= GOAL


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=4000)
    parser.add_argument("--parallel", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3, help="median of N, interleaved")
    parser.add_argument("--shapes", default="short,long")
    parser.add_argument(
        "--keep", action="store_true", help="leave the files made (deleting them slows the disk)"
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="sweep-speed-"))
    met = True
    try:
        with server_process() as base_url:
            for shape in args.shapes.split(","):
                met &= measure(shape, base_url, args, work)
    finally:
        if args.keep:
            print(f"\nthe files made are in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    raise SystemExit(0 if met else 1)


if __name__ == "__main__":
    main()
