"""Helpers of benchmarks/engine_overhead.py: the two checkouts (the working tree and a
baseline revision in a temporary git worktree with its own environment), child processes
that are always reaped, the fake server in its own process, the bare aiohttp client, and the
input files. Nothing here imports lasagna: both revisions are driven through `lasagna` only.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

# The runner's own prefix for temporary files (lasagna_cli._store.TEMP_PREFIX at 19d64b1),
# hard-coded because the harness may not import lasagna_cli: its modules move between revisions.
TEMP_PREFIX = ".lasagna-tmp-"

REPO = Path(__file__).resolve().parents[1]
_LIVE: set[subprocess.Popen[bytes]] = set()


@dataclass(frozen=True)
class Side:
    """One revision under test: where its code is and the `bin/` of its environment."""

    name: str
    root: Path
    bin: Path

    @property
    def lasagna(self) -> str:
        return str(self.bin / "lasagna")


# Dropped from the children's environment: our venv, and PYTHONDONTWRITEBYTECODE, under which
# a fresh checkout compiles every module at each start (0.2 s more than a warm venv here).
_DROPPED = ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE")


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without the variables that tie a child to our venv."""
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED}
    env.update(extra)
    return env


def _check(side: Side) -> str:
    """`lasagna --version`, after checking that the side's lasagna_cli lies in its checkout."""
    where = subprocess.run(
        [str(side.bin / "python"), "-c", "import lasagna_cli; print(lasagna_cli.__file__)"],
        capture_output=True, text=True, env=clean_env(), check=True,
    ).stdout.strip()  # fmt: skip
    if not Path(where).resolve().is_relative_to(side.root.resolve()):
        raise SystemExit(f"{side.name}: lasagna_cli is {where}, outside {side.root}")
    version = subprocess.run(
        [side.lasagna, "--version"], capture_output=True, text=True, env=clean_env(), check=True
    ).stdout.strip()
    return f"{side.name}: {version}, lasagna_cli from {Path(where).parent}"


def current_side() -> tuple[Side, str]:
    side = Side("current", REPO, Path(sys.prefix) / "bin")
    return side, _check(side)


@contextlib.contextmanager
def baseline_side(rev: str) -> Iterator[tuple[Side, str]]:
    """`rev` checked out with `git worktree add --detach` in a temporary folder and synced
    with uv (its own lock, no dev or local group); the worktree is removed on the way out."""
    short = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", f"{rev}^{{commit}}"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    folder = Path(tempfile.mkdtemp(prefix="lasagna-baseline-"))
    try:
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "--detach", str(folder), short],
            check=True, capture_output=True,
        )  # fmt: skip
        sync = subprocess.run(
            ["uv", "sync", "--directory", str(folder), "--frozen", "--no-dev", "--compile-bytecode",
             "--quiet"],
            capture_output=True, text=True, env=clean_env(),
        )  # fmt: skip
        if sync.returncode:
            raise SystemExit(f"uv sync of {short} failed:\n{sync.stderr[-2000:]}")
        side = Side(f"baseline {short}", folder, folder / ".venv" / "bin")
        yield side, _check(side)
    finally:
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "remove", "--force", str(folder)],
            capture_output=True,
        )  # fmt: skip
        shutil.rmtree(folder, ignore_errors=True)
        subprocess.run(["git", "-C", str(REPO), "worktree", "prune"], capture_output=True)


# -- child processes ------------------------------------------------------------------------


def spawn(command: list[str], env: dict[str, str], **kwargs: object) -> subprocess.Popen[bytes]:
    """A child in its own process group (SIGKILL reaches all of it), tracked for `reap`."""
    process = subprocess.Popen(command, env=env, start_new_session=True, **kwargs)  # type: ignore[call-overload]
    _LIVE.add(process)
    return process  # type: ignore[no-any-return]


