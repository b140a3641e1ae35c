"""The same sweep on the local executor and on Ray with 1 and 2 workers, in one run.

A kag sweep of `--tasks` tasks (2 setups) against the fake OpenAI-compatible server with
`--latency` seconds per call, at `--parallel` calls in flight, each as a whole
`lasagna benchmark sweep` process (startup, and for Ray the start of a local Ray,
included). The server runs in its own process, so it does not compete for the driver's
GIL. Printed per executor:

- seconds and tasks per second;
- the Ray start (from the process start to the first call);
- the overhead per task against the local run (Ray's wall time minus its start minus the
  local run's, over the tasks);
- the driver's peak memory (VmHWM).

The ideal is tasks x latency / parallel. The second shape runs twice the tasks with
prompts 20x longer (more bytes per task to and from the workers).

Profile (py-spy on the driver, 3,000 tasks, 2 workers): the driver spends its time in
Ray's submit and get paths (about 0.3 ms per task on this machine), and the actors are
idle most of the time, since every call is waiting on the server. Ray pays off when the
model calls, not lasagna, are the limit: more hosts to call from, or local models on
several hosts.

    uv run --group ray python benchmarks/ray_scaling.py [--tasks 3000] [--parallel 64]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

SERVER = """
import sys, time
from lasagna_judge.testing import FakeLLMServer
with FakeLLMServer(reply="an answer", latency=float(sys.argv[1])) as server:
    print(server.base_url, flush=True)
    for line in sys.stdin:  # "first": the time of the first call since the last reset
        if server.times:
            print(server.times[0], server.calls, flush=True)
        else:
            print("none", server.calls, flush=True)
        server.times.clear()
"""
LASAGNA = [sys.executable, "-c", "from lasagna_cli._app import main; main()"]


@dataclass
class Measured:
    name: str
    seconds: float
    start: float
    peak_mb: float


def write_inputs(folder: Path, base_url: str, tasks: int, words: int) -> list[str]:
    filler = " ".join(["context"] * words)
    rows = {f"q{i}": {"input": f"{filler} question {i}"} for i in range(tasks // 2)}
    (folder / "datasets.json").write_text(json.dumps({"d": rows}))
    (folder / "setups.toml").write_text(
        '[a]\nprovider = "fake"\nmodel = "m1"\n[b]\nprovider = "fake"\nmodel = "m2"\n'
    )
    (folder / "config.toml").write_text(
        f'[providers.fake]\napi = "openai"\nbase_url = "{base_url}"\n'
    )
    return [
        "benchmark", "sweep", "-d", str(folder / "datasets.json"),
        "-b", str(folder / "setups.toml"), "-c", str(folder / "config.toml"),
    ]  # fmt: skip


def peak_memory(pid: int, found: list[float], stop: threading.Event) -> None:
    while not stop.is_set():
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    found.append(int(line.split()[1]) / 1024)
        except OSError:
            return
        time.sleep(0.05)


def run(
    name: str, command: list[str], env: dict[str, str], server: subprocess.Popen[str]
) -> Measured:
    started_clock = time.monotonic()  # the server's clock: one per machine
    started = time.perf_counter()
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    peaks: list[float] = []
    stop = threading.Event()
    watcher = threading.Thread(target=peak_memory, args=(process.pid, peaks, stop))
    watcher.start()
    _, stderr = process.communicate()
    seconds = time.perf_counter() - started
    stop.set()
    watcher.join()
    assert process.returncode == 0, stderr
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write("first\n")
    server.stdin.flush()
    first = server.stdout.readline().split()[0]
    start = float(first) - started_clock if first != "none" else 0.0
    return Measured(name, seconds, start, max(peaks, default=0.0))


def shape(tasks: int, parallel: int, latency: float, words: int) -> None:
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(latency)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert server.stdout is not None
    base_url = server.stdout.readline().strip()
    folder = Path(tempfile.mkdtemp(prefix="ray-scaling-"))
    try:
        args = write_inputs(folder, base_url, tasks, words)
        env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
        env.update(LASAGNA_CACHE_DIR=str(folder / "cache"), MODEL_NAME="")
        results = []
        for name, extra, workers in (
            ("local", [], None),
            ("ray, 1 worker", ["--executor", "ray"], "1"),
            ("ray, 2 workers", ["--executor", "ray"], "2"),
        ):
            out = folder / name.replace(" ", "").replace(",", "-")
            run_env = {**env, **({"LASAGNA_RAY_WORKERS": workers} if workers else {})}
            command = [*LASAGNA, *args, "-o", str(out), "-p", str(parallel), *extra]
            results.append(run(name, command, run_env, server))
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait()
        shutil.rmtree(folder, ignore_errors=True)
    ideal = tasks * latency / parallel
    print(f"\n{tasks} tasks, prompts of {words + 2} words, {latency * 1000:.0f} ms per call, "
          f"--parallel {parallel} (ideal {ideal:.1f} s of calls)")  # fmt: skip
    local = results[0]
    print(f"{'executor':<16}{'seconds':>9}{'tasks/s':>9}{'start s':>9}{'ms/task':>9}{'peak MB':>9}")
    for m in results:
        overhead = (m.seconds - m.start - (local.seconds - local.start)) / tasks * 1000
        shown = "-" if m is local else f"{overhead:.2f}"
        print(
            f"{m.name:<16}{m.seconds:>9.1f}{tasks / m.seconds:>9.0f}{m.start:>9.1f}"
            f"{shown:>9}{m.peak_mb:>9.0f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=3000)
    parser.add_argument("--parallel", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.05)
    options = parser.parse_args()
    shape(options.tasks, options.parallel, options.latency, words=1)
    shape(options.tasks * 2, options.parallel, options.latency, words=200)


if __name__ == "__main__":
    main()
