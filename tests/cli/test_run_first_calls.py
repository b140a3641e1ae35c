"""A run whose generator or judge cannot be reached stops after its first three calls with
the reason, as a dead --system does, and --resume then finishes it; a run whose models
answer is never stopped by a failure or two."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests._fake_env import run_benchmark

from lasagna_judge.testing import FakeLLMServer, Fault

PASTA = Path(__file__).resolve().parents[2] / "examples" / "data" / "pasta.jsonl"
GRADE = json.dumps({"reasoning": "compared", "score": 1})
QUESTIONS = 14


def _run(tmp_path: Path, server: FakeLLMServer, *args: str) -> Any:
    return run_benchmark(tmp_path, server, "run", str(PASTA), "-o", str(tmp_path / "run"), *args)


def _task_files(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "run" / "tasks").rglob("*.json"))


def test_a_generator_refusing_every_call_stops_the_run_then_resume_finishes(
    tmp_path: Path,
) -> None:
    with FakeLLMServer(reply=lambda r: Fault(status=401, message="bad key")) as server:
        result = _run(tmp_path, server, "--generator", "openai/m", "--concurrency", "2")
        calls = server.calls
    assert result.exit_code == 1, result.output
    said = result.output
    assert "the first 3 model calls of the run failed, so it stops before the rest" in said
    assert "401" in said and f"--resume -o {tmp_path / 'run'}" in said
    assert "Traceback" not in said
    assert calls < QUESTIONS  # 401 is not retried: at most the calls in flight past the third
    assert 3 <= len(_task_files(tmp_path)) < QUESTIONS
    with FakeLLMServer(reply=lambda r: "Not mentioned") as server:
        resumed = _run(tmp_path, server, "--generator", "openai/m", "--resume")
    assert resumed.exit_code == 0, resumed.output
    assert len(_task_files(tmp_path)) == QUESTIONS


def test_a_judge_that_cannot_grade_stops_the_run(tmp_path: Path) -> None:
    def reply(request: dict[str, Any]) -> str | Fault:
        if "Answer to grade:" in json.dumps(request):
            return Fault(status=404, message="model 'judge' not found")
        return "Not mentioned"

    with FakeLLMServer(reply=reply) as server:
        result = _run(tmp_path, server, "--generator", "openai/m", "--judge", "openai/judge")
    assert result.exit_code == 1, result.output
    assert "stops before the rest (the judge:" in result.output


def test_a_few_failures_among_answers_do_not_stop_it(tmp_path: Path) -> None:
    def reply(request: dict[str, Any]) -> str | Fault:
        if "Answer to grade:" in json.dumps(request):
            return GRADE
        asked = str(request["messages"][-1]["content"]).rpartition("Question: ")[2]
        # The first two questions asked (q01, q02) fail; the rest are answered.
        if "layered" in asked or "two sauces" in asked:
            return Fault(status=400, message="context too long")
        return "Not mentioned"

    with FakeLLMServer(reply=reply) as server:
        result = _run(tmp_path, server, "--generator", "openai/m", "--concurrency", "1")
    assert result.exit_code == 1  # two tasks failed, and are said so
    assert "2 task(s) failed and are not scored" in result.output
    assert "stops before the rest" not in result.output
    assert len(_task_files(tmp_path)) == QUESTIONS


def test_answers_kept_from_the_judge_by_max_chars_do_not_stop_it(tmp_path: Path) -> None:
    # Nothing is sent for them: an error grade without a call says nothing of the judge.
    with FakeLLMServer(
        reply=lambda r: GRADE if "Answer to grade:" in json.dumps(r) else "x"
    ) as server:
        result = _run(tmp_path, server, "--generator", "openai/m", "--judge", "openai/judge",
                      "--max-chars", "10")  # fmt: skip
    assert "stops before the rest" not in result.output
    assert len(_task_files(tmp_path)) == QUESTIONS
