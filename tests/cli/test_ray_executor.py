"""`--executor ray` against a real Ray on 127.0.0.1 (started by each command for its run)
and the fake LLM server in this process: the same results as the local executor, the
calls in flight bounded across the cluster, and the faults the issue lists (a worker
SIGKILLed, the driver SIGKILLed and resumed on the other executor, a task raising on a
worker, Ctrl-C). The commands run as real subprocesses, as a user runs them.

Marked `ray`: `.ci/run` runs them with the `ray` group (`uv run --group ray pytest -m
ray`); without Ray installed they are skipped, so the default test command is unchanged.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lasagna_judge.testing import FakeLLMServer, Fault
from lasagna_synth import TEMP_PREFIX

pytest.importorskip("ray")
pytestmark = pytest.mark.ray

ROOT = Path(__file__).resolve().parents[2]
LASAGNA = [sys.executable, "-c", "from lasagna_cli._app import main; main()"]
# Timings differ between any two runs; everything else in a task file must not.
VOLATILE = {"generation_time_s", "seconds", "latency_s", "latency_sec", "retrieval_time_s", "time"}


def reply(request: dict[str, Any]) -> str | Fault:
    text = request["messages"][-1]["content"]
    number = int(text.split()[-1])
    if number % 50 == 7:  # a question no model answers: recorded as that task's error
        return Fault(status=400, message="no answer to this one")
    return f"answer to {text} by {request['model']}"


def write_sweep(folder: Path, base_url: str, questions: int) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    rows = {f"q{i}": {"input": f"question {i}", "output": f"answer {i}"} for i in range(questions)}
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


def env(tmp_path: Path, **extra: str) -> dict[str, str]:
    found = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "RAY_"))}
    found.update(LASAGNA_CACHE_DIR=str(tmp_path / "cache"), MODEL_NAME="", **extra)
    return found


def lasagna(args: list[str], environment: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*LASAGNA, *args], env=environment, capture_output=True, text=True, timeout=300
    )


def task_files(out: Path) -> dict[str, Any]:
    """Every task file's content without its timings, by path under `out`."""
    found = {}
    for path in sorted(out.rglob("*.json")):
        found[str(path.relative_to(out))] = _steady(json.loads(path.read_text()))
    return found