def kill(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    _LIVE.discard(process)


def reap() -> None:
    """Kill every child still running (after an error or Ctrl-C)."""
    for process in list(_LIVE):
        kill(process)


def file_cost(folder: Path, questions: int = 500) -> float:
    """Microseconds of one task file in kag's layout made in `folder` (a new subfolder): a
    folder per question, two files each, a temporary file renamed into place, as the
    sweep and the writing client make them. On this machine's disk (ext4 without a
    journal) it ranged from 40 to 300 us between folders of the same disk: the kernel's
    inode allocation skips inodes freed in the last minutes, so a folder near many files
    deleted lately (a benchmark's own cleanup) is slow. The files are left in place:
    deleting them would slow the next run."""
    root = Path(tempfile.mkdtemp(prefix="probe-", dir=folder))
    start = time.perf_counter()
    for q in range(questions):
        question = root / f"q{q}"
        question.mkdir()
        for s in range(2):
            temp = question / f".tmp-{s}"
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            os.write(fd, b"{}" * 350)
            os.close(fd)
            os.rename(temp, question / f"s{s}.json")
    return (time.perf_counter() - start) / (2 * questions) * 1e6


def timed(command: list[str], env: dict[str, str], timeout: float = 900) -> tuple[float, float]:
    """Whole-process wall seconds of `command`, and its CPU seconds (user + system: less
    sensitive than wall time to what else the 2 cores run); RuntimeError if it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    process = spawn(command, env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        output, _ = process.communicate(timeout=timeout)
    finally:
        kill(process)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the only child reaped meanwhile
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    if process.returncode:
        tail = output.decode(errors="replace")[-1500:]
        raise RuntimeError(f"{' '.join(command[:4])} ... exited {process.returncode}:\n{tail}")
    return seconds, cpu


_SERVER = """
import sys
from lasagna_judge.testing import FakeLLMServer
with FakeLLMServer(reply="b", keep_requests=False) as server:
    print(server.base_url, flush=True)
    sys.stdin.read()
"""


@contextlib.contextmanager
def server_process() -> Iterator[str]:
    """The instant fake server in its own process (off this process's GIL): its base URL."""
    process = subprocess.Popen(
        [sys.executable, "-c", _SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        assert process.stdout is not None
        yield process.stdout.readline().decode().strip()
    finally:
        assert process.stdin is not None
        process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# The floor: the same number of chat completions at the same concurrency, with nothing but
# aiohttp, in a process of its own (interpreter startup included, as for `lasagna`).
_BARE = """
import asyncio, sys
import aiohttp

async def main(url, n, parallel, padding):
    semaphore = asyncio.Semaphore(parallel)
    connector = aiohttp.TCPConnector(limit=parallel)
    headers = {"Authorization": "Bearer dummy"}
    async with aiohttp.ClientSession(connector=connector, headers=headers) as session:
        async def one(i):
            body = {"model": "m0", "max_tokens": 256, "messages": [
                {"role": "system", "content": "Answer the question in a few words."},
                {"role": "user",
                 "content": f"Question {i}: {padding}which option?\\n\\na: yes\\nb: no"},
            ]}
            async with semaphore:
                async with session.post(url + "/chat/completions", json=body) as response:
                    response.raise_for_status()
                    assert (await response.json())["choices"][0]["message"]["content"]
        await asyncio.gather(*(one(i) for i in range(n)))

asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]))
"""


def bare_seconds(base_url: str, n: int, parallel: int, padding: str = "") -> tuple[float, float]:
    """A bare aiohttp client's process sending `n` chat completions, `padding` (`mcq_question`'s)
    in each question: its wall and CPU seconds."""
    command = [sys.executable, "-c", _BARE, base_url, str(n), str(parallel), padding]
    return timed(command, clean_env())


# -- inputs ---------------------------------------------------------------------------------


def write_sweep(
    folder: Path,
    base_url: str,
    tasks: int,
    setups: int,
    mcq: bool,
    *,
    question: Callable[[int], str] | None = None,
    system_prompt: str | None = None,
) -> list[Path]:
    """datasets.json, setups.toml and config.toml in `folder`: `tasks` tasks over `setups`
    setups (`setup-<i>`, answering with the model `setup-<i>`) of the dataset `bench`, MCQ
    rows when `mcq` (system prompt "Pick one." unless given), open questions otherwise;
    `question(i)` is question i's text. Returns the result files the sweep must write."""
    folder.mkdir(parents=True, exist_ok=True)
    questions = -(-tasks // setups)
    if question is None:
        question = mcq_question if mcq else (lambda i: f"question {i}")
    if system_prompt is None and mcq:
        system_prompt = "Pick one."
    mcq_output = {"type": "MCQ", "options": {"a": "yes", "b": "no"}, "answer": "b"}
    rows = {
        f"q{i}": {"input": question(i), "output": mcq_output} if mcq else {"input": question(i)}
        for i in range(questions)
    }
    (folder / "datasets.json").write_text(json.dumps({"bench": rows}))
    names = [f"setup-{i}" for i in range(setups)]
    prompt = f"system_prompt = {json.dumps(system_prompt)}\n" if system_prompt else ""
    (folder / "setups.toml").write_text(
        "".join(f'[{n}]\nprovider = "fake"\nmodel = "{n}"\n{prompt}\n' for n in names)
    )
    (folder / "config.toml").write_text(
        f'[providers.fake]\napi = "openai"\nbase_url = "{base_url}"\n'
    )
    out = folder / "out"
    return [out / "bench" / f"q{i}" / f"{n}.json" for i in range(questions) for n in names]


def sweep_command(side: Side, folder: Path, parallel: int) -> list[str]:
    return [
        side.lasagna, "benchmark", "sweep", "--datasets", str(folder / "datasets.json"),
        "--benchmark", str(folder / "setups.toml"), "--output", str(folder / "out"),
        "--parallel", str(parallel),
    ]  # fmt: skip


def mcq_question(i: int, padding: str = "") -> str:
    """Question i of the MCQ benchmarks, `padding` (words ending in a space) inside it."""
    return f"Question {i}: {padding}which option?"


def write_run_data(path: Path, questions: int, padding: str = "") -> Path:
    """A JSONL of questions with answers and no contexts (closed-book generation)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        for i in range(questions):
            row = {"id": f"q{i}", "question": mcq_question(i, padding), "answer": "b"}
            handle.write(json.dumps(row) + "\n")
    return path


def generation_track(side: Side, data: Path) -> str:
    """`generation` when `validate-data` says the data supports it, else `closed-book`."""
    done = subprocess.run(
        [side.lasagna, "benchmark", "validate-data", str(data)],
        capture_output=True, text=True, env=clean_env(),
    )  # fmt: skip
    lines = [line.split() for line in done.stdout.splitlines()]
    return "generation" if ["generation:", "yes,"] in [w[:2] for w in lines] else "closed-book"


def run_command(side: Side, data: Path, out: Path, track: str, parallel: int) -> list[str]:
    return [
        side.lasagna, "benchmark", "run", str(data), "--tracks", track,
        "--generator", "openai/m0", "--concurrency", str(parallel), "-o", str(out),
    ]  # fmt: skip


def run_env(base_url: str, cache: Path) -> dict[str, str]:
    """The fake server as the openai/ provider; a fresh LLM cache, so no answer is replayed."""
    return clean_env(OPENAI_BASE_URL=base_url, OPENAI_API_KEY="dummy", LASAGNA_CACHE_DIR=str(cache))


def snapshot(root: Path, pattern: str) -> dict[Path, tuple[int, int]]:
    """Inode and mtime of every finished result file under `root` matching `pattern`."""
    seen = {}
    for path in root.glob(pattern):
        if path.name.startswith(TEMP_PREFIX):
            continue
        with contextlib.suppress(FileNotFoundError):
            stat = path.stat()
            seen[path] = (stat.st_ino, stat.st_mtime_ns)
    return seen
