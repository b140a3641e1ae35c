"""A jury of judges through the fake server at the wire: each judge's grades, the jury's
grade (the mean of the parsed ones, a failure counted apart, never as 0) and the judges'
agreement, equal to the `krippendorff` package's alpha."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from lasagna_judge import (
    LLM,
    JudgeError,
    Verdict,
    grade_jury,
    jury_agreement,
    load_rubric,
    make_llm,
)
from lasagna_judge.testing import FakeLLMServer

# krippendorff (and numpy with it) is in the test group; a member's tests alone skip this.
krippendorff = pytest.importorskip("krippendorff")
import numpy as np  # noqa: E402

SCALE = load_rubric("scale")
QUESTIONS = [f"Question {i}?" for i in range(8)]
# What each judge answers to each question: a score, or text that is no grade at all.
SCRIPT: dict[str, list[int | str]] = {
    "openai/judge-a": [4, 3, 0, 2, 4, 1, 3, 0],
    "openai/judge-b": [4, 2, 0, 2, 3, 1, "no idea", 0],
    "openai/judge-c": [3, 3, 1, 2, 4, 0, "???", 1],
}


def scripted(request: dict[str, Any]) -> str:
    model = f"openai/{request['model']}"
    text = json.dumps(request["messages"])
    index = next(i for i, q in enumerate(QUESTIONS) if q in text)
    found = SCRIPT[model][index]
    if isinstance(found, str):
        return found  # neither the schema nor a score a parser can find
    return json.dumps({"reasoning": "scripted", "score": found})


def judges(server: FakeLLMServer) -> list[LLM]:
    return [
        make_llm(name, base_url=server.base_url, api_key="test", cache=False, max_retries=0)
        for name in SCRIPT
    ]


def items() -> list[dict[str, Any]]:
    return [{"question": q, "references": ["x"], "prediction": "y"} for q in QUESTIONS]


async def run_jury(server: FakeLLMServer) -> list[Verdict]:
    llms = judges(server)
    try:
        return await grade_jury(llms, SCALE, items(), concurrency=3)
    finally:
        for llm in llms:
            await llm.aclose()


def test_each_judge_grades_every_answer_and_the_jury_takes_the_mean() -> None:
    with FakeLLMServer(scripted) as server:
        verdicts = asyncio.run(run_jury(server))
        assert server.calls >= 3 * len(QUESTIONS)
    assert [[g.model for g in v.grades] for v in verdicts] == [list(SCRIPT)] * len(QUESTIONS)
    first = verdicts[0]
    assert first.scores == [4.0, 4.0, 3.0]
    assert first.score == pytest.approx(11 / 3)
    assert (first.status, first.graded) == ("ok", 3)
    # Question 6: two judges gave no grade; the jury's grade is the one that parsed.
    sixth = verdicts[6]
    assert sixth.scores == [3.0, None, None]
    assert (sixth.score, sixth.graded, sixth.status) == (3.0, 1, "ok")
    row = sixth.to_dict()
    assert row["aggregate"] == "mean" and row["judges"] == 3 and row["judges_graded"] == 1
    assert [g["status"] for g in row["jury"]] == ["ok", "unparsed", "unparsed"]


def test_agreement_is_krippendorffs_alpha_over_the_parsed_grades() -> None:
    with FakeLLMServer(scripted) as server:
        verdicts = asyncio.run(run_jury(server))
    found = jury_agreement(verdicts)
    data = np.array(
        [[np.nan if isinstance(s, str) else s for s in scores] for scores in SCRIPT.values()],
        dtype=float,
    )
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="interval")
    assert found.alpha == pytest.approx(expected, abs=1e-9)
    assert found.answers == len(QUESTIONS) - 1  # question 6 has one parsed grade


def test_no_parsed_grade_leaves_the_verdict_without_a_score() -> None:
    def unparsed(request: dict[str, Any]) -> str:
        return "I cannot say."

    with FakeLLMServer(unparsed) as server:
        verdicts = asyncio.run(run_jury(server))
    assert all(v.score is None and v.status == "unparsed" for v in verdicts)
    assert jury_agreement(verdicts).alpha is None


def test_a_jury_of_one_is_refused() -> None:
    with FakeLLMServer(scripted) as server:
        llm = judges(server)[0]
        with pytest.raises(JudgeError, match="at least two judges"):
            asyncio.run(grade_jury([llm], SCALE, items()))
