"""`lasagna benchmark run --system package.module:attr`: the user's Python function."""

from __future__ import annotations

import json
import textwrap
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from tests._fake_env import fake_env
from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_judge.testing import FakeLLMServer
from lasagna_synth import load_data

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "data"
PASTA = load_data(EXAMPLES / "pasta.jsonl")
ROWS = {row.id: row for row in PASTA.rows()}

# A system that answers right and ranks each question's own passages first (by text);
# the behaviour below is switched per test by module-level settings.
SYSTEM = """
import asyncio, json, pathlib
HERE = pathlib.Path(__file__).parent
GOLD = json.loads((HERE / "gold.json").read_text())

def _reply(question):
    gold = GOLD[question]
    return {"answer": gold["answer"], "retrieved": gold["contexts"] + ["Nothing like this."]}

def answer_only(question):
    return GOLD[question]["answer"]

async def with_row(question, row):
    with open(HERE / "seen.jsonl", "a") as f:
        f.write(json.dumps(row) + "\\n")
    return _reply(question)

def keyword_row(question, *, row):
    assert row["question"] == question
    return _reply(question)

def make():
    return _reply

async def make_async():
    async def ask(question):
        return _reply(question)
    return ask

class Pipeline:
    def __init__(self):
        self.calls = 0
    def __call__(self, question):
        self.calls += 1
        return _reply(question)

def flaky(question, row):
    if row["id"] in ("q04", "q09"):
        raise ValueError(f"no index shard for {row['id']}")
    return _reply(question)

def always_fails(question):
    raise RuntimeError("the vector store is down")

def wrong_type(question):
    return 42

def typo(question):
    return {"anwser": "x"}

def make_nothing():
    return 3

class NeedsArgs:
    def __init__(self, url):
        self.url = url

import threading, time
LOCK = threading.Lock()
SYNC = [0, 0]

def sync_slow(question):
    with LOCK:
        SYNC[0] += 1
        SYNC[1] = max(SYNC)
    time.sleep(0.1)
    with LOCK:
        SYNC[0] -= 1
    (HERE / "sync_max.txt").write_text(str(SYNC[1]))
    return _reply(question)

async def hangs_async(question, row):
    if row["id"] == "q04":
        await asyncio.sleep(3600)
    return _reply(question)

def hangs_sync(question, row):
    if row["id"] == "q05":
        time.sleep(3600)  # no thread can be stopped: lasagna must still finish and exit
    return _reply(question)

IN_FLIGHT = [0, 0]

async def slow(question, row):
    IN_FLIGHT[0] += 1
    IN_FLIGHT[1] = max(IN_FLIGHT)
    await asyncio.sleep(0.1)
    IN_FLIGHT[0] -= 1
    (HERE / "max_in_flight.txt").write_text(str(IN_FLIGHT[1]))
    with open(HERE / "calls.txt", "a") as f:
        f.write(row["id"] + "\\n")
    return _reply(question)
"""


