"""A newcomer's first steps, timed from a fresh clone: the setup, the README's first command,
the README's test command, and a tour command run while the tests' environment is built.

    uv run python benchmarks/newcomer_times.py [--cache fresh|warm] [--revision HEAD]
        [--meanwhile-after 10] [--no-tests] [--keep]

In a temporary folder with nothing beside the clone (no ../shared, and the upstream mirrors
that some tests run pointed at a missing folder, as on a newcomer's machine), one after
another:

1. `git clone` of this repository, then `git checkout REV`; the clone's own `.venv`, a
   lasagna cache of its own (`LASAGNA_CACHE_DIR`), and uv's package cache either fresh
   (`--cache fresh`: `UV_CACHE_DIR` in the temporary folder, so every wheel is downloaded
   and llama.cpp compiled, as on a new machine) or the one this machine has (`--cache
   warm`, the default: as a second clone);
2. the setup: `uv run lasagna --help`, which creates the environment of the default groups;
3. the README's first command, `pip install uv && uv run lasagna benchmark run
   examples/data/pasta.jsonl --profile speed`, on that environment;
4. the README's test command, `pip install uv && uv run --group local --group documents
   pytest`, split by its output into uv's sync of the groups (with llama.cpp's build, from
   uv's "Building llama-cpp-python" to its "Built" line) and pytest (from its "test session
   starts" line);
5. meanwhile, `--meanwhile-after` seconds into step 4: the tour's first command, `uv run
   lasagna benchmark validate-data examples/data/pasta.jsonl`, as the README writes it and
   with `--no-sync`, each timed from its start to its exit, beside the same command run
   alone before step 4. `uv run` waits, silent, for the environment's lock while another
   `uv run` syncs it; `--no-sync` does not wait.

Every figure is wall time in seconds, printed with the machine's cores and its load
averages before, during (sampled every 15 s) and after the run: the load of other work
slows every step. The temporary folder (and a fresh cache) is removed unless --keep.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SETUP = ["uv", "run", "lasagna", "--help"]
FIRST_COMMAND = (
    "pip install uv && uv run lasagna benchmark run examples/data/pasta.jsonl --profile speed"
)
TEST_COMMAND = "pip install uv && uv run --group local --group documents pytest"
TOUR_COMMAND = ["uv", "run", "lasagna", "benchmark", "validate-data", "examples/data/pasta.jsonl"]
TOUR_NO_SYNC = [*TOUR_COMMAND[:2], "--no-sync", *TOUR_COMMAND[2:]]
MIRRORS = ("KAG_MIRROR", "OPENVIKING_MIRROR", "CHROMA_CHUNKING_MIRROR")
_BUILDING = re.compile(r"Building llama-cpp-python\b")
_BUILT = re.compile(r"Built llama-cpp-python\b")
_SESSION = re.compile(r"=+ test session starts =+")
_SUMMARY = re.compile(r"=+ .*\b(passed|failed|error)\b.* in [\d.]+s")


@dataclass
class Timed:
    """One command: its wall time, and when each line of its output came (seconds in)."""

    seconds: float
    lines: list[tuple[float, str]] = field(default_factory=list)
    returncode: int = 0

    def first(self, pattern: re.Pattern[str]) -> float | None:
        return next((at for at, line in self.lines if pattern.search(line)), None)

    def last_line(self, pattern: re.Pattern[str]) -> str:
        return next((line for _, line in reversed(self.lines) if pattern.search(line)), "")


_UV_SUMMARY = re.compile(r"^\s*(Prepared|Installed) \d+ packages? in ")


def _uv_summary(timed: Timed) -> str:
    """uv's own lines on what it fetched and built ("Prepared N packages in ...") and
    installed, or what it said when it had nothing to do."""
    lines = [line.strip() for _, line in timed.lines if _UV_SUMMARY.match(line)]
    return "; ".join(lines) or "uv: nothing to fetch or install"


class Load:
    """The 1-minute load average, sampled every 15 s on a thread until stopped."""

    def __init__(self) -> None:
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(15):
            self.samples.append(os.getloadavg()[0])

    def __enter__(self) -> Load:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


def _environment(work: Path, cache: str) -> dict[str, str]:
    """This process's environment, as a newcomer's shell has it: no virtual environment of
    ours, Python writing its bytecode, a lasagna cache of the clone's own, no mirrors."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"VIRTUAL_ENV", "PYTHONDONTWRITEBYTECODE", *MIRRORS}
        and k not in {"UV", "UV_PROJECT_ENVIRONMENT", "UV_RUN_RECURSION_DEPTH"}
    }
    if "VIRTUAL_ENV" in os.environ:  # our environment's bin/ off PATH too
        ours = str(Path(os.environ["VIRTUAL_ENV"]) / "bin")
        env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if p != ours)
    env["LASAGNA_CACHE_DIR"] = str(work / "lasagna-cache")
    for name in MIRRORS:
        env[name] = str(work / "no-mirror")
    if cache == "fresh":
        env["UV_CACHE_DIR"] = str(work / "uv-cache")
    return env


