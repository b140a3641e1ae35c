"""The install, as a new user gets it: its size, the README's first command, `lasagna --help`.

    uv run python benchmarks/install_size.py [--revision HEAD] [--baseline REV] [--keep]

For each revision (the one measured, and the baseline when given), in one run:

1. a clean clone of this repository into a temporary folder next to shared/ (`git clone`,
   then `git checkout REV`), with a fresh environment of its own (`UV_PROJECT_ENVIRONMENT`
   in that folder) and uv's package cache as it is (warm: a first sync into a scratch
   environment fills it, untimed);
2. the README's first command, timed: `pip install uv && uv run lasagna benchmark run
   examples/data/pasta.jsonl --profile speed` (goal: under 30 s), with Python writing its
   bytecode as on a user's machine (PYTHONDONTWRITEBYTECODE unset);
3. the size on disk of the environment that command created (goal: at most 300 MB), and its
   largest distributions;
4. `lasagna --help` from that environment, the median of 5 runs after a first one (goal:
   under 0.3 s).

Each figure is printed with "goal met" or "goal NOT met"; with --baseline, the ratio to the
baseline's too. Exit 1 when a goal is not met. The clones are removed unless --keep.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
FIRST_COMMAND = (
    "pip install uv && uv run lasagna benchmark run examples/data/pasta.jsonl --profile speed"
)
GOAL_MB = 300.0
GOAL_FIRST_S = 30.0
GOAL_HELP_S = 0.3
HELP_RUNS = 5


@dataclass
class Figures:
    revision: str
    size_mb: float
    distributions: list[tuple[float, str]]
    first_s: float
    help_s: float


def _env(environment: Path) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT")
    }
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's Python writes its bytecode
    env["UV_PROJECT_ENVIRONMENT"] = str(environment)
    return env


def _run(command: list[str] | str, cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        command,
        cwd=cwd,
        env=env,
        shell=isinstance(command, str),
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(
            f"failed ({done.returncode}): {command}\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
        )
    return elapsed


def _disk_mb(folder: Path) -> float:
    """What `du` says: the blocks the files take, each file once."""
    out = subprocess.run(["du", "-sk", str(folder)], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[0]) / 1024


def _distributions(environment: Path) -> list[tuple[float, str]]:
    """(MB, name) of each installed distribution, from its RECORD, largest first."""
    found: list[tuple[float, str]] = []
    for record in environment.glob("lib/python3*/site-packages/*.dist-info/RECORD"):
        site = record.parent.parent
        total = 0
        with record.open(newline="") as handle:
            for row in csv.reader(handle):
                with contextlib.suppress(OSError, IndexError):
                    total += (site / row[0]).stat().st_size
        found.append((total / 1e6, record.parent.name.removesuffix(".dist-info").rsplit("-", 1)[0]))
    return sorted(found, reverse=True)


def measure(revision: str, workdir: Path) -> Figures:
    clone = workdir / f"clone-{revision}"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    subprocess.run(["git", "checkout", "-q", revision], cwd=clone, check=True)
    # Warm the package cache with this revision's lock (untimed, another environment).
    _run(["uv", "sync", "--frozen", "-q"], clone, _env(workdir / f"warm-{revision}"))
    environment = workdir / f"env-{revision}"
    env = _env(environment)
    first = _run(FIRST_COMMAND, clone, env)
    size = _disk_mb(environment)
    lasagna = environment / "bin" / "lasagna"
    _run([str(lasagna), "--help"], clone, env)
    helps = [_run([str(lasagna), "--help"], clone, env) for _ in range(HELP_RUNS)]
    return Figures(revision, size, _distributions(environment), first, statistics.median(helps))


def _verdict(value: float, goal: float, *, at_most: bool) -> str:
    met = value <= goal if at_most else value < goal
    return "goal met" if met else "goal NOT met"


def report(figures: Figures, baseline: Figures | None) -> bool:
    def ratio(value: float, before: float) -> str:
        return f", {value / before:.2f}x the baseline's {before:,.2f}" if baseline else ""

    print(f"revision {figures.revision}")
    print(
        f"  environment of `uv run lasagna benchmark run examples/data/pasta.jsonl` on a fresh "
        f"clone: {figures.size_mb:,.0f} MB (goal <= {GOAL_MB:.0f} MB): "
        f"{_verdict(figures.size_mb, GOAL_MB, at_most=True)}"
        + ratio(figures.size_mb, baseline.size_mb if baseline else 1)
    )
    print(
        "    largest: "
        + ", ".join(f"{name} {mb:,.0f}" for mb, name in figures.distributions[:8])
        + f" MB ({len(figures.distributions)} distributions)"
    )
    print(
        f"  the README's first command, warm package cache: {figures.first_s:.1f} s "
        f"(goal < {GOAL_FIRST_S:.0f} s): {_verdict(figures.first_s, GOAL_FIRST_S, at_most=False)}"
        + ratio(figures.first_s, baseline.first_s if baseline else 1)
    )
    print(
        f"  lasagna --help: {figures.help_s:.3f} s, median of {HELP_RUNS} (goal < "
        f"{GOAL_HELP_S} s): {_verdict(figures.help_s, GOAL_HELP_S, at_most=False)}"
        + ratio(figures.help_s, baseline.help_s if baseline else 1)
    )
    return (
        figures.size_mb <= GOAL_MB
        and figures.first_s < GOAL_FIRST_S
        and figures.help_s < GOAL_HELP_S
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--revision", default="HEAD", help="the revision measured (committed)")
    parser.add_argument("--baseline", help="a revision to measure too, for ratios")
    parser.add_argument("--keep", action="store_true", help="keep the clones and environments")
    args = parser.parse_args()
    revision = subprocess.run(
        ["git", "rev-parse", "--short", args.revision],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    parent = SHARED.parent if SHARED.is_dir() else Path(tempfile.gettempdir())
    workdir = Path(tempfile.mkdtemp(prefix="lasagna-install-", dir=parent))
    try:
        before = None
        if args.baseline:
            base = subprocess.run(
                ["git", "rev-parse", "--short", args.baseline],
                cwd=REPO,
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
            before = measure(base, workdir)
            report(before, None)
        ok = report(measure(revision, workdir), before)
    finally:
        if args.keep:
            print(f"kept: {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
