"""The generation track against the fake OpenAI-compatible server: answers, refusals,
EM/F1, judge grades that are never averaged as 0, failed tasks, and no secret written."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from tests._fake_env import fake_env
from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_cli.commands._llm import ENV_VARIABLES
from lasagna_judge.testing import FakeLLMServer, Fault

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "data"
KEY = "sk-secret-test-key-0123"

# The right answers to examples/data/pasta.jsonl, by a word of the question.
ANSWERS = {
    "layered": "wide, flat pasta sheets",
    "two sauces": "ragù and béchamel",
    "béchamel sauce": "butter, flour and milk",
    "simmer": "at least two hours",
    "dried pasta": "durum wheat semolina",  # EM 0, F1 > 0 against "... and water"
    "al dente": "to the tooth",
    "region": "Liguria",
    "carbonara": "Yes",  # wrong
    "aged": "twelve months",
    "around Parma": "I don't know",  # a false refusal
    "each litre": "ten grams",
    "gnocchi are cooked": "they float to the surface",
    "first lasagna recipe": "Not mentioned",  # unanswerable, refused: right
    "oven temperature": "200 degrees",  # unanswerable, answered: wrong
}


def question_of(text: str) -> str:
    found = re.search(r"Question: (.*)", text)
    assert found is not None
    return found.group(1)


def reply(request: dict[str, Any], judge: dict[str, str | Fault] | None = None) -> str | Fault:
    user = request["messages"][-1]["content"]
    everything = json.dumps(request["messages"], ensure_ascii=False)
    if "Answer to grade:" in everything:  # a judge call, or its retry after a bad reply
        user = next(m["content"] for m in request["messages"] if "Answer to grade:" in str(m))
        prediction = re.search(r"Answer to grade: (.*)", user)
        assert prediction is not None
        scripted = (judge or {}).get(prediction.group(1).strip())
        if scripted is not None:
            return scripted
        return json.dumps({"reasoning": "compared", "score": 4})
    question = question_of(user)
    for words, answer in ANSWERS.items():
        if words in question:
            return answer
    return "Not mentioned"


def env(tmp_path: Path, server: FakeLLMServer) -> dict[str, str]:
    return fake_env(tmp_path, server, key=KEY)


def run(tmp_path: Path, server: FakeLLMServer, *args: str) -> Any:
    return CliRunner().invoke(app, ["benchmark", "run", *args], env=env(tmp_path, server))


def results_of(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "results.json").read_text(encoding="utf-8"))
    return data


def test_answers_are_scored_and_refusals_handled(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeLLMServer(reply=reply) as server:
        result = run(
            tmp_path,
            server,
            str(EXAMPLES / "pasta.jsonl"),
            "--tracks",
            "retrieval,generation",
            "--generator",
            "openai/fake",
            "--top-k",
            "3",
            "-o",
            str(out),
        )
        assert result.exit_code == 0, result.output
        assert server.calls == 14
        prompt = server.requests[0]["messages"][-1]["content"]
    assert prompt.startswith("Passages:\n[1] ") and prompt.count("\n[") <= 3
    (found,) = results_of(out)["results"]
    per = {q["id"]: q["generation"] for q in found["per_query"]}
    assert per["q07"]["exact_match"] == 1.0
    assert per["q05"]["exact_match"] == 0.0 and 0 < per["q05"]["f1"] < 1
    assert per["q08"]["f1"] == 0.0
    # Unanswerable: the refusal is right, the invented answer wrong.
    assert per["q13"] == {
        "prediction": "Not mentioned",
        "exact_match": 1.0,
        "f1": 1.0,
        "refused": True,
        "unanswerable": True,
        "judge_score": None,
        "judge_status": None,
    }
    assert per["q14"]["exact_match"] == 0.0 and not per["q14"]["refused"]
    metrics = found["metrics"]["generation"]
    assert metrics["no_answer_accuracy"]["mean"] == 0.5
    assert metrics["false_refusal_rate"]["mean"] == pytest.approx(1 / 12)
    expected_em = sum(q["exact_match"] for q in per.values()) / 14
    assert metrics["exact_match"]["mean"] == pytest.approx(expected_em)
    assert metrics["has_answer_exact_match"]["count"] == 12
    assert found["setup"]["generation_mode"] == "rag"
    assert found["usage"]["input_tokens"] > 0


def test_judge_grades_unparsed_and_failed_are_counted_not_zero(tmp_path: Path) -> None:
    judge: dict[str, str | Fault] = {
        "Liguria": "I like this answer a lot",  # nothing parsable: unparsed
        "ten grams": Fault(status=400, message="bad request"),  # not retried: an error grade
        "Yes": json.dumps({"reasoning": "wrong", "score": 0}),
    }
    out = tmp_path / "run"
    with FakeLLMServer(reply=lambda r: reply(r, judge)) as server:
        result = run(
            tmp_path,
            server,
            str(EXAMPLES / "pasta.jsonl"),
            "--generator",
            "openai/fake",
            "--judge",
            "openai/fake-judge",
            "--rubric",
            "binary",
            "-o",
            str(out),
        )
        # The failed grade fails the run (--resume grades it again); both are said.
        assert result.exit_code == 1, result.output
        line = result.output.strip().splitlines()[-1]
        assert line.startswith("1 of 14 grade(s) failed") and "--resume -o" in line
        assert "; 1 more unparsed: the judge's replies held no score" in line
    (found,) = results_of(out)["results"]
    grades = {
        q["id"]: (q["generation"]["judge_score"], q["generation"]["judge_status"])
        for q in found["per_query"]
    }
    assert grades["q07"] == (None, "unparsed")
    assert grades["q11"] == (None, "error")
    assert grades["q08"] == (0, "ok")
    assert grades["q13"] == (4, "ok")  # the refusal heuristic: no call needed
    metrics = found["metrics"]["generation"]
    assert metrics["judge_status"] == {"ok": 12, "unparsed": 1, "error": 1}
    ok = [s for s, status in grades.values() if status == "ok"]
    assert metrics["judge_score"]["mean"] == pytest.approx(sum(ok) / len(ok))
    assert metrics["judge_score"]["missing"] == 2
    judge = found["held_fixed"]["judge"]
    # The judge's server is part of the comparability key: a local server's grades are
    # never compared with the hosted model's as if they were the same judge's.
    assert judge["endpoint"].startswith("http://127.0.0.1:") and judge["endpoint"].endswith("/v1")
    assert {k: v for k, v in judge.items() if k != "endpoint"} == {
        "model": "openai/fake-judge",
        "rubric": "binary",
        "rubric_version": "1",
    }


def test_closed_book_when_the_data_has_no_contexts(tmp_path: Path) -> None:
    data = tmp_path / "qa.jsonl"
    data.write_text(
        '{"id": "a", "question": "Which region does pesto alla genovese come from?", '
        '"answers": ["Liguria", "Ligurian coast"]}\n',
        encoding="utf-8",
    )
    out = tmp_path / "run"
    with FakeLLMServer(reply=reply) as server:
        result = run(tmp_path, server, str(data), "--generator", "openai/fake", "-o", str(out))
        assert result.exit_code == 0, result.output
        prompt = server.requests[0]["messages"][-1]["content"]
    assert "Passages" not in prompt and prompt.startswith("Question: ")
    (found,) = results_of(out)["results"]
    assert found["setup"]["tracks"] == ["generation"]
    assert found["setup"]["generation_mode"] == "closed-book"
    assert found["held_fixed"]["retriever"] is None
    assert found["metrics"]["generation"]["exact_match"]["mean"] == 1.0


def test_the_closed_book_track_beside_rag(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeLLMServer(reply=reply) as server:
        result = run(
            tmp_path,
            server,
            str(EXAMPLES / "pasta.csv"),
            "--tracks",
            "generation,closed-book",
            "--generator",
            "openai/fake",
            "-o",
            str(out),
        )
        assert result.exit_code == 0, result.output
        assert server.calls == 12
    (found,) = results_of(out)["results"]
    assert set(found["metrics"]) == {"generation", "closed-book"}
    assert "Passages" not in json.dumps(found["per_query"])
    # Each answering track records its own wall time in the task file.
    task = json.loads(next((out / "tasks").rglob("*.json")).read_text(encoding="utf-8"))
    assert task["generation"]["seconds"] >= 0 and task["closed-book"]["seconds"] >= 0


def test_a_failed_generation_fails_its_task_only_and_resume_retries_it(tmp_path: Path) -> None:
    out = tmp_path / "run"
    broken = {"on": True}

    def flaky(request: dict[str, Any]) -> str | Fault:
        if broken["on"] and "Liguria" in str(reply(request)):
            return Fault(status=400, message="rejected")
        return reply(request)

    with FakeLLMServer(reply=flaky) as server:
        args = (str(EXAMPLES / "pasta.jsonl"), "--generator", "openai/fake", "-o", str(out))
        first = run(tmp_path, server, *args)
        assert first.exit_code == 1
        assert "1 task(s) failed" in first.stderr and "--resume" in first.stderr
        (found,) = results_of(out)["results"]
        assert found["counts"] == {"questions": 14, "scored": 13, "failed": 1, "not_run": 0}
        assert found["metrics"]["generation"]["exact_match"]["count"] == 13  # never scored
        failed = next(q for q in found["per_query"] if q["status"] == "failed")
        assert failed["id"] == "q07" and "rejected" in failed["error"]

        broken["on"] = False
        calls = server.calls
        second = run(tmp_path, server, *args, "--resume")
        assert second.exit_code == 0, second.output
        assert server.calls == calls + 1  # only the failed task asks the model again
        assert "resuming: 13 of 14 tasks already finished" in second.stderr
    (found,) = results_of(out)["results"]
    assert found["counts"]["scored"] == 14


def test_no_key_and_no_server_is_a_usage_error_naming_the_flag(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        [
            "benchmark",
            "run",
            str(EXAMPLES / "pasta.jsonl"),
            "--generator",
            "openai/gpt-4o-mini",
            "-o",
            str(tmp_path / "run"),
        ],
        env={"OPENAI_API_KEY": "", "OPENAI_BASE_URL": "", "LASAGNA_CACHE_DIR": str(tmp_path)},
    )
    assert result.exit_code == 2
    message = result.stderr
    assert message.startswith("error: --generator openai/gpt-4o-mini needs OPENAI_API_KEY")
    assert "or use --generator local/smollm2" in message
    # Every variable read is listed, and only flags run has (no --model; --base-url names
    # the server).
    for variable in ENV_VARIABLES:
        assert variable in message
    assert "--model" not in message and "OPENAI_BASE_URL or --base-url" in message
    assert "indexed" not in message  # refused before the index is built


def test_a_judge_without_its_key_is_named_as_the_judge(tmp_path: Path) -> None:
    with FakeLLMServer(reply=reply) as server:
        result = CliRunner().invoke(
            app,
            ["benchmark", "run", str(EXAMPLES / "pasta.jsonl"), "--tracks", "generation",
             "--generator", "openai/gpt-4o-mini", "--judge", "anthropic/claude-3-5-haiku-latest",
             "-o", str(tmp_path / "run")],
            env={**env(tmp_path, server), "ANTHROPIC_API_KEY": ""},
        )  # fmt: skip
    assert result.exit_code == 2
    assert result.stderr.startswith(
        "error: --judge anthropic/claude-3-5-haiku-latest needs ANTHROPIC_API_KEY; or use "
        "--judge local/smollm2"
    )
    assert "--model" not in result.stderr and "ANTHROPIC_BASE_URL" in result.stderr
    assert server.calls == 0


def test_no_secret_is_written_anywhere(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeLLMServer(reply=reply) as server:
        result = run(
            tmp_path,
            server,
            str(EXAMPLES / "pasta.jsonl"),
            "--generator",
            "openai/fake",
            "--judge",
            "openai/fake",
            "-o",
            str(out),
        )
        assert result.exit_code == 0, result.output
        assert server.headers[0].get("authorization", "").endswith(KEY)  # it was sent...
    assert KEY not in result.output
    for path in out.rglob("*"):
        if path.is_file():  # ...and never written
            assert KEY not in path.read_text(encoding="utf-8"), path
