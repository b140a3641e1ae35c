"""`lasagna judge grade --model A --model B --model C`: a jury, against the fake server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_judge.testing import FakeLLMServer, Fault

# krippendorff (and numpy with it) is in the test group; a member's tests alone skip this.
krippendorff = pytest.importorskip("krippendorff")
import numpy as np  # noqa: E402

# judge -> prediction -> its score (or a fault: that judge's call fails)
SCORES: dict[str, dict[str, int | Fault]] = {
    "judge-a": {"Paris.": 4, "Milan": 0, "Turin": 0, "Oslo": 4},
    "judge-b": {"Paris.": 4, "Milan": 4, "Turin": 0, "Oslo": Fault(status=400)},
    "judge-c": {"Paris.": 4, "Milan": 0, "Turin": 4, "Oslo": 4},
}
ROWS = [
    {"id": i, "question": f"Capital {i}?", "answers": "Paris", "prediction": p}
    for i, p in enumerate(["Paris.", "Milan", "Turin", "Oslo"])
]


def scripted(request: dict[str, Any]) -> str | Fault:
    user = next(
        str(m["content"]) for m in request["messages"] if "Answer to grade: " in str(m["content"])
    )
    prediction = user.split("Answer to grade: ", 1)[1].split("\n", 1)[0]
    found = SCORES[request["model"]][prediction]
    return found if isinstance(found, Fault) else json.dumps({"reasoning": "r", "score": found})


def test_a_jury_grades_with_every_judge_and_says_how_far_they_agree(tmp_path: Path) -> None:
    data = tmp_path / "in.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    out = tmp_path / "graded.jsonl"
    env = {"OPENAI_API_KEY": "test", "LASAGNA_CACHE_DIR": str(tmp_path / "cache"),
           "MODEL_NAME": "", "OPENAI_BASE_URL": ""}  # fmt: skip
    with FakeLLMServer(scripted) as server:
        models = [a for m in SCORES for a in ("--model", f"openai/{m}")]
        args = ["judge", "grade", str(data), *models, "--base-url", server.base_url, "-o", str(out)]
        result = CliRunner().invoke(app, args, env=env, catch_exceptions=False)
    # judge-b's call on "Oslo" failed: graded rows are written, and the exit says so
    assert result.exit_code == 1, result.output
    assert "1 of 4 answers have a judge whose call failed" in result.output
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == [0, 1, 2, 3]
    assert [r["score"] for r in rows] == [4.0, 4 / 3, 4 / 3, 4.0]  # Oslo: the two that graded
    assert [r["judges_graded"] for r in rows] == [3, 3, 3, 2]
    assert [[g["model"] for g in r["jury"]] for r in rows] == [[f"openai/{m}" for m in SCORES]] * 4
    assert rows[3]["jury"][1]["status"] == "error" and rows[3]["jury"][1]["score"] is None
    stdout = result.stdout
    assert stdout.count("graded 4 answers with openai/judge-") == 3
    assert "jury grade (the mean of each answer's parsed grades): 2.667 over 4 answers" in stdout
    assert "1 graded by only some judges, 0 by none" in stdout
    table = [
        [np.nan if isinstance(s, Fault) else s for s in row.values()] for row in SCORES.values()
    ]
    alpha = krippendorff.alpha(
        reliability_data=np.array(table, float), level_of_measurement="interval"
    )
    assert f"agreement: Krippendorff's alpha (interval) {alpha:.3f} over 4 answers" in stdout


def test_a_jury_names_each_judge_once(tmp_path: Path) -> None:
    data = tmp_path / "in.jsonl"
    data.write_text(json.dumps(ROWS[0]) + "\n", encoding="utf-8")
    args = ["judge", "grade", str(data), "--model", "openai/x", "--model", "openai/x"]
    result = CliRunner().invoke(app, args, env={"OPENAI_API_KEY": "t"})
    assert result.exit_code == 2
    assert "each judge of a jury once" in result.output


def test_bias_check_grades_a_sample_again_and_says_how_often_the_grade_moved(
    tmp_path: Path,
) -> None:
    def longer_is_better(request: dict[str, Any]) -> str:
        user = next(
            str(m["content"])
            for m in request["messages"]
            if "Answer to grade: " in str(m["content"])
        )
        prediction = user.split("Answer to grade: ", 1)[1].split("\n", 1)[0]
        score = 4 if prediction.startswith("Paris") or len(prediction) > 40 else 0
        return json.dumps({"reasoning": "r", "score": score})

    data = tmp_path / "in.jsonl"
    rows = [{**r, "answers": ["Paris", "Lutetia"]} for r in ROWS]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    env = {"OPENAI_API_KEY": "test", "LASAGNA_CACHE_DIR": str(tmp_path / "cache"),
           "MODEL_NAME": "", "OPENAI_BASE_URL": ""}  # fmt: skip
    with FakeLLMServer(longer_is_better) as server:
        args = ["judge", "grade", str(data), "--model", "openai/j", "--base-url", server.base_url,
                "--bias-check", "10", "-o", str(tmp_path / "out.jsonl")]  # fmt: skip
        result = CliRunner().invoke(app, args, env=env, catch_exceptions=False)
        assert server.calls == 4 + 4 + 4  # the grading, then each check on all four
    assert result.exit_code == 0, result.output
    assert "this run: 4 calls" in result.stdout  # the grading's own, the checks apart
    assert (
        "bias check, verbosity (the answer padded with filler): the grade moved on 3 of 4 "
        "(75%; up 3, down 0)" in result.stdout
    )
    assert (
        "bias check, reference order (the references reversed, on answers with two or more): "
        "the grade moved on 0 of 4" in result.stdout
    )
    assert "bias check: 8 calls beside the grading's" in result.stdout
    graded = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [g["score"] for g in graded] == [4, 0, 0, 0]  # the rows hold the grading's grades