def _run(command: list[str] | str, cwd: Path, env: dict[str, str], *, check: bool = True) -> Timed:
    """Run a command to its end, its output (stdout and stderr) timestamped line by line;
    exit with its last lines when it fails, unless `check` is false."""
    start = time.perf_counter()
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        shell=isinstance(command, str),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        bufsize=1,
    )
    assert process.stdout is not None
    timed = Timed(0.0)
    for line in process.stdout:
        timed.lines.append((time.perf_counter() - start, line.rstrip("\n")))
    process.wait()
    timed.seconds = time.perf_counter() - start
    timed.returncode = process.returncode
    if check and process.returncode != 0:
        tail = "\n".join(line for _, line in timed.lines[-40:])
        sys.exit(f"failed ({process.returncode}) after {timed.seconds:.0f} s: {command}\n{tail}")
    return timed


def _in_background(
    command: list[str] | str, cwd: Path, env: dict[str, str]
) -> tuple[threading.Thread, list[Timed]]:
    """Run a command on a thread; its Timed, whatever its exit, in the list when it ends."""
    done: list[Timed] = []
    thread = threading.Thread(target=lambda: done.append(_run(command, cwd, env, check=False)))
    thread.start()
    return thread, done


def _minutes(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds < 60 else f"{seconds:,.0f} s ({seconds / 60:.1f} min)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--cache",
        choices=("fresh", "warm"),
        default="warm",
        help="uv's package cache: fresh (downloads and the llama.cpp build) or this machine's",
    )
    parser.add_argument("--revision", default="HEAD", help="the revision measured (committed)")
    parser.add_argument(
        "--meanwhile-after",
        type=float,
        default=10.0,
        help="seconds into the test command to start the tour command beside it",
    )
    parser.add_argument("--no-tests", action="store_true", help="stop after the first command")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()
    revision = subprocess.run(
        ["git", "rev-parse", "--short", args.revision],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()

    work = Path(tempfile.mkdtemp(prefix="lasagna-newcomer-"))
    clone = work / "lasagna"
    env = _environment(work, args.cache)
    before = os.getloadavg()
    print(
        f"revision {revision}, uv's cache {args.cache}, {os.cpu_count()} cores; load average "
        f"before: {before[0]:.2f} {before[1]:.2f} {before[2]:.2f} (1, 5, 15 min)",
        flush=True,
    )
    try:
        with Load() as load:
            cloned = _run(["git", "clone", "-q", str(REPO), str(clone)], work, env)
            subprocess.run(["git", "checkout", "-q", revision], cwd=clone, check=True)
            print(f"git clone: {cloned.seconds:.1f} s", flush=True)
            setup = _run(SETUP, clone, env)
            print(f"setup, `{' '.join(SETUP)}`: {_minutes(setup.seconds)}", flush=True)
            print(f"  {_uv_summary(setup)}", flush=True)
            first = _run(FIRST_COMMAND, clone, env)
            print(f"the README's first command, after the setup: {_minutes(first.seconds)}")
            newcomer = setup.seconds + first.seconds
            print(f"  as a newcomer runs it, setup included: {_minutes(newcomer)}", flush=True)
            if not args.no_tests:
                alone = [_run(TOUR_COMMAND, clone, env).seconds for _ in range(3)]
                _tests(clone, env, args.meanwhile_after, statistics.median(alone))
        after = os.getloadavg()
        if load.samples:
            print(
                f"load average during the run: mean {statistics.mean(load.samples):.2f}, max "
                f"{max(load.samples):.2f} (1 min, {len(load.samples)} samples every 15 s, this "
                "run's own work included)"
            )
        print(f"load average after: {after[0]:.2f} {after[1]:.2f} {after[2]:.2f}")
    finally:
        if args.keep:
            print(f"kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def _tests(clone: Path, env: dict[str, str], meanwhile_after: float, alone: float) -> None:
    thread, done = _in_background(TEST_COMMAND, clone, env)
    time.sleep(meanwhile_after)
    beside, no_sync_done = _in_background(TOUR_NO_SYNC, clone, env)
    waited = _run(TOUR_COMMAND, clone, env)
    beside.join()
    thread.join()
    no_sync, tests = no_sync_done[0], done[0]
    session = tests.first(_SESSION)
    building, built = tests.first(_BUILDING), tests.first(_BUILT)
    print(f"the README's test command: {_minutes(tests.seconds)}")
    if session is not None:
        print(f"  uv's sync of the local and documents groups: {_minutes(session)}")
        print(f"    {_uv_summary(tests)}")
        if building is not None and built is not None:
            print(f"    of which llama-cpp-python's build: {_minutes(built - building)}")
        else:
            print("    llama-cpp-python was not built (a wheel from uv's cache)")
        print(f"  pytest: {_minutes(tests.seconds - session)}")
    print(f"  {tests.last_line(_SUMMARY).strip('= ')}")
    if tests.returncode != 0:
        failures = [line for _, line in tests.lines if line.startswith(("FAILED ", "ERROR "))]
        print(f"  exit {tests.returncode}; " + ("its failures:" if failures else "its end:"))
        for line in failures or [line for _, line in tests.lines[-30:]]:
            print(f"    {line}")
    print(
        f"meanwhile, {meanwhile_after:.0f} s into the test command: "
        f"`{' '.join(TOUR_COMMAND)}` took {waited.seconds:.1f} s "
        f"(alone: {alone:.1f} s, median of 3), "
        f"its first output after {waited.lines[0][0] if waited.lines else waited.seconds:.1f} s; "
        f"the same with --no-sync, started beside it: {no_sync.seconds:.1f} s"
        + ("" if no_sync.returncode == 0 else f" (it failed, exit {no_sync.returncode})")
    )


if __name__ == "__main__":
    main()
