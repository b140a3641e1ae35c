"""`benchmark run --judge`: grades that did not come in are said in one line, and fail the
run (exit 1) when `--resume` can grade them again (the judge's call failed) or when no
answer got a grade at all; unparsed grades beside graded ones are said, not failed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests._fake_env import run_benchmark as run

from lasagna_judge.testing import FakeLLMServer, Fault

PASTA = str(Path(__file__).resolve().parents[2] / "examples" / "data" / "pasta.jsonl")
ANSWER = "flat pasta sheets baked in the oven"


def judging(grade: Any) -> Any:
    """The generator answers; the judge's reply is `grade(request)`."""

    def reply(request: dict[str, Any]) -> Any:
        if "Answer to grade:" not in json.dumps(request["messages"]):
            return ANSWER
        return grade(request)

    return reply


def flags(out: Path, *more: str) -> list[str]:
    return ["run", PASTA, "--generator", "openai/gen", "--judge", "openai/judge", "-o",
            str(out), *more]  # fmt: skip


def statuses(out: Path) -> dict[str, int]:
    (result,) = json.loads((out / "results.json").read_text(encoding="utf-8"))["results"]
    return result["metrics"]["generation"]["judge_status"]


def test_a_judge_that_fails_fails_the_run_and_resume_grades_again(tmp_path: Path) -> None:
    out = tmp_path / "run"
    down = [True]
    asked = [0]

    def grade(request: dict[str, Any]) -> Any:
        asked[0] += 1  # the first calls answer (else the run stops at them, as a dead server)
        if down[0] and asked[0] > 3:
            return Fault(status=400, message="the judge is down")
        return json.dumps({"reasoning": "fine", "score": 1})

    with FakeLLMServer(reply=judging(grade)) as server:
        first = run(tmp_path, server, *flags(out))
        assert first.exit_code == 1, first.output
        assert statuses(out) == {"ok": 3, "unparsed": 0, "error": 11}
        line = first.output.strip().splitlines()[-1]
        assert line == (
            '11 of 14 grade(s) failed (each task file\'s judge "error" says why); run again '
            f"with --resume -o {out} to grade them again"
        )
        down[0] = False
        calls = server.calls
        again = run(tmp_path, server, *flags(out, "--resume"))
        assert again.exit_code == 0, again.output
        assert server.calls - calls == 11  # the failed grades alone, nothing generated again
        assert statuses(out) == {"ok": 14, "unparsed": 0, "error": 0}
        assert "grade(s)" not in again.output


def test_no_answer_graded_fails_the_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeLLMServer(reply=judging(lambda request: "I would rather not say")) as server:
        result = run(tmp_path, server, *flags(out))
    assert result.exit_code == 1, result.output
    assert statuses(out) == {"ok": 0, "unparsed": 14, "error": 0}
    assert (
        result.output.strip()
        .splitlines()[-1]
        .startswith(
            "none of the 14 answers got a grade: the judge's replies held no score the rubric "
            'allows (each task file\'s judge "raw" says what it sent)'
        )
    )


def test_some_unparsed_grades_are_said_and_pass(tmp_path: Path) -> None:
    out = tmp_path / "run"

    def grade(request: dict[str, Any]) -> str:
        # By the question graded, so that a second ask (a repair) gets the same reply.
        prompt = next(
            m["content"] for m in request["messages"] if "Answer to grade:" in m["content"]
        )
        odd = sum(map(ord, prompt)) % 2
        return json.dumps({"reasoning": "fine", "score": 1}) if odd else "I would rather not say"

    with FakeLLMServer(reply=judging(grade)) as server:
        result = run(tmp_path, server, *flags(out))
    assert result.exit_code == 0, result.output
    found = statuses(out)
    assert found["ok"] and found["unparsed"] and not found["error"]
    assert (
        f"{found['unparsed']} of 14 grade(s) unparsed, missing from the judge's mean (not zeros)"
        in result.output
    )