def _steady(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _steady(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_steady(v) for v in value]
    return value


def no_temp_files(out: Path) -> bool:
    return not list(out.rglob(f"{TEMP_PREFIX}*"))


def wait_for(condition: Callable[[], bool], seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def ray_workers() -> list[int]:
    """The PIDs of this machine's lasagna Ray actors (Ray names their process)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if text.startswith(b"ray::TaskActor"):
            found.append(int(cmdline.parent.name))
    return found


def test_a_sweep_on_ray_equals_the_local_one_and_bounds_calls_across_the_cluster(
    tmp_path: Path,
) -> None:
    with FakeLLMServer(reply=reply, latency=0.05) as server:
        args = write_sweep(tmp_path, server.base_url, 150)
        local = lasagna([*args, "-o", str(tmp_path / "local"), "-p", "6"], env(tmp_path))
        assert local.returncode == 1, local.stderr  # six tasks fail, as they must
        calls = server.calls
        server.max_in_flight = 0
        on_ray = lasagna(
            [*args, "-o", str(tmp_path / "ray"), "-p", "6", "--executor", "ray"], env(tmp_path)
        )
        assert on_ray.returncode == 1, on_ray.stderr
        assert server.calls - calls == 300  # each task once
        # Two actors (2 CPUs) share the 6 slots: 6 calls in flight in all, never more.
        assert server.max_in_flight == 6
    assert "Traceback" not in on_ray.stderr
    assert "sweep: 294 done, 6 failed" in on_ray.stderr
    ray_files, local_files = task_files(tmp_path / "ray"), task_files(tmp_path / "local")
    assert len(ray_files) == 300 and ray_files == local_files
    # A task that failed on a worker is recorded with its message, as locally.
    assert "no answer to this one" in ray_files["d/q7/a.json"]["error"]
    assert no_temp_files(tmp_path / "ray")


def test_a_worker_killed_mid_run_has_its_tasks_sent_again(tmp_path: Path, spawn: Any) -> None:
    with FakeLLMServer(reply=reply, latency=0.05) as server:
        args = write_sweep(tmp_path, server.base_url, 300)
        out = tmp_path / "out"
        command = [*LASAGNA, *args, "-o", str(out), "-p", "8", "--executor", "ray"]
        process = spawn(command, env=env(tmp_path), stderr=subprocess.PIPE)
        wait_for(lambda: server.calls >= 60 and bool(ray_workers()))
        victim = ray_workers()[0]
        os.kill(victim, signal.SIGKILL)
        _, stderr = process.communicate(timeout=240)
        assert process.returncode == 1, stderr  # the scripted failures only
        assert "Traceback" not in stderr
        assert server.calls <= 600 + 8  # at most the killed worker's tasks went twice
    files = task_files(out)
    assert len(files) == 600
    failed = [path for path, record in files.items() if "error" in record]
    assert len(failed) == 12  # q7, q57, ... for both setups, and nothing else
    assert all(record["ok"]["result"].startswith("answer to") for record in files.values()
               if "ok" in record)  # fmt: skip
    assert no_temp_files(out)


@pytest.mark.parametrize("first,then", [("ray", "local"), ("local", "ray")])
def test_a_driver_killed_then_resumed_on_the_other_executor_runs_each_task_once(
    tmp_path: Path, spawn: Any, first: str, then: str
) -> None:
    with FakeLLMServer(reply=reply, latency=0.05) as server:
        args = write_sweep(tmp_path, server.base_url, 200)
        out = tmp_path / "out"
        command = [*LASAGNA, *args, "-o", str(out), "-p", "6", "--executor", first]
        process = spawn(command, env=env(tmp_path), stderr=subprocess.DEVNULL)
        wait_for(lambda: len(list(out.rglob("*.json"))) >= 60)
        process.kill()
        process.wait(timeout=30)
        # The driver's Ray actors outlive it for a moment, and a call one of them had just
        # sent still reaches the server: count from when they are gone.
        wait_for(lambda: not ray_workers(), 60)
        kept = len(list(out.rglob("*.json")))
        before = server.calls
        resumed = lasagna(
            [*args, "-o", str(out), "-p", "6", "--continue", "--executor", then], env(tmp_path)
        )
        assert resumed.returncode == 1, resumed.stderr
        assert f"{kept} skipped" in resumed.stderr
        assert server.calls - before == 400 - kept  # only the rest ran
        local = lasagna([*args, "-o", str(tmp_path / "local"), "-p", "6"], env(tmp_path))
        assert local.returncode == 1
    assert task_files(out) == task_files(tmp_path / "local")
    assert no_temp_files(out)


def test_ctrl_c_on_ray_keeps_finished_tasks_and_says_how_to_go_on(
    tmp_path: Path, ctrl_c_when: Any
) -> None:
    with FakeLLMServer(reply=reply, latency=0.05) as server:
        args = write_sweep(tmp_path, server.base_url, 300)
        out = tmp_path / "out"
        code, _, stderr = ctrl_c_when(
            [*LASAGNA, *args, "-o", str(out), "-p", "4", "--executor", "ray"],
            env(tmp_path),
            lambda: server.calls >= 40,
        )
        assert code == 130, stderr
        assert "interrupted" in stderr and "--continue" in stderr
        assert "Traceback" not in stderr
        files = list(out.rglob("*.json"))
        assert 0 < len(files) < 600
        time.sleep(1)
        assert server.calls <= len(files) + 4 + 4  # the cancelled calls at most
    assert no_temp_files(out)


def test_benchmark_run_on_ray_writes_the_same_results_json_as_locally(tmp_path: Path) -> None:
    def answer(request: dict[str, Any]) -> str:
        if "Answer to grade:" in json.dumps(request["messages"]):
            return json.dumps({"reasoning": "compared", "score": 4})
        return "wide, flat pasta sheets"

    data = str(ROOT / "examples" / "data" / "pasta.jsonl")
    with FakeLLMServer(reply=answer, latency=0.02) as server:
        environment = env(tmp_path, OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test")
        args = ["benchmark", "run", data, "--generator", "openai/fake", "--judge", "openai/j"]
        on_ray = lasagna([*args, "-o", str(tmp_path / "ray"), "--executor", "ray"], environment)
        assert on_ray.returncode == 0, on_ray.stderr
        calls = server.calls
        assert calls == 14 * 2  # an answer and a grade per question
        # The same cache: the local run asks nothing and gives the same results.json.
        local = lasagna([*args, "-o", str(tmp_path / "local")], environment)
        assert local.returncode == 0, local.stderr
        assert server.calls == calls
    ray_results = (tmp_path / "ray" / "results.json").read_bytes()
    assert ray_results == (tmp_path / "local" / "results.json").read_bytes()


def test_a_python_system_raising_on_a_worker_is_that_tasks_error(tmp_path: Path) -> None:
    (tmp_path / "flaky_system.py").write_text(
        "def answer(question, row):\n"
        "    if row['id'] == 'q03':\n"
        "        raise ValueError('the index is down for ' + row['id'])\n"
        "    return {'answer': 'wide, flat pasta sheets'}\n"
    )
    data = str(ROOT / "examples" / "data" / "pasta.jsonl")
    environment = env(tmp_path, PYTHONPATH=str(tmp_path))
    outcomes = {}
    for executor in ("ray", "local"):
        out = tmp_path / executor
        args = ["benchmark", "run", data, "--system", "flaky_system:answer", "-o", str(out)]
        result = lasagna([*args, "--executor", executor], environment)
        assert result.returncode == 1, result.stderr
        assert "Traceback" not in result.stderr
        results = json.loads((out / "results.json").read_text())["results"][0]
        failed = [q for q in results["per_query"] if q["status"] == "failed"]
        outcomes[executor] = [(q["id"], q["error"]) for q in failed]
    assert outcomes["ray"] == outcomes["local"]
    ((item, error),) = outcomes["ray"]
    assert item == "q03" and "ValueError: the index is down for q03" in error


def test_judge_grade_and_the_staged_pipeline_run_on_ray(tmp_path: Path) -> None:
    rows = [
        {"id": f"r{i}", "question": f"q {i}", "answers": ["yes"], "prediction": "yes"}
        for i in range(20)
    ]
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))

    def grade(request: dict[str, Any]) -> str:
        return json.dumps({"reasoning": "same", "score": 4})

    with FakeLLMServer(reply=grade, latency=0.02) as server:
        environment = env(tmp_path, OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test")
        graded = {}
        for executor in ("ray", "local"):
            out = tmp_path / f"graded-{executor}.jsonl"
            result = lasagna(
                ["judge", "grade", str(tmp_path / "rows.jsonl"), "--model", "openai/j",
                 "-o", str(out), "--no-cache", "--executor", executor],
                environment,
            )  # fmt: skip
            assert result.returncode == 0, result.stderr
            assert "mean score: 4.000 over 20 scored" in result.stdout
            assert "this run: 20 calls" in result.stdout
            graded[executor] = [_steady(json.loads(line)) for line in out.read_text().splitlines()]
        assert graded["ray"] == graded["local"]
        assert server.calls == 40

        staged = {}
        for executor in ("ray", "local"):
            out = tmp_path / f"staged-{executor}"
            result = lasagna(
                ["benchmark", "run", "locomo", "--data-dir", str(ROOT / "examples" / "data" /
                 "locomo-mini"), "--max-queries", "12", "--generator", "openai/g",
                 "--judge", "openai/j", "-o", str(out), "--executor", executor],
                {**environment, "LASAGNA_CACHE_DIR": str(tmp_path / f"cache-{executor}")},
            )  # fmt: skip
            assert result.returncode == 0, result.stderr
            staged[executor] = _steady(json.loads((out / "qa_eval_detailed_results.json")
                                                  .read_text()))  # fmt: skip
        assert staged["ray"] == staged["local"]


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def stop_nodes(temp_dir: str) -> None:
    """Kill the Ray processes of the nodes kept in `temp_dir` (their command lines name
    it), and only those: `ray stop` would stop every Ray on the machine."""
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if temp_dir.encode() in cmdline.read_bytes():
                os.kill(int(cmdline.parent.name), signal.SIGKILL)
        except (OSError, ProcessLookupError):
            continue


def test_a_cluster_of_two_nodes_started_by_ray_start_runs_the_benchmark(tmp_path: Path) -> None:
    """`ray start --head` plus a second node on this machine, as a team's cluster is, and
    `--ray-address HOST:PORT`: the nodes do not have this shell's environment, so the
    model's server (OPENAI_BASE_URL) reaches the workers through the driver."""
    import tempfile

    ray_cli = str(Path(sys.executable).parent / "ray")
    port = free_port()
    address = f"127.0.0.1:{port}"
    bare = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "RAY_"))}
    bare["RAY_AUTH_MODE"] = "disabled"  # on loopback only; a team's cluster keeps its token
    temp_dir = tempfile.mkdtemp(prefix="lasagna-ray-", dir="/tmp")  # short: socket paths
    common = [
        "--node-ip-address=127.0.0.1", "--num-cpus=1", "--disable-usage-stats",
        f"--temp-dir={temp_dir}",
    ]  # fmt: skip
    head = [ray_cli, "start", "--head", f"--port={port}", "--include-dashboard=false", *common]
    data = str(ROOT / "examples" / "data" / "pasta.jsonl")
    try:
        subprocess.run(head, env=bare, check=True, capture_output=True, timeout=120)
        subprocess.run(
            [ray_cli, "start", f"--address={address}", *common],
            env=bare, check=True, capture_output=True, timeout=120,
        )  # fmt: skip
        with FakeLLMServer(reply="wide, flat pasta sheets", latency=0.02) as server:
            environment = env(tmp_path, OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-t")
            args = ["benchmark", "run", data, "--generator", "openai/fake", "--tracks",
                    "retrieval,generation"]  # fmt: skip
            on_cluster = lasagna(
                [*args, "-o", str(tmp_path / "cluster"), "--executor", "ray",
                 "--ray-address", address],
                environment,
            )  # fmt: skip
            assert on_cluster.returncode == 0, on_cluster.stderr
            assert server.calls == 14
            local = lasagna([*args, "-o", str(tmp_path / "local")], environment)
            assert local.returncode == 0, local.stderr
            # A kag provider's key, from the variable its config.toml names, reaches them too.
            sweep = write_sweep(tmp_path / "kag", server.base_url, 5)
            config = tmp_path / "kag" / "config.toml"
            config.write_text(config.read_text() + 'api_key_env = "FAKE_TOKEN"\n')
            server.headers.clear()
            swept = lasagna(
                [*sweep, "-o", str(tmp_path / "kag" / "out"), "--executor", "ray",
                 "--ray-address", address],
                {**environment, "FAKE_TOKEN": "tok-123"},
            )  # fmt: skip
            assert swept.returncode == 0, swept.stderr
            assert len(server.headers) == 10
            assert {h.get("authorization") for h in server.headers} == {"Bearer tok-123"}
    finally:
        stop_nodes(temp_dir)
        shutil.rmtree(temp_dir, ignore_errors=True)
    cluster_results = (tmp_path / "cluster" / "results.json").read_bytes()
    assert cluster_results == (tmp_path / "local" / "results.json").read_bytes()


def test_an_unreachable_cluster_is_one_line(tmp_path: Path) -> None:
    data = str(ROOT / "examples" / "data" / "pasta.jsonl")
    address = f"127.0.0.1:{free_port()}"
    result = lasagna(
        ["benchmark", "run", data, "-o", str(tmp_path / "out"), "--executor", "ray",
         "--ray-address", address],
        env(tmp_path),
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    (line,) = result.stderr.strip().splitlines()[-1:]
    assert line.startswith(f"error: cannot reach the Ray cluster at {address}"), result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_the_readmes_sweep_with_the_local_model_answers_the_same_on_ray(tmp_path: Path) -> None:
    """The README's kag sweep (local/smollm2, in-process llama.cpp): each actor loads the
    model once from the recipe, and the 18 answers are those of the local run."""
    pytest.importorskip("llama_cpp")
    examples = ROOT / "examples" / "sweep"
    args = [
        "benchmark", "sweep", "--datasets", str(examples / "datasets.json"),
        "--benchmark", str(examples / "setups.toml"), "--parallel", "2",
    ]  # fmt: skip
    answers = {}
    for executor in ("ray", "local"):
        out = tmp_path / executor
        # A cache of its own each: the local run must compute its answers, not read Ray's.
        environment = {**env(tmp_path), "LASAGNA_CACHE_DIR": str(tmp_path / f"cache-{executor}")}
        result = lasagna([*args, "--output", str(out), "--executor", executor], environment)
        assert result.returncode == 0, result.stderr
        assert "18 done, 0 failed" in result.stderr
        answers[executor] = {
            str(p.relative_to(out)): json.loads(p.read_text())["ok"]["result"]
            for p in out.rglob("*.json")
        }
    assert len(answers["ray"]) == 18 and answers["ray"] == answers["local"]


def test_ray_workers_share_the_rate_limit_so_the_run_stays_under_it(tmp_path: Path) -> None:
    # --rpm 240: 4 requests a second for the whole run. Two workers pace at 2 a second
    # each; at the full limit each, any second would see about 8.
    rows = [
        {"id": f"r{i}", "question": f"q {i}", "answers": ["yes"], "prediction": "yes"}
        for i in range(16)
    ]
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with FakeLLMServer(reply=json.dumps({"reasoning": "same", "score": 4})) as server:
        environment = env(
            tmp_path, OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test",
            LASAGNA_RAY_WORKERS="2",
        )  # fmt: skip
        result = lasagna(
            ["judge", "grade", str(tmp_path / "rows.jsonl"), "--model", "openai/j", "-o",
             str(tmp_path / "graded.jsonl"), "--no-cache", "--executor", "ray", "--rpm", "240"],
            environment,
        )  # fmt: skip
        arrivals = sorted(server.times)
    assert result.returncode == 0, result.stderr
    assert len(arrivals) == 16
    busiest = max(sum(1 for t in arrivals if start <= t < start + 1.0) for start in arrivals)
    assert busiest <= 6, arrivals
    # 8 a worker, 0.5 s apart: 3.5 s (the first may go late, waiting for its connection);
    # undivided, 1.75 s.
    assert arrivals[-1] - arrivals[0] >= 3.0, arrivals
