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
- the driver's own CPU time per task (its threads, not Ray's processes): what bounds the
  tasks per second one driver can feed a cluster of any size;
- the driver's peak memory (VmHWM).

The ideal is tasks x latency / parallel. The second shape runs twice the tasks with
prompts 70x longer (more bytes per task to and from the workers).

Measured on this 2-core machine (2026-12-01, another test suite running beside it):

    3000 tasks   local 3.5 s (866/s)   ray 1 worker 13.4 s, 2 workers 14.5 s
                 Ray start 7.6-8.2 s; then 0.9-1.1 ms/task more than local;
                 driver CPU 0.74 ms/task local, 1.2-1.3 ms/task on Ray (its start included)
    6000 tasks   local 6.8 s (880/s)   ray 19.5 s / 20.4 s; start 9-10 s; 0.6-0.7 ms/task;
                 driver CPU 1.15 ms/task local, 0.81 ms/task on Ray; driver peak 62-73 MB
                 local, 178-203 MB on Ray

On two cores the driver, Ray's own processes (GCS, raylet, agents), the actors and the
fake server share the CPUs, so a second worker cannot help, and Ray's start (ray.init:
5-6 s quiet) dominates a few thousand tasks: Ray pays off when the calls, not this machine,
are the limit (more hosts to call from, local models on several hosts). A Ray started once
(`ray start --head`, then `--ray-address auto`) saves the start of each command. Tasks go
to the actors 16 to a Ray call (engine/run/_ray.py's CHUNK), 16 times fewer Ray calls than one
per task; on this machine the two measured within its noise (3000 tasks: 14.2-18.6 s one
per call, 13.4-16.5 s in chunks), so the chunks matter on a driver feeding many hosts.

    uv run --group ray python benchmarks/ray_scaling.py [--tasks 3000] [--parallel 64]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import write_sweep

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
    cpu_s: float
    """The driver process's own CPU time (its threads, not Ray's processes)."""


def write_inputs(folder: Path, base_url: str, tasks: int, words: int) -> list[str]:
    filler = " ".join(["context"] * words)
    write_sweep(folder, base_url, tasks, 2, mcq=False, question=lambda i: f"{filler} question {i}")
    return [
        "benchmark", "sweep", "-d", str(folder / "datasets.json"),
        "-b", str(folder / "setups.toml"), "-c", str(folder / "config.toml"),
    ]  # fmt: skip


def watch(pid: int, peaks: list[float], cpu: list[float], stop: threading.Event) -> None:
    """The driver's peak memory (VmHWM) and CPU seconds, read until it exits."""
    ticks = os.sysconf("SC_CLK_TCK")
    while not stop.is_set():
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peaks.append(int(line.split()[1]) / 1024)
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            if fields[0] != "Z":
                cpu.append((int(fields[11]) + int(fields[12])) / ticks)
        except OSError:
            return
        time.sleep(0.02)


def run(
    name: str, command: list[str], env: dict[str, str], server: subprocess.Popen[str]
) -> Measured:
    started_clock = time.monotonic()  # the server's clock: one per machine
    started = time.perf_counter()
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    peaks: list[float] = []
    cpu: list[float] = []
    stop = threading.Event()
    watcher = threading.Thread(target=watch, args=(process.pid, peaks, cpu, stop))
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
    return Measured(name, seconds, start, max(peaks, default=0.0), max(cpu, default=0.0))


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
    print(
        f"{'executor':<16}{'seconds':>9}{'tasks/s':>9}{'start s':>9}{'ms/task':>9}"
        f"{'driver CPU ms/task':>20}{'peak MB':>9}"
    )
    for m in results:
        overhead = (m.seconds - m.start - (local.seconds - local.start)) / tasks * 1000
        shown = "-" if m is local else f"{overhead:.2f}"
        print(
            f"{m.name:<16}{m.seconds:>9.1f}{tasks / m.seconds:>9.0f}{m.start:>9.1f}"
            f"{shown:>9}{m.cpu_s / tasks * 1000:>20.2f}{m.peak_mb:>9.0f}"
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
