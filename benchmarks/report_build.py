"""How fast a large run's results open: `lasagna benchmark report` on 10,000 questions x 4
setups, and results.json into pandas.

    uv run --group documents python benchmarks/report_build.py [--questions 10000] [--repeat 3]

On the two shapes of data of `report_open.py` (`short`: 3-word answers, 60-word passages,
rankings of 9; `long`: 40-word answers, 300-word passages, rankings of 20), it runs one
sweep of 4 setups (BM25 top-3 and top-5, two predictions files: 4N tasks), then times, each
`--repeat` times (the median counts):

- `lasagna benchmark report RUN -o report.html`, the whole command as a user starts it
  (the interpreter's start, reading results.json, the task records and the data again, the
  paired comparisons, the page written). Goal: under 3 s;
- results.json into pandas, in this process once pandas is imported:
  `pandas.json_normalize(results, "per_query", max_level=0)` (one row per question and
  setup, its nested fields as they are: flattened all the way, each judged document of
  `judgments` would become a column of its own, 10,020 of them here, in 46 s) and
  `load_results(RUN).to_pandas()` (lasagna's export as a frame). Goal: `to_pandas()` under
  2 s; `json_normalize`, pandas' own reading of the file, is printed beside it for reference
  (3 to 4.5 s: `json.load` of the whole file, then a frame of nested objects).
  (`pandas.read_json` of the file itself refuses it: its top level is one object, not a
  table; the script says so if that changes.)

Each line prints the time and its ratio to the goal (under 1.00 meets it).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report_open import SHAPES, lasagna, make_data

REPORT_GOAL_S = 3.0
PANDAS_GOAL_S = 2.0


def timed(repeat: int, work: Callable[[], Any]) -> list[float]:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return times


def line(what: str, times: list[float], goal: float) -> bool:
    median = statistics.median(times)
    print(f"  {what}: median {median:.2f} s ({', '.join(f'{t:.2f}' for t in times)}); "
          f"{median / goal:.2f}x the goal of {goal:.0f} s: "
          f"{'met' if median < goal else 'NOT met'}")  # fmt: skip
    return median < goal


def report_times(run: Path, repeat: int) -> list[float]:
    command = str(Path(sys.executable).parent / "lasagna")
    target = run.parent / "report.html"
    args = [command, "benchmark", "report", str(run), "-o", str(target)]
    # As an install runs it: its modules compiled once (a first run, not timed), where
    # PYTHONDONTWRITEBYTECODE would compile them again at every start (0.3 s here).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

    def report() -> None:
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL, env=env)

    report()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    times = timed(repeat, report)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / repeat
    print(f"  benchmark report: {cpu:.2f} s of CPU a run (the wall time below is more when "
          "other work shares the cores)")  # fmt: skip
    return times


def pandas_lines(run: Path, repeat: int) -> bool:
    import pandas

    from lasagna_cli import load_results

    path = run / "results.json"

    def normalized() -> Any:
        with path.open("rb") as handle:
            document = json.load(handle)
        return pandas.json_normalize(
            document["results"],
            "per_query",
            meta=[["dataset", "name"], ["setup", "name"]],
            max_level=0,
        )

    frame = normalized()
    print(f"  results.json: {path.stat().st_size / 1e6:.1f} MB; "
          f"json_normalize: {frame.shape[0]:,} rows x {frame.shape[1]} columns")  # fmt: skip
    try:
        pandas.read_json(path)
        print("  pandas.read_json reads the file itself now")
    except ValueError as exc:
        print(f"  pandas.read_json of the file: refused ({exc})")
    reference = timed(repeat, normalized)
    runs = ", ".join(f"{t:.2f}" for t in reference)
    print(f"  json.load + pandas.json_normalize (reference, no goal): median "
          f"{statistics.median(reference):.2f} s ({runs})")  # fmt: skip
    exported = timed(repeat, lambda: load_results(run).to_pandas())
    return line("load_results(RUN).to_pandas()", exported, PANDAS_GOAL_S)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--shapes", default="short,long")
    args = parser.parse_args()
    met = True
    with tempfile.TemporaryDirectory() as tmp:
        for shape in args.shapes.split(","):
            words, passage, ranks = SHAPES[shape]
            print(f"\n== {shape}: {words}-word answers, {passage}-word passages, "
                  f"rankings of {ranks}; {args.questions:,} questions x 4 setups")  # fmt: skip
            folder = Path(tmp) / shape
            sweep = make_data(folder, args.questions, shape)
            run = folder / "run"
            started = time.perf_counter()
            lasagna("benchmark", "run", str(sweep), "-o", str(run), "--concurrency", "32")
            print(f"  benchmark run: {time.perf_counter() - started:.1f} s (not timed "
                  "against a goal)")  # fmt: skip
            met &= line("lasagna benchmark report", report_times(run, args.repeat), REPORT_GOAL_S)
            met &= pandas_lines(run, args.repeat)
    raise SystemExit(0 if met else 1)


if __name__ == "__main__":
    main()
