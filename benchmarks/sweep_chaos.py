"""Kill `lasagna benchmark sweep` with SIGKILL at random moments, resume, and check nothing is
lost or done twice.

A sweep of 2,000 tasks (default) runs as a real subprocess against the fake
OpenAI-compatible server, which lives in this process so that it survives the kills and
counts every call. Five times, once the server has seen a random number of new calls, the
sweep is SIGKILLed and resumed with --continue; the last run finishes. Then:
- every task has exactly one well-formed result file ({"ok": ...} or {"error": ...}; the
  questions scripted to fail have the error), and no temporary file is left;
- no finished result file was ever rewritten (each keeps the inode and mtime it had when
  first seen);
- calls made = tasks + the calls lost at each kill, and each kill lost at most --parallel
  (the tasks in flight).

Two shapes: `wide` (4 setups, short answers: 2,000 tasks are 500 question folders) and
`long` (16 setups, 2 KB answers: fewer folders, and each record's write is long enough
for kills to land inside it). There is no peer to beat: the figures are exact, and the
one ratio printed is the calls made per task (1 plus those in flight at each kill).

    uv run python benchmarks/sweep_chaos.py [--tasks 2000] [--kills 5] [--parallel 16]
        [--seed N] [--shapes wide,long]

tests/cli/test_sweep_chaos.py runs the same function on fewer tasks.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lasagna_synth import TEMP_PREFIX  # the one atomic writer's temporary files

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import write_sweep

SHAPES = {"wide": (4, 0), "long": (16, 300)}
"""shape -> (setups, words added to each answer)"""


@dataclass
class Kill:
    calls: int
    files: int

    @property
    def lost(self) -> int:
        """Calls whose result never reached disk: the tasks in flight at the kill."""
        return self.calls - self.files


@dataclass
class ChaosReport:
    tasks: int
    parallel: int
    seed: int
    kills: list[Kill] = field(default_factory=list)
    calls: int = 0
    files: int = 0
    errors: int = 0
    expected_errors: int = 0
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.problems


def _lasagna() -> list[str]:
    return [sys.executable, "-c", "from lasagna_cli._app import main; main()"]


def _snapshot(paths: list[Path]) -> dict[Path, tuple[int, int]]:
    seen = {}
    for path in paths:
        try:
            stat = path.stat()
        except FileNotFoundError:
            continue
        seen[path] = (stat.st_ino, stat.st_mtime_ns)
    return seen


def chaos(
    tasks: int = 2000,
    kills: int = 5,
    parallel: int = 16,
    seed: int | None = None,
    latency: float = 0.01,
    folder: Path | None = None,
    shape: str = "wide",
) -> ChaosReport:
    from lasagna_judge.testing import FakeLLMServer, Fault

    seed = random.randrange(2**32) if seed is None else seed
    rng = random.Random(seed)
    setups, answer_words = SHAPES[shape]
    setups = setups if tasks >= setups else 1
    padding = " lorem" * answer_words
    report = ChaosReport(tasks=0, parallel=parallel, seed=seed)

    def reply(request: dict[str, Any]) -> str | Fault:
        text = request["messages"][-1]["content"]
        number = int(text.split()[-1])
        if number % 50 == 7:  # a question no model can answer: recorded as an error
            return Fault(status=400)
        return f"answer to {text} by {request['model']}{padding}"

    folder = folder or Path(tempfile.mkdtemp(prefix="sweep-chaos-"))
    with FakeLLMServer(reply=reply, latency=latency) as server:
        expected = write_sweep(folder, server.base_url, tasks, setups, mcq=False)
        report.tasks = len(expected)
        command = [
            *_lasagna(), "benchmark", "sweep",
            "--datasets", str(folder / "datasets.json"),
            "--benchmark", str(folder / "setups.toml"),
            "--output", str(folder / "out"),
            "--parallel", str(parallel),
        ]  # fmt: skip
        first_seen: dict[Path, tuple[int, int]] = {}
        start = time.perf_counter()
        for run in range(kills + 1):
            args = command + (["--continue"] if run else [])
            calls_before = server.calls
            files_before = len(_snapshot(expected))
            last = run == kills
            process = subprocess.Popen(
                args,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE if last else subprocess.DEVNULL,
                env=os.environ,
            )
            if run < kills:
                remaining = report.tasks - files_before
                target = calls_before + rng.randint(1, max(1, remaining // (kills - run + 1)))
                deadline = time.monotonic() + 120
                while server.calls < target and process.poll() is None:
                    if time.monotonic() > deadline:
                        report.problems.append(f"run {run}: the sweep made no progress")
                        break
                    time.sleep(0.0005)
                # Wait a random moment more, so kills also land between calls and writes.
                time.sleep(rng.random() * 0.05)
                if process.poll() is not None:
                    report.problems.append(f"run {run}: the sweep ended before the kill")
                process.send_signal(signal.SIGKILL)
                process.wait()
                time.sleep(0.2)  # let requests already on the wire reach the server
                kill = Kill(server.calls - calls_before, len(_snapshot(expected)) - files_before)
                report.kills.append(kill)
                if not 0 <= kill.lost <= parallel:
                    report.problems.append(
                        f"kill {run + 1}: {kill.lost} calls lost, expected 0 to {parallel}"
                    )
            else:
                _, stderr = process.communicate(timeout=600)
                if process.returncode not in (0, 1):
                    report.problems.append(
                        f"final run exited {process.returncode}: {stderr.decode()[-500:]}"
                    )
            for path, stamp in _snapshot(expected).items():
                if first_seen.setdefault(path, stamp) != stamp:
                    report.problems.append(f"{path} was rewritten after it was finished")
        report.seconds = time.perf_counter() - start
        report.calls = server.calls

    out = folder / "out"
    temps = list(out.rglob(f"{TEMP_PREFIX}*"))
    if temps:
        report.problems.append(f"{len(temps)} temporary files left, e.g. {temps[0]}")
    all_files = [p for p in out.rglob("*") if p.is_file()]
    report.files = len(all_files)
    if sorted(all_files) != sorted(expected):
        extra = set(all_files) - set(expected)
        missing = set(expected) - set(all_files)
        report.problems.append(f"{len(missing)} results missing, {len(extra)} unexpected files")
    for path in expected:
        try:
            record = json.loads(path.read_bytes())
        except (OSError, ValueError) as exc:
            report.problems.append(f"{path}: not a well-formed result ({exc})")
            continue
        number = int(path.parent.name[1:])
        should_fail = number % 50 == 7
        report.expected_errors += should_fail
        if should_fail:
            report.errors += "error" in record
            if set(record) != {"error"}:
                report.problems.append(f"{path}: expected an error record, found {record}")
        elif set(record) != {"ok"} or not record["ok"]["result"].startswith("answer to"):
            report.problems.append(f"{path}: expected an ok record, found {record}")
    lost = sum(k.lost for k in report.kills)
    if report.calls != report.tasks + lost:
        report.problems.append(
            f"{report.calls} calls made for {report.tasks} tasks and {lost} lost at the kills"
        )
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--parallel", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--shapes", default="wide,long")
    args = parser.parse_args()
    failed = False
    for shape in args.shapes.split(","):
        report = chaos(args.tasks, args.kills, args.parallel, args.seed, args.latency, shape=shape)
        failed |= not print_report(shape, report)
    sys.exit(1 if failed else 0)


def print_report(shape: str, report: ChaosReport) -> bool:
    lost = [k.lost for k in report.kills]
    print(
        f"\n== {shape}: tasks {report.tasks}, --parallel {report.parallel}, seed "
        f"{report.seed}, {len(report.kills)} SIGKILLs, {report.seconds:.1f} s in all"
    )
    print(f"calls per killed run: {[k.calls for k in report.kills]}")
    print(f"calls lost at each kill (in flight): {lost} (bound: {report.parallel} each)")
    print(
        f"calls made {report.calls} = tasks {report.tasks} + lost {sum(lost)}: "
        f"{report.calls / report.tasks:.3f} calls a task"
    )
    if report.ok:
        print(
            f"result files {report.files} (errors {report.errors} of "
            f"{report.expected_errors} scripted), temporary files left: 0"
        )
        print("OK: every task has exactly one well-formed result; nothing lost, nothing redone")
    else:
        print("FAILED:\n  " + "\n  ".join(report.problems[:20]))
    return report.ok


if __name__ == "__main__":
    main()