def run(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(app, ["benchmark", "run", *args], env=env)


def results_of(out: Path) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads((out / "results.json").read_text())["results"]
    return found


@pytest.fixture
def system(tmp_path: Path) -> Path:
    """The system's file, next to gold.json (question -> answer and contexts)."""
    folder = tmp_path / "mysys"
    folder.mkdir()
    gold = {
        row.question: {
            "answer": row.answers[0] if row.answers else "Not mentioned",
            "contexts": list(row.contexts),
        }
        for row in PASTA.rows()
    }
    (folder / "gold.json").write_text(json.dumps(gold), encoding="utf-8")
    path = folder / "my_rag.py"
    path.write_text(textwrap.dedent(SYSTEM), encoding="utf-8")
    return path


def pasta(system: Path, attr: str, out: Path, *extra: str) -> Any:
    return run(
        str(EXAMPLES / "pasta.jsonl"), "--system", f"{system}:{attr}", "-o", str(out), *extra
    )


def test_a_function_returning_answer_and_ranking(system: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = pasta(system, "with_row", out)
    assert result.exit_code == 0, result.output
    (found,) = results_of(out)
    assert found["setup"]["name"] == "my_rag.with_row"
    assert found["setup"]["system"] == {
        "kind": "callable",
        "target": f"{system}:with_row",
        "adapter": "async function",
        "receives_row": True,
    }
    assert found["setup"]["tracks"] == ["retrieval", "generation"]
    assert found["counts"] == {
        "questions": 14,
        "scored": 14,
        "failed": 0,
        "not_run": 0,
        "missing": 0,
    }
    assert found["metrics"]["retrieval"]["ndcg@10"]["mean"] == 1.0
    assert found["metrics"]["generation"]["exact_match"]["mean"] == 1.0
    # The system saw the question, id and metadata: never the references or gold passages.
    seen = [json.loads(x) for x in (system.parent / "seen.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in seen) == sorted(ROWS)
    assert all(set(r) == {"id", "question", "metadata"} for r in seen)
    assert "answer and a ranking; tracks on local/pasta@" in result.stderr
    per_query = {q["id"]: q for q in found["per_query"]}
    assert per_query["q01"]["unmatched"][0]["given"] == "Nothing like this."


@pytest.mark.parametrize(
    ("attr", "adapter"),
    [
        ("make", "function"),
        ("make_async", "async function"),
        ("Pipeline", "function"),
        ("keyword_row", "function"),
    ],
)
def test_factories_classes_and_keyword_rows(
    system: Path, tmp_path: Path, attr: str, adapter: str
) -> None:
    out = tmp_path / "run"
    result = pasta(system, attr, out)
    assert result.exit_code == 0, result.output
    (found,) = results_of(out)
    assert found["setup"]["system"]["adapter"] == adapter
    assert found["metrics"]["retrieval"]["ndcg@10"]["mean"] == 1.0


def test_a_function_returning_a_string_is_measured_on_generation(
    system: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    result = pasta(system, "answer_only", out)
    assert result.exit_code == 0, result.output
    (found,) = results_of(out)
    assert found["setup"]["tracks"] == ["generation"]
    assert found["setup"]["retriever"] is None
    refused = pasta(system, "answer_only", tmp_path / "r2", "--tracks", "retrieval,generation")
    assert refused.exit_code == 1
    assert (
        'the retrieval track needs "retrieved" (a ranking), and the system returns an answer only'
        in refused.stderr
    )


def test_failures_are_recorded_per_item_and_never_scored(system: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = pasta(system, "flaky", out)
    assert result.exit_code == 1  # failed tasks: the run says so and how to retry them
    assert "2 task(s) failed and are not scored" in result.stderr
    (found,) = results_of(out)
    assert found["counts"] == {
        "questions": 14,
        "scored": 12,
        "failed": 2,
        "not_run": 0,
        "missing": 0,
    }
    by_id = {q["id"]: q for q in found["per_query"]}
    assert by_id["q04"]["status"] == "failed"
    assert by_id["q04"]["error"].startswith(
        f"SystemFailure: {system}:flaky raised ValueError: no index shard for q04 (at my_rag.py:"
    )
    # Every scored answer is right: a failure counted as a wrong answer would pull EM below 1.
    assert found["metrics"]["generation"]["exact_match"] == {
        "mean": 1.0,
        "ci95_low": 1.0,
        "ci95_high": 1.0,
        "count": 12,
        "missing": 0,
    }
    assert found["metrics"]["retrieval"]["ndcg@10"]["count"] == 10
    task = json.loads(next(out.glob("tasks/*/*/q09.json")).read_text())
    assert "no index shard for q09" in task["error"]


def test_a_call_past_the_system_timeout_is_that_items_failure(system: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    started = time.perf_counter()
    result = pasta(system, "hangs_async", out, "--system-timeout", "0.5")
    assert time.perf_counter() - started < 30
    assert result.exit_code == 1, result.output
    (found,) = results_of(out)
    assert found["counts"]["scored"] == 13 and found["counts"]["failed"] == 1
    by_id = {q["id"]: q for q in found["per_query"]}
    assert by_id["q04"]["error"] == (
        f"SystemFailure: {system}:hangs_async: no reply within 0.5 s (--system-timeout)"
    )
    assert found["metrics"]["generation"]["exact_match"]["mean"] == 1.0  # not scored as wrong
    assert found["setup"]["system"]["timeout_s"] == 0.5


def test_a_plain_function_past_the_timeout_does_not_keep_lasagna_running(
    system: Path, tmp_path: Path
) -> None:
    import subprocess
    import sys

    out = tmp_path / "run"
    command = [
        str(Path(sys.executable).with_name("lasagna")), "benchmark", "run",
        str(EXAMPLES / "pasta.jsonl"), "--system", f"{system}:hangs_sync",
        "--system-timeout", "0.5", "-o", str(out),
    ]  # fmt: skip
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert time.perf_counter() - started < 30  # the thread still sleeping did not hold it
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    (found,) = results_of(out)
    by_id = {q["id"]: q for q in found["per_query"]}
    assert by_id["q05"]["status"] == "failed"
    assert "no reply within 0.5 s (--system-timeout)" in by_id["q05"]["error"]
    assert found["counts"]["scored"] == 13


def test_a_system_that_fails_from_the_start_stops_the_run(system: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = pasta(system, "always_fails", out)
    assert result.exit_code == 1
    assert "failed on each of the first 3 questions, so the run stops" in result.stderr
    assert "RuntimeError: the vector store is down" in result.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    ("attr", "code", "message"),
    [
        ("wrong_type", 1, "returned an int (42); expected a string (the answer), a mapping"),
        ("typo", 1, 'without "answer" or "retrieved" (keys: "anwser") (did you mean "answer"?)'),
        ("nope", 2, "has no attribute 'nope'; its callables are: NeedsArgs, Pipeline"),
        ("make_nothing", 1, "is a factory that returned an int (3)"),
        ("NeedsArgs", 1, "a class is built with no arguments: point --system at a factory"),
    ],
)
def test_wrong_targets_and_return_types_are_one_line(
    system: Path, tmp_path: Path, attr: str, code: int, message: str
) -> None:
    result = pasta(system, attr, tmp_path / "run")
    assert result.exit_code == code, result.output
    assert message in result.stderr
    assert f"{system}:{attr}" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.output


def test_dotted_targets_import_from_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"rag_{uuid.uuid4().hex[:8]}"
    package = tmp_path / name
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "pipeline.py").write_text("def answer(question):\n    return 'Liguria'\n")
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "run"
    result = run(
        str(EXAMPLES / "pasta.jsonl"), "--system", f"{name}.pipeline:answer", "-o", str(out)
    )
    assert result.exit_code == 0, result.output
    (found,) = results_of(out)
    assert found["setup"]["name"] == "pipeline.answer"
    assert found["metrics"]["generation"]["exact_match"]["count"] == 14

    missing = run(str(EXAMPLES / "pasta.jsonl"), "--system", f"{name}.nothing:answer")
    assert missing.exit_code == 2
    assert f"cannot find module {name}.nothing (looked in the current directory" in missing.stderr
    (package / "broken.py").write_text("import json\nraise RuntimeError('bad config')\n")
    broken = run(str(EXAMPLES / "pasta.jsonl"), "--system", f"{name}.broken:answer")
    assert broken.exit_code == 1
    assert (
        f"importing {name}.broken raised RuntimeError: bad config (at broken.py:2)" in broken.stderr
    )
    (package / "needs.py").write_text("import not_installed_anywhere_xyz\n")
    needs = run(str(EXAMPLES / "pasta.jsonl"), "--system", f"{name}.needs:answer")
    assert needs.exit_code == 1
    assert "it needs module not_installed_anywhere_xyz, which is not installed" in needs.stderr


def test_concurrency_and_resume(system: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    started = time.perf_counter()
    result = pasta(system, "slow", out, "--concurrency", "7")
    elapsed = time.perf_counter() - started
    assert result.exit_code == 0, result.output
    assert int((system.parent / "max_in_flight.txt").read_text()) == 7
    assert elapsed < 14 * 0.1  # one at a time would take 1.4 s
    calls = (system.parent / "calls.txt").read_text().split()
    assert sorted(calls) == sorted(ROWS)  # the probe's answer is used, not asked again
    again = pasta(system, "slow", out, "--concurrency", "7", "--resume")
    assert again.exit_code == 0, again.output
    assert "14 of 14 tasks already finished" in again.stderr
    # Resuming asks only the probe question again, to settle the tracks.
    assert len((system.parent / "calls.txt").read_text().split()) == 15


def test_a_plain_function_runs_on_as_many_threads_as_the_concurrency(
    system: Path, tmp_path: Path
) -> None:
    result = pasta(system, "sync_slow", tmp_path / "run", "--concurrency", "8")
    assert result.exit_code == 0, result.output
    # 8 at once: more than asyncio's default pool would give on this machine (cores + 4).
    assert int((system.parent / "sync_max.txt").read_text()) == 8


def test_system_answers_are_graded_by_the_judge(system: Path, tmp_path: Path) -> None:
    key = "sk-judge-secret-987"
    with FakeLLMServer(reply=json.dumps({"reasoning": "same", "score": 4})) as server:
        out = tmp_path / "run"
        result = run(
            str(EXAMPLES / "pasta.jsonl"),
            "--system",
            f"{system}:make",
            "--judge",
            "openai/fake-judge",
            "-o",
            str(out),
            env=fake_env(tmp_path, server, key=key),
        )
        assert result.exit_code == 0, result.output
        assert server.calls == 12  # the two refusals are graded by the heuristic
    (found,) = results_of(out)
    assert found["metrics"]["generation"]["judge_score"]["mean"] == 4.0
    assert found["metrics"]["generation"]["judge_status"] == {"ok": 14, "unparsed": 0, "error": 0}
    for path in out.rglob("*.json"):
        assert key not in path.read_text()
