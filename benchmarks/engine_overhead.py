"""Is the runner's overhead per task, and its behaviour under SIGKILL, no worse than at a
baseline revision? Both revisions are measured in one run, on this machine, side by side.

The baseline (default 19d64b1, the last commit before the single-engine work) is checked out
with `git worktree add --detach` in a temporary folder and synced with uv into its own
environment; "current" is the working tree. Both are driven only through the `lasagna`
command line (module names differ between the revisions). Figures, each for both:
1. sweep overhead per task: `lasagna benchmark sweep` of N tasks (2 setups x N/2 MCQ
   questions, --parallel P, an instant fake server in its own process) timed as a whole
   process, minus a bare aiohttp client sending N chat completions at the same concurrency
   to the same server (its own process too, startup included), divided by N: milliseconds
   of runner time per task; the same with CPU seconds (user + system of each process: less
   sensitive than wall time to other work on the 2 cores); and the whole process's tasks/s.
2. run overhead per task: the same for `lasagna benchmark run DATA.jsonl --tracks generation
   --generator openai/m0 --concurrency P` over N/2 questions with answers and no contexts
   (closed-book; `closed-book` if `validate-data` says generation is not supported), with a
   fresh LLM cache.
3. sweep chaos (as sweep_chaos.py): a sweep of N/2 tasks against a fake server in this
   process (10 ms a call; every 50th question fails with a 400) is SIGKILLed K times at
   seeded random moments and resumed with --continue, the last run finishing.
4. run chaos: the same for `benchmark run ... -o DIR`, resumed with `--resume -o DIR`; its
   task files are DIR/tasks/**/*.json, one line of JSON each with "error": null. Each run
   gets a fresh LLM cache, so that a call finished before a kill is made again, never
   replayed: the calls then count exactly the tasks plus those in flight at each kill.
The timings run on two shapes of question (`--shapes`): `short` (a one-line MCQ question,
0.1 KB a request) and `long` (the same with 150 words inside, 1.8 KB a request), the bare
client sending the same text. They are repeated R times (the two revisions interleaved,
after one warm-up run of each, with bytecode written as a user's venv has it) and the
medians reported, with the spread of the repeats.
Chaos reports calls made, calls lost per kill (in flight; max and total), whether every task
has exactly one whole result file, temporary files left, and files rewritten after they were
first seen (inode or mtime changed).

    uv run python benchmarks/engine_overhead.py [--baseline 19d64b1] [--tasks 4000]
        [--parallel 64] [--kills 5] [--chaos-parallel 16] [--seed 42] [--repeat 3]
        [--shapes short,long]

Verdict: an overhead is worse when current exceeds baseline by more than 10% or 0.05 ms
(whichever is larger: timings on 2 cores are noisy); chaos is exact (at most the tasks in
flight lost per kill, nothing rewritten, no temporary file left, every task exactly once).
Exit 1 when anything is worse or an invariant breaks on either revision.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # mypy, run from the repository's root, sees this folder as `benchmarks`
    from benchmarks import _harness as h
else:  # python benchmarks/engine_overhead.py puts this folder first on sys.path
    import _harness as h

ABS_TOLERANCE_MS, REL_TOLERANCE = 0.05, 0.10


@dataclass
class Chaos:
    tasks: int = 0
    calls: int = 0
    lost: list[int] = field(default_factory=list)
    exactly_once: bool = False
    temps: int = 0
    rewritten: int = 0
    problems: list[str] = field(default_factory=list)
    note: str | None = None  # why the figures are not available for this revision
    seconds: float = 0.0


SHAPES = {"short": "", "long": "the harbour opened in spring after the council voted " * 30}
"""shape -> the words inside each question: 0.1 KB or 1.8 KB requests"""


def timings(
    sides: list[h.Side], folder: Path, args: argparse.Namespace, shape: str
) -> dict[str, Any]:
    """Median sweep and run figures per side, each repeat's overhead against its own floor."""
    n, p, questions = args.tasks, args.parallel, args.tasks // 2
    padding = SHAPES[shape]

    def question(i: int) -> str:
        return h.mcq_question(i, padding)

    data = h.write_run_data(folder / "run.jsonl", questions, padding)
    tracks = {side.name: h.generation_track(side, data) for side in sides}
    raw: dict[str, dict[str, list[float]]] = {s.name: {} for s in sides}
    with h.server_process() as base_url:
        for side in sides:  # warm-up: every module either side imports gets its bytecode
            h.write_sweep(folder / "warm", base_url, 64, 2, mcq=True)
            h.timed(h.sweep_command(side, folder / "warm", p), h.clean_env())
            small = h.write_run_data(folder / "warm" / "run.jsonl", 64)
            warm = h.run_command(side, small, folder / "warm" / "run", tracks[side.name], p)
            h.timed(warm, h.run_env(base_url, folder / "warm" / "cache"))
            shutil.rmtree(folder / "warm")
        for repeat in range(args.repeat):
            bare = {"sweep": h.bare_seconds(base_url, n, p, padding)}
            bare["run"] = h.bare_seconds(base_url, questions, p, padding)
            for side in sides if repeat % 2 == 0 else sides[::-1]:
                tag = f"{repeat}-{side.name.split()[0]}"
                sweep = folder / f"sweep-{tag}"
                expected = h.write_sweep(sweep, base_url, n, 2, mcq=True, question=question)
                measured = {"sweep": h.timed(h.sweep_command(side, sweep, p), h.clean_env())}
                written = len(h.snapshot(sweep / "out", "*/*/*.json"))
                if written != len(expected):
                    raise RuntimeError(f"{side.name}: the sweep wrote {written} of {n} results")
                out = folder / f"run-{tag}"
                command = h.run_command(side, data, out, tracks[side.name], p)
                measured["run"] = h.timed(command, h.run_env(base_url, folder / f"cache-{tag}"))
                written = len(h.snapshot(out / "tasks", "**/*.json"))
                if written not in (0, questions):  # 0: another layout (said in the report)
                    raise RuntimeError(f"{side.name}: the run wrote {written} of {questions}")
                for kind, (wall, cpu) in measured.items():
                    per_task = 1e3 / (n if kind == "sweep" else questions)
                    figures = raw[side.name]
                    figures.setdefault(f"{kind}_s", []).append(wall)
                    figures.setdefault(f"{kind}_ms", []).append((wall - bare[kind][0]) * per_task)
                    figures.setdefault(f"{kind}_cpu", []).append((cpu - bare[kind][1]) * per_task)
            line = ", ".join(
                f"{name.split()[0]} sweep {f['sweep_s'][-1]:.2f} s run {f['run_s'][-1]:.2f} s"
                for name, f in raw.items()
            )
            print(f"  repeat {repeat + 1}/{args.repeat}: bare {bare['sweep'][0]:.2f} s and "
                  f"{bare['run'][0]:.2f} s, {line}", flush=True)  # fmt: skip
    medians: dict[str, dict[str, Any]] = {}
    for name, lists in raw.items():
        median = medians[name] = {k: statistics.median(v) for k, v in lists.items()}
        median["sweep_rate"] = n / median["sweep_s"]
        median["run_rate"] = questions / median["run_s"]
        median["track"] = tracks[name]
        for kind in ("sweep", "run"):  # the spread of the repeats, to judge the noise
            each = lists[f"{kind}_ms"]
            median[f"{kind}_spread"] = f"{min(each):.2f}..{max(each):.2f}"
    return medians


