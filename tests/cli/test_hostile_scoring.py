"""Scoring honesty against hostile or careless model servers, at the wire (issue 29): a
generator reply with no text or a tool call is a failed task (never an empty answer that
exact match calls a correct refusal); a grading where nothing got a grade exits 1 in a
line; token counts that cannot be believed fail the call; a huge reply is not quoted back
into the re-ask; `benchmark run --max-chars` bounds what the judge is sent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests._fake_env import fake_env
from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_judge.testing import FakeLLMServer, Reply

ROWS = [
    {"id": "a", "question": "Which region is pesto from?", "answers": ["Liguria"]},
    {
        "id": "u",
        "question": "In which year was the first lasagna recipe written down?",
        "metadata": {"unanswerable": True},
    },
]
GRADE = json.dumps({"reasoning": "compared", "score": 1})


def write_rows(tmp_path: Path, rows: list[dict[str, Any]] = ROWS) -> Path:
    path = tmp_path / "qa.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def invoke(tmp_path: Path, server: FakeLLMServer, *args: str) -> Any:
    return CliRunner().invoke(app, list(args), env=fake_env(tmp_path, server))


def is_judge(request: dict[str, Any]) -> bool:
    return "Answer to grade:" in json.dumps(request["messages"], ensure_ascii=False)


def results_of(out: Path) -> dict[str, Any]:
    (found,) = json.loads((out / "results.json").read_text(encoding="utf-8"))["results"]
    return dict(found)


def record_of(out: Path, item: str) -> dict[str, Any]:
    (path,) = out.glob(f"tasks/*/*/{item}.json")
    return dict(json.loads(path.read_text(encoding="utf-8")))


def generate(tmp_path: Path, answer: Reply, *extra: str) -> tuple[Any, Path, FakeLLMServer]:
    out = tmp_path / "run"

    def reply(request: dict[str, Any]) -> str | Reply:
        if is_judge(request):
            return GRADE
        return answer if "lasagna" in request["messages"][-1]["content"] else "Liguria"

    with FakeLLMServer(reply=reply) as server:
        result = invoke(
            tmp_path, server, "benchmark", "run", str(write_rows(tmp_path)),
            "--generator", "openai/fake", "-o", str(out), *extra,
        )  # fmt: skip
    return result, out, server


def test_a_generator_reply_with_null_content_is_a_failed_task_not_a_right_refusal(
    tmp_path: Path,
) -> None:
    result, out, _ = generate(tmp_path, Reply("", null_content=True))
    assert result.exit_code == 1, result.output
    assert "1 task(s) failed" in result.stderr and "Traceback" not in result.output
    found = results_of(out)
    assert found["counts"]["failed"] == 1 and found["counts"]["scored"] == 1
    failed = next(q for q in found["per_query"] if q["status"] == "failed")
    assert failed["id"] == "u" and "the reply has no text (content null)" in failed["error"]
    # Not scored: exact match saw only the answered question (before, "" counted right).
    assert found["metrics"]["generation"]["exact_match"]["count"] == 1
    assert "generation" not in record_of(out, "u")


def test_a_generator_reply_calling_a_tool_is_a_failed_task(tmp_path: Path) -> None:
    result, out, _ = generate(tmp_path, Reply('{"year": 1300}', tool_call=True))
    assert result.exit_code == 1, result.output
    failed = next(q for q in results_of(out)["per_query"] if q["status"] == "failed")
    assert "calls a tool" in failed["error"] and "instead of answering in text" in failed["error"]


def test_negative_token_counts_fail_the_task_and_never_enter_the_usage(tmp_path: Path) -> None:
    bad = {"prompt_tokens": -1_000_000, "completion_tokens": 3, "total_tokens": -999_997}
    result, out, _ = generate(tmp_path, Reply("Not mentioned", usage=bad))
    assert result.exit_code == 1, result.output
    found = results_of(out)
    failed = next(q for q in found["per_query"] if q["status"] == "failed")
    assert "usage.prompt_tokens is -1000000" in failed["error"]
    assert found["usage"]["input_tokens"] > 0  # the other answer's, nothing taken off


def test_benchmark_run_max_chars_bounds_what_the_judge_is_sent(tmp_path: Path) -> None:
    long = "Liguria, " + "the coast of basil and pine nuts " * 10  # 330 characters
    out = tmp_path / "run"
    rows = [ROWS[0], {"id": "b", "question": "Where is pesto from?", "answers": ["Liguria"]}]
    data = write_rows(tmp_path, rows)

    def reply(request: dict[str, Any]) -> str:
        if is_judge(request):
            return GRADE
        return long if "Where is" in request["messages"][-1]["content"] else "Liguria"

    args = ["benchmark", "run", str(data), "--generator", "openai/fake"]
    args += ["--judge", "openai/judge", "-o", str(out)]
    with FakeLLMServer(reply=reply) as server:
        result = invoke(tmp_path, server, *args, "--max-chars", "200")
        assert result.exit_code == 1, result.output  # a grade to take again with --resume
        assert "1 of 2 grade(s) failed" in result.output
        assert sum(1 for r in server.requests if is_judge(r)) == 1  # only the short one
        judge = record_of(out, "b")["generation"]["judge"]
        assert judge["status"] == "error" and judge["score"] is None
        assert "not sent to the judge" in judge["error"] and "--max-chars 200" in judge["error"]
        assert results_of(out)["metrics"]["generation"]["judge_status"]["error"] == 1

        again = invoke(tmp_path, server, *args, "--max-chars", "1000", "--resume")
        assert again.exit_code == 0, again.output
    assert record_of(out, "b")["generation"]["judge"]["status"] == "ok"


# -- judge grade ------------------------------------------------------------------------------

GRADE_ROWS = [
    {"id": "a", "question": "Capital of France?", "answers": "Paris", "prediction": "Paris"},
    {"id": "b", "question": "Capital of Italy?", "answers": "Rome", "prediction": "Milan"},
]


def grade(tmp_path: Path, server: FakeLLMServer, *extra: str) -> Any:
    data = tmp_path / "in.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in GRADE_ROWS), encoding="utf-8")
    return invoke(
        tmp_path, server, "judge", "grade", str(data), "--base-url", server.base_url, *extra
    )


def test_judge_grade_where_no_answer_got_a_grade_exits_1_in_one_line(tmp_path: Path) -> None:
    out = tmp_path / "graded.jsonl"
    with FakeLLMServer(reply=Reply("I cannot decide.", tool_call=False)) as server:
        result = grade(tmp_path, server, "--model", "openai/judge", "-o", str(out))
    assert result.exit_code == 1, result.output
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("error: none of the 2 answers got a grade (grades: unparsed 2); ")
    assert "check --model and --rubric" in line
    assert [json.loads(r)["status"] for r in out.read_text().splitlines()] == ["unparsed"] * 2


def test_a_jury_where_no_judge_gave_a_grade_exits_1_in_one_line(tmp_path: Path) -> None:
    with FakeLLMServer(reply=Reply("I cannot decide.", tool_call=False)) as server:
        result = grade(tmp_path, server, "--model", "openai/a", "--model", "openai/b")
    assert result.exit_code == 1, result.output
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith("error: none of the 2 answers got a grade (grades: unparsed 4); ")


def test_a_huge_judge_reply_is_not_sent_back_in_the_re_ask(tmp_path: Path) -> None:
    huge = "score " * 1_800_000  # 10 MB, no grade in it
    replies: list[str | Reply] = [huge, GRADE, GRADE]
    with FakeLLMServer(reply=replies) as server:
        result = grade(tmp_path, server, "--model", "openai/judge", "--concurrency", "1")
        assert result.exit_code == 0, result.output
        sizes = [len(json.dumps(r)) for r in server.requests]
    assert len(sizes) == 3 and max(sizes) < 20_000, sizes  # the re-ask quotes 4,000 at most
    assert "status: ok 2, unparsed 0, error 0" in result.stderr
