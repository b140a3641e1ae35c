"""How fast does `lasagna benchmark sweep` run tasks when the model answers instantly?

The fake OpenAI-compatible server runs in its own process (so it does not compete for this
process's GIL). In the same run we measure:
1. baseline: N raw `llm.complete` calls through one LLM object, 64 in flight;
2. sweep (in process): the same N tasks through the sweep runner at --parallel 64 -
   prompts, result files written atomically, progress counting;
3. sweep (CLI): `lasagna benchmark sweep` as a whole process, startup included.
The runner's own overhead per task is (2) - (1) divided by N.

    uv run python benchmarks/sweep_speed.py [--tasks 4000] [--parallel 64]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SERVER = """
import sys
from lasagna_judge.testing import FakeLLMServer
with FakeLLMServer(reply="b") as server:
    print(server.base_url, flush=True)
    sys.stdin.read()
"""


def start_server() -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def write_inputs(folder: Path, base_url: str, tasks: int) -> tuple[Path, Path, Path]:
    setups = 2
    questions = tasks // setups
    datasets = {
        "speed": {
            f"q{i}": {
                "input": f"Question {i}: which option?",
                "output": {"type": "MCQ", "options": {"a": "yes", "b": "no"}, "answer": "b"},
            }
            for i in range(questions)
        }
    }
    (folder / "datasets.json").write_text(json.dumps(datasets))
    (folder / "setups.toml").write_text(
        "".join(
            f'[setup-{i}]\nprovider = "fake"\nmodel = "m0"\nsystem_prompt = "Pick one."\n\n'
            for i in range(setups)
        )
    )
    (folder / "config.toml").write_text(
        f'[providers.fake]\napi = "openai"\nbase_url = "{base_url}"\n'
    )
    return folder / "datasets.json", folder / "setups.toml", folder / "config.toml"


async def baseline(base_url: str, n: int, parallel: int) -> float:
    from lasagna_judge import make_llm

    llm = make_llm("openai/m0", base_url=base_url, cache=False, concurrency=parallel)
    semaphore = asyncio.Semaphore(parallel)

    async def one(i: int) -> None:
        async with semaphore:
            await llm.complete(
                [
                    {"role": "system", "content": "Pick one."},
                    {"role": "user", "content": f"Question {i}: which option?\n\na: yes\nb: no"},
                ]
            )

    await asyncio.gather(*(one(i) for i in range(min(n, 200))))  # warm the connections
    start = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(n)))
    seconds = time.perf_counter() - start
    await llm.aclose()
    return seconds


def sweep_in_process(
    paths: tuple[Path, Path, Path], output: Path, parallel: int
) -> tuple[float, int]:
    """The same tasks through the engine's runner in this process (kag's door, its store)."""
    from lasagna_cli.commands._sweep import make_setup_llms
    from lasagna_cli.engine._executor import LocalExecutor
    from lasagna_cli.engine._runner import Models, RunOptions, execute
    from lasagna_cli.engine._system_tasks import SystemState
    from lasagna_cli.engine.kag import KagStore, load_sweep, sweep_tasks

    sweep = load_sweep(paths[0], paths[1], paths[2], [], {})
    tasks = sweep_tasks(sweep.plan)
    llms = make_setup_llms(list(sweep.setups.values()), parallel)
    counts = {"done": 0, "failed": 0, "skipped": 0}

    def on_status(status: str) -> None:
        counts[status] += 1

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
            on_progress=on_status,
            say=lambda line: None,
        )
        seconds = time.perf_counter() - start
        for llm in llms.values():
            await llm.aclose()
        return seconds

    seconds = asyncio.run(main())
    assert counts["failed"] == 0, counts
    return seconds, len(tasks)


def sweep_cli(paths: tuple[Path, Path, Path], output: Path, parallel: int) -> tuple[float, float]:
    """Whole-process seconds, and the tasks/s the CLI itself reports (startup excluded)."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", "from lasagna_cli._app import main; main()",
         "benchmark", "sweep", "--datasets", str(paths[0]), "--benchmark", str(paths[1]),
         "--output", str(output), "--parallel", str(parallel)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    seconds = time.perf_counter() - start
    match = re.search(r"\(([\d.]+) tasks/s\)", done.stderr)
    return seconds, float(match.group(1)) if match else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=4000)
    parser.add_argument("--parallel", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3, help="best of N, interleaved")
    args = parser.parse_args()
    server, base_url = start_server()
    folder = Path(tempfile.mkdtemp(prefix="sweep-speed-"))
    try:
        paths = write_inputs(folder, base_url, args.tasks)
        base_runs, sweep_runs, cli_runs = [], [], []
        n = 0
        for round_ in range(args.rounds):
            base_runs.append(asyncio.run(baseline(base_url, args.tasks, args.parallel)))
            seconds, n = sweep_in_process(paths, folder / f"in-{round_}", args.parallel)
            sweep_runs.append(seconds)
            files = sum(1 for _ in (folder / f"in-{round_}").glob("*/*/*.json"))
            assert files == n, (files, n)
            cli_runs.append(sweep_cli(paths, folder / f"cli-{round_}", args.parallel))
        base_s, sweep_s = min(base_runs), min(sweep_runs)
        cli_s, cli_rate = min(cli_runs)[0], max(rate for _, rate in cli_runs)
        print(
            f"tasks: {n}, --parallel {args.parallel}, instant fake server in its own process, "
            f"best of {args.rounds}"
        )
        print(
            f"baseline  raw llm.complete calls:  {n / base_s:8.0f} calls/s  "
            f"({base_s / n * 1e3:.2f} ms each)"
        )
        print(
            f"sweep     runner, in process:      {n / sweep_s:8.0f} tasks/s  "
            f"({sweep_s / n * 1e3:.2f} ms each)"
        )
        print(f"sweep     CLI, its own rate:       {cli_rate:8.0f} tasks/s")
        print(
            f"sweep     CLI, whole process:      {n / cli_s:8.0f} tasks/s  "
            f"(startup included, {cli_s:.1f} s)"
        )
        print(
            f"runner overhead per task: {(sweep_s - base_s) / n * 1e3:.3f} ms "
            f"(sweep / baseline time = {sweep_s / base_s:.2f}x)"
        )
    finally:
        server.stdin.close()  # type: ignore[union-attr]
        server.wait(timeout=10)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