def _reply_sweep(request: dict[str, Any]) -> Any:
    from lasagna_judge.testing import Fault

    text = request["messages"][-1]["content"]
    if int(text.split()[-1]) % 50 == 7:  # a question no model can answer: an error record
        return Fault(status=400)
    return f"answer to {text} by {request['model']}"


def chaos(side: h.Side, kind: str, folder: Path, args: argparse.Namespace) -> Chaos:
    """SIGKILL `kind` (sweep or run) args.kills times, resume, finish; check the files."""
    from lasagna_judge.testing import FakeLLMServer

    rng = random.Random(f"{args.seed}-{kind}")  # the same kill moments for both revisions
    parallel, tasks, report = args.chaos_parallel, args.tasks // 2, Chaos()
    reply = _reply_sweep if kind == "sweep" else (lambda r: "b")
    with FakeLLMServer(reply=reply, latency=0.01) as server:
        if kind == "sweep":
            expected = h.write_sweep(folder, server.base_url, tasks, 4, mcq=False)
            first = h.sweep_command(side, folder, parallel)
            again, root, pattern = [*first, "--continue"], folder / "out", "*/*/*.json"
        else:
            data = h.write_run_data(folder / "chaos.jsonl", tasks)
            out = folder / "out"
            first = h.run_command(side, data, out, h.generation_track(side, data), parallel)
            again, root = [*first[:-2], "--resume", *first[-2:]], out / "tasks"
            pattern = "**/*.json"
            expected = []
        report.tasks = len(expected) or tasks
        first_seen: dict[Path, tuple[int, int]] = {}
        rewritten: set[Path] = set()
        start = time.perf_counter()
        for run in range(args.kills + 1):
            calls_before, files_before = server.calls, len(h.snapshot(root, pattern))
            env = h.run_env(server.base_url, folder / f"cache-{run}")
            last = run == args.kills
            process = h.spawn(
                again if run else first, env, stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE if last else subprocess.DEVNULL,
            )  # fmt: skip
            if not last:
                remaining = report.tasks - files_before
                target = calls_before + rng.randint(1, max(1, remaining // (args.kills - run + 1)))
                deadline = time.monotonic() + 120
                while server.calls < target and process.poll() is None:
                    if time.monotonic() > deadline:
                        report.problems.append(f"run {run}: no progress in 120 s")
                        break
                    time.sleep(0.0005)
                time.sleep(rng.random() * 0.05)  # so kills land between calls and writes too
                if process.poll() is not None:
                    report.problems.append(f"run {run}: ended (exit {process.returncode}) early")
                h.kill(process)
                time.sleep(0.2)  # let requests already on the wire reach the server
                lost = (server.calls - calls_before) - (
                    len(h.snapshot(root, pattern)) - files_before
                )
                report.lost.append(lost)
                if not 0 <= lost <= parallel:
                    report.problems.append(f"kill {run + 1}: {lost} calls lost, not 0..{parallel}")
            else:
                try:
                    _, stderr = process.communicate(timeout=600)
                finally:
                    h.kill(process)
                if process.returncode not in ((0, 1) if kind == "sweep" else (0,)):
                    tail = stderr.decode(errors="replace")[-500:]
                    report.problems.append(f"final run exited {process.returncode}: {tail}")
            for path, stamp in h.snapshot(root, pattern).items():
                if first_seen.setdefault(path, stamp) != stamp:
                    rewritten.add(path)
        report.rewritten = len(rewritten)
        report.seconds = time.perf_counter() - start
        report.calls = server.calls
    top = root if kind == "sweep" else root.parent
    report.temps = sum(1 for _ in top.rglob(f"{h.TEMP_PREFIX}*"))
    files = sorted(p for p in root.rglob("*") if p.is_file() and not p.name.startswith("."))
    if kind == "run" and not files and not report.problems:
        report.note = f"no task files in {root.name}/**/*.json: this revision's layout differs"
        return report
    report.exactly_once = _check_files(kind, files, expected, tasks, report.problems)
    if report.rewritten:
        report.problems.append(f"{report.rewritten} result files rewritten after first seen")
    if report.temps:
        report.problems.append(f"{report.temps} temporary files left")
    if report.calls != report.tasks + sum(report.lost):
        report.problems.append(
            f"{report.calls} calls for {report.tasks} tasks and {sum(report.lost)} lost"
        )
    return report


def _check_files(
    kind: str, files: list[Path], expected: list[Path], tasks: int, problems: list[str]
) -> bool:
    """Every task has exactly one whole (one line, well-formed) result file of the right kind."""
    before = len(problems)
    if kind == "sweep":
        if files != sorted(expected):
            gone, extra = len(set(expected) - set(files)), len(set(files) - set(expected))
            problems.append(f"{gone} results missing, {extra} unexpected files")
    else:
        counts = Counter(p.stem for p in files)
        wanted = {f"q{i}" for i in range(tasks)}
        twice = [q for q, c in counts.items() if c > 1]
        if set(counts) != wanted or twice or any(p.suffix != ".json" for p in files):
            absent, unknown = len(wanted - set(counts)), len(set(counts) - wanted)
            problems.append(f"{absent} tasks missing, {unknown} unexpected, {len(twice)} twice")
    for path in files:
        try:
            text = path.read_text()
            record = json.loads(text)
        except (OSError, ValueError) as exc:
            problems.append(f"{path}: not a whole result ({exc})")
            continue
        if text.rstrip("\n").count("\n"):
            problems.append(f"{path}: more than one line")
        if kind == "run":
            if "error" not in record or record["error"] is not None:
                problems.append(f'{path}: expected "error": null, found {str(record)[:200]}')
        elif int(path.parent.name[1:]) % 50 == 7:
            if set(record) != {"error"}:
                problems.append(f"{path}: expected an error record, found {record}")
        elif set(record) != {"ok"} or not record["ok"]["result"].startswith("answer to"):
            problems.append(f"{path}: expected an ok record, found {record}")
    return len(problems) == before


def _ratio(current: float, baseline: float) -> str:
    return f"{current / baseline:.2f}x" if baseline > 0 and current >= 0 else "n/a"


def report(
    sides: list[h.Side], times: dict[str, dict[str, Any]], chaoses: dict[str, Chaos]
) -> bool:
    """Print the table, the summary lines and the verdict; True when no worse. `times`: the
    figures of `timings` by shape."""
    base, cur = (s.name for s in sides)
    rows: list[tuple[str, Any, Any, str]] = []
    for shape, kind in itertools.product(times, ("sweep", "run")):
        b, c = times[shape][base], times[shape][cur]
        ms, cpu, rate = f"{kind}_ms", f"{kind}_cpu", f"{kind}_rate"
        rows.append((f"{shape} {kind} overhead per task, ms", f"{b[ms]:.3f}", f"{c[ms]:.3f}",
                     _ratio(c[ms], b[ms])))  # fmt: skip
        rows.append((f"{shape} {kind} CPU per task over bare, ms", f"{b[cpu]:.3f}",
                     f"{c[cpu]:.3f}", _ratio(c[cpu], b[cpu])))  # fmt: skip
        rows.append((f"{shape} {kind} tasks/s, whole process", f"{b[rate]:.0f}",
                     f"{c[rate]:.0f}", _ratio(c[rate], b[rate])))  # fmt: skip
    for kind in ("sweep", "run"):
        b, c = chaoses[f"{base}-{kind}"], chaoses[f"{cur}-{kind}"]

        def cell(x: Chaos, value: object) -> str:
            return "n/a" if x.note else str(value)

        for label, get in (
            ("tasks", lambda x: x.tasks), ("calls made", lambda x: x.calls),
            ("lost per kill, max", lambda x: max(x.lost, default=0)),
            ("lost, total", lambda x: sum(x.lost)),
            ("exactly one whole file each", lambda x: "yes" if x.exactly_once else "NO"),
            ("temporary files left", lambda x: x.temps),
            ("files rewritten", lambda x: x.rewritten),
        ):  # fmt: skip
            vb, vc = get(b), get(c)
            numbers = isinstance(vb, int) and isinstance(vc, int) and label[:4] in ("call", "lost")
            ratio = _ratio(float(vc), float(vb)) if numbers else ""
            rows.append((f"{kind} chaos: {label}", cell(b, vb), cell(c, vc), ratio))
    widths = [max(len(str(r[i])) for r in [("figure", base, cur, "cur/base"), *rows]) for i in
              range(4)]  # fmt: skip
    for row in [("figure", base, cur, "cur/base"), *rows]:
        print("  ".join(str(v).ljust(w) if i == 0 else str(v).rjust(w)
                        for i, (v, w) in enumerate(zip(row, widths, strict=True))))  # fmt: skip
    some = next(iter(times.values()))
    print(f"run track: {some[base]['track']} -> {some[cur]['track']}")
    worse = []
    for shape, kind in itertools.product(times, ("sweep", "run")):
        tb, tc = times[shape][base], times[shape][cur]
        b, c = tb[f"{kind}_ms"], tc[f"{kind}_ms"]
        bc, cc = tb[f"{kind}_cpu"], tc[f"{kind}_cpu"]
        spread = f"{tb[f'{kind}_spread']} -> {tc[f'{kind}_spread']}"
        print(f"overhead per task: {shape} {kind} {b:.3f} ms -> {c:.3f} ms ({_ratio(c, b)}; "
              f"repeats {spread}); CPU {bc:.3f} ms -> {cc:.3f} ms ({_ratio(cc, bc)})")  # fmt: skip
        if c - b > max(ABS_TOLERANCE_MS, REL_TOLERANCE * abs(b)):
            worse.append(f"{shape} {kind} overhead +{c - b:.3f} ms per task")
    for kind in ("sweep", "run"):
        pair = [chaoses[f"{name}-{kind}"] for name in (base, cur)]
        states = ["n/a" if x.note else "ok" if not x.problems else "BROKEN" for x in pair]
        maxes = " -> ".join(str(max(x.lost, default=0)) for x in pair)
        print(f"chaos: {kind} {states[0]} -> {states[1]} (lost per kill at most {maxes})")
        for name, x in zip((base, cur), pair, strict=True):
            if x.note:
                print(f"  {name} {kind}: {x.note}")
            for problem in x.problems[:10]:
                print(f"  {name} {kind}: {problem}")
            if x.problems:
                worse.append(f"{kind} chaos invariants broken on {name}")
    tolerance = f"tolerance {REL_TOLERANCE:.0%} or {ABS_TOLERANCE_MS} ms"
    verdict = f"worse by {'; '.join(worse)}" if worse else "no worse"
    print(f"verdict: {verdict} ({tolerance})")
    if os.getloadavg()[1] > 1.0:
        print("note: the 5-minute load average is above 1: other work shared the 2 cores and the "
              "timings are noisy; rerun on a quiet machine or with a larger --repeat")  # fmt: skip
    return not worse


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="19d64b1", help="git revision to compare with")
    parser.add_argument("--tasks", type=int, default=4000, help="sweep tasks; run and chaos: half")
    parser.add_argument("--parallel", type=int, default=64, help="tasks in flight, timings")
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--chaos-parallel", type=int, default=16, help="tasks in flight, chaos")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--repeat", type=int, default=3, help="timings: the median of R")
    parser.add_argument("--shapes", default="short,long", help="timings: question sizes")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # clean up as for Ctrl-C
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    folder = Path(tempfile.mkdtemp(prefix="engine-overhead-"))
    try:
        with h.baseline_side(args.baseline) as (baseline, base_line):
            current, cur_line = h.current_side()
            print(base_line, cur_line, sep="\n", flush=True)
            sides = [baseline, current]
            print(f"timings: {args.tasks} sweep tasks, {args.tasks // 2} run tasks, "
                  f"--parallel {args.parallel}, median of {args.repeat}", flush=True)  # fmt: skip
            times = {
                shape: timings(sides, folder / f"timings-{shape}", args, shape)
                for shape in args.shapes.split(",")
            }
            chaoses = {}
            for kind in ("sweep", "run"):
                for side in sides:
                    tag = f"{side.name}-{kind}"
                    chaoses[tag] = chaos(side, kind, folder / tag.replace(" ", "-"), args)
                    print(f"  chaos {tag}: {chaoses[tag].seconds:.1f} s", flush=True)
        print(f"chaos: {args.tasks // 2} tasks, {args.kills} SIGKILLs, --parallel "
              f"{args.chaos_parallel}, seed {args.seed}")  # fmt: skip
        ok = report(sides, times, chaoses)
    finally:
        h.reap()
        shutil.rmtree(folder, ignore_errors=True)
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # the worktree, the folders and the children are gone already
        sys.exit("interrupted")
