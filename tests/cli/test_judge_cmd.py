"""`lasagna judge grade | calibrate` against the fake OpenAI-compatible server (real HTTP)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_judge.testing import FakeLLMServer, Fault, Reply

LASAGNA = Path(sys.executable).with_name("lasagna")
ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "judge"
FINANCEBENCH_RESULTS = ROOT.parent / "shared" / "data" / "datasets" / "financebench" / "results"

ROWS = [
    {"id": "a", "question": "Capital of France?", "answers": "Paris", "prediction": "Paris."},
    {"id": "b", "question": "Capital of Italy?", "answers": ["Rome"], "prediction": "Milan"},
    {
        "id": 3,
        "question": "FY2018 capex?",
        "answers": [1577, "$1,577 million"],
        "prediction": "1577",
    },
    {
        "id": "d",
        "question": "CEO's shoe size?",
        "answers": "Not mentioned.",
        "prediction": "I don't know.",
        "extra": {"kept": True},
    },
]


def score_by_prediction(request: dict[str, Any]) -> str | Fault | Reply:
    """4 when the prediction is in the prompt's references, else 0; scripted faults."""
    # the grading prompt (instructor's re-asks append messages after it)
    user = next(
        str(m["content"]) for m in request["messages"] if "Answer to grade: " in str(m["content"])
    )
    refs = user.split("Reference answer(s): ", 1)[1].split("\n", 1)[0]
    prediction = user.split("Answer to grade: ", 1)[1].split("\n", 1)[0]
    if "BROKEN" in prediction:
        return Fault(status=400)
    if "RAMBLE" in prediction:
        return Reply("I cannot decide on this one.", tool_call=False)
    hit = prediction.rstrip(".") in refs.split(" | ")
    return json.dumps({"reasoning": f"refs were {refs}", "score": 4 if hit else 0})


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(reply=score_by_prediction) as fake:
        yield fake


@pytest.fixture
def env(tmp_path: Path, server: FakeLLMServer) -> dict[str, str]:
    return {
        "OPENAI_API_KEY": "test",
        "LASAGNA_CACHE_DIR": str(tmp_path / "cache"),
        "MODEL_NAME": "",
        "OPENAI_BASE_URL": "",
    }


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def invoke(args: list[str], env: dict[str, str]) -> Any:
    return CliRunner().invoke(app, args, env=env, catch_exceptions=False)


def grade_args(server: FakeLLMServer, input_path: Path, *extra: str) -> list[str]:
    model = ["--model", "openai/judge", "--base-url", server.base_url]
    return ["judge", "grade", str(input_path), *model, *extra]


# -- grade ----------------------------------------------------------------------------------


def test_grade_writes_rows_and_a_summary(
    tmp_path: Path, server: FakeLLMServer, env: dict[str, str]
) -> None:
    out = tmp_path / "out" / "graded.jsonl"
    result = invoke(
        grade_args(server, write_jsonl(tmp_path / "in.jsonl", ROWS), "--out", str(out)), env
    )
    assert result.exit_code == 0, result.output
    rows = read_jsonl(out)
    assert [r["id"] for r in rows] == ["a", "b", 3, "d"]
    assert rows[3]["extra"] == {"kept": True}  # input fields are kept
    assert [r["score"] for r in rows] == [4, 0, 4, 4]
    assert [r["path"] for r in rows] == ["schema", "schema", "schema", "refusal-heuristic"]
    assert all(r["model"] == "openai/judge" and r["rubric_id"] == "binary" for r in rows)
    assert rows[2]["reasoning"] == "refs were 1577 | $1,577 million"  # numbers as written
    assert server.calls == 3  # the refusal pair needed no call
    stdout = result.stdout
    assert "graded 4 answers with openai/judge, rubric binary@1" in stdout
    assert "mean score: 3.000 over 4 scored (0: 1, 4: 3)" in stdout
    assert "status: ok 4, unparsed 0, error 0" in stdout
    assert "path: schema 3, json 0, regex 0, refusal-heuristic 1" in stdout
    assert "this run: 3 calls" in stdout
    assert "cost: n/a" in stdout
    assert f"wrote 4 graded rows to {out}" in stdout


def test_grade_without_out_prints_jsonl_on_stdout_and_the_summary_on_stderr(
    tmp_path: Path, server: FakeLLMServer, env: dict[str, str]
) -> None:
    result = invoke(grade_args(server, write_jsonl(tmp_path / "in.jsonl", ROWS[:2])), env)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["a", "b"]
    assert "mean score: 2.000" in result.stderr


def test_a_rerun_is_served_by_the_cache(
    tmp_path: Path, server: FakeLLMServer, env: dict[str, str]
) -> None:
    args = grade_args(
        server, write_jsonl(tmp_path / "in.jsonl", ROWS), "--out", str(tmp_path / "o")
    )
    assert invoke(args, env).exit_code == 0
    assert server.calls == 3
    again = invoke(args, env)
    assert again.exit_code == 0
    assert server.calls == 3
    assert "3 answers from the cache; this run: 0 calls" in again.stdout
    assert invoke([*args, "--no-cache"], env).exit_code == 0
    assert server.calls == 6


def test_unparsed_is_counted_not_averaged(
    tmp_path: Path, server: FakeLLMServer, env: dict[str, str]
) -> None:
    rows = [*ROWS[:2], {"id": "r", "question": "q", "answers": "x", "prediction": "RAMBLE"}]
    out = tmp_path / "graded.jsonl"
    result = invoke(
        grade_args(server, write_jsonl(tmp_path / "in.jsonl", rows), "--out", str(out)), env
    )
    assert result.exit_code == 0, result.output
    graded = read_jsonl(out)
    assert (graded[2]["status"], graded[2]["score"], graded[2]["raw"]) == (
        "unparsed",
        None,
        "I cannot decide on this one.",
    )
    assert "mean score: 2.000 over 2 scored" in result.stdout  # not 4 / 3
    assert "1 without a score are counted below, not averaged" in result.stdout
    assert "status: ok 2, unparsed 1, error 0" in result.stdout


def test_failed_calls_are_error_rows_and_exit_1_with_the_rest_graded(
    tmp_path: Path, server: FakeLLMServer, env: dict[str, str]
) -> None:
    rows = [*ROWS[:2], {"id": "x", "question": "q", "answers": "x", "prediction": "BROKEN"}]
    out = tmp_path / "graded.jsonl"
    result = invoke(
        grade_args(server, write_jsonl(tmp_path / "in.jsonl", rows), "--out", str(out)), env
    )
    assert result.exit_code == 1
    graded = read_jsonl(out)
    assert [g["status"] for g in graded] == ["ok", "ok", "error"]
    assert graded[2]["score"] is None and "400" in graded[2]["error"]
    assert "status: ok 2, unparsed 0, error 1" in result.stdout
    assert "1 of 3 answers could not be graded" in result.stderr
    assert "run the same command again" in result.stderr
    assert "Traceback" not in result.output


def test_transient_429s_are_retried_and_every_answer_graded(
    tmp_path: Path, server: FakeLLMServer, env: dict[str, str]
) -> None:
    lock = threading.Lock()
    seen: set[str] = set()

    def flaky(request: dict[str, Any]) -> str | Fault | Reply:
        user = str(request["messages"][-1]["content"])
        with lock:
            first = user not in seen
            seen.add(user)
        if first:
            return Fault(status=429, retry_after=0.01)
        return score_by_prediction(request)

    server.reply = flaky
    out = tmp_path / "graded.jsonl"
    result = invoke(
        grade_args(server, write_jsonl(tmp_path / "in.jsonl", ROWS), "--out", str(out)), env
    )
    assert result.exit_code == 0, result.output
    assert [g["score"] for g in read_jsonl(out)] == [4, 0, 4, 4]
    assert server.calls == 6  # each of the three calls once refused, once answered


def test_rubric_choices(tmp_path: Path, server: FakeLLMServer, env: dict[str, str]) -> None:
    input_path = write_jsonl(tmp_path / "in.jsonl", ROWS[:1])
    for rubric, expected in (("scale", "scale"), (str(EXAMPLES / "strict.toml"), "strict")):
        out = tmp_path / f"{expected}.jsonl"
        server.reply = '{"reasoning": "r", "score": 1}'
        result = invoke(grade_args(server, input_path, "--rubric", rubric, "--out", str(out)), env)
        assert result.exit_code == 0, result.output
        assert read_jsonl(out)[0]["rubric_id"] == expected
        assert read_jsonl(out)[0]["score"] == 1


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('{"id": "z", "question": "q", "answers": "a"}', "in.jsonl:3: missing field 'prediction'"),
        (
            '{"id": "z", "question": "q", "answer": "a", "prediction": "p"}',
            "in.jsonl:3: missing field 'answers' (found 'answer': a typo?); each row needs",
        ),
        ("not json", "in.jsonl:3: expected one JSON object per line"),
        ("[1, 2]", "in.jsonl:3: expected a JSON object, found list"),
        (
            '{"id": "z", "question": "q", "answers": [], "prediction": "p"}',
            "in.jsonl:3: field 'answers' must be a non-empty string or a list",
        ),
        (
            '{"id": "z", "question": "q", "answers": [{"a": 1}], "prediction": "p"}',
            "in.jsonl:3: field 'answers'",
        ),
        (
            '{"id": "z", "question": "q", "answers": "a", "prediction": null}',
            "in.jsonl:3: field 'prediction' must be a string, found NoneType",
        ),
        (
            '{"id": "a", "question": "q", "answers": "a", "prediction": "p"}',
            "in.jsonl:3: duplicate id 'a' (first on line 1)",
        ),
        (
            '{"id": null, "question": "q", "answers": "a", "prediction": "p"}',
            "in.jsonl:3: field 'id' must be a non-empty string or an integer",
        ),
    ],
)
def test_a_bad_row_names_its_line_and_field_before_any_call(
    tmp_path: Path, server: FakeLLMServer, env: dict[str, str], line: str, expected: str
) -> None:
    path = write_jsonl(tmp_path / "in.jsonl", ROWS[:2])
    path.write_text(path.read_text() + line + "\n", encoding="utf-8")
    result = invoke(grade_args(server, path), env)
    assert result.exit_code == 1
    assert expected in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert server.calls == 0


def test_usage_errors_exit_2(tmp_path: Path, server: FakeLLMServer, env: dict[str, str]) -> None:
    good = write_jsonl(tmp_path / "in.jsonl", ROWS[:1])
    cases = [
        (grade_args(server, tmp_path / "absent.jsonl"), "input file not found"),
        (grade_args(server, good, "--rubric", "lenient"), "--rubric: unknown rubric 'lenient'"),
        (grade_args(server, good, "--rubric", str(tmp_path / "r.toml")), "rubric file not found"),
        (["judge", "grade", str(good)], "no model: pass --model"),
        (
            ["judge", "grade", str(good), "--model", "openai/x"],
            "--model openai/x needs OPENAI_API_KEY, or a server: OPENAI_BASE_URL or --base-url",
        ),
    ]
    for args, expected in cases:
        run_env = dict(env, OPENAI_API_KEY="") if "openai/x" in args else env
        result = invoke(args, run_env)
        assert result.exit_code == 2, (args, result.output)
        assert expected in result.stderr, (args, result.stderr)
    assert server.calls == 0


def test_blank_lines_are_skipped_but_counted(
    tmp_path: Path, server: FakeLLMServer, env: dict[str, str]
) -> None:
    path = write_jsonl(tmp_path / "in.jsonl", ROWS[:1])
    path.write_text(path.read_text() + "\n   \n{broken\n", encoding="utf-8")
    result = invoke(grade_args(server, path), env)
    assert result.exit_code == 1 and "in.jsonl:4:" in result.stderr


def test_a_byte_order_mark_is_accepted_and_bad_bytes_are_explained(
    tmp_path: Path, server: FakeLLMServer, env: dict[str, str]
) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + (json.dumps(ROWS[0]) + "\n").encode())
    out = tmp_path / "graded.jsonl"
    assert invoke(grade_args(server, path, "--out", str(out)), env).exit_code == 0
    assert read_jsonl(out)[0]["id"] == "a"
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"id": "caf\xe9"}\n')
    result = invoke(grade_args(server, latin), env)
    assert result.exit_code == 1 and "expected UTF-8 text" in result.stderr


def test_an_empty_input_is_bad_data(
    tmp_path: Path, server: FakeLLMServer, env: dict[str, str]
) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("\n\n", encoding="utf-8")
    result = invoke(grade_args(server, path), env)
    assert result.exit_code == 1 and "no rows" in result.stderr


def test_prices_give_the_cost_of_this_run_and_of_every_graded_answer(
    tmp_path: Path, server: FakeLLMServer, env: dict[str, str]
) -> None:
    server.reply = Reply('{"reasoning": "same", "score": 4}', input_tokens=1000, output_tokens=10)
    prices = tmp_path / "prices.toml"
    prices.write_text("judge = [2.0, 8.0]\n", encoding="utf-8")  # the bare name serves too
    path = write_jsonl(tmp_path / "in.jsonl", ROWS[:3])
    args = grade_args(server, path, "--prices", str(prices), "--out", str(tmp_path / "o.jsonl"))
    first = invoke(args, env)
    assert first.exit_code == 0, first.output
    # 3 calls of 1,000 tokens in at $2 and 10 out at $8 per 1M tokens
    assert "cost: $0.0062 this run; $0.0062 for all the tokens above" in first.stdout
    again = invoke(args, env)  # every grade from the cache: this run is free
    assert "cost: $0.0000 this run; $0.0062 for all the tokens above" in again.stdout
    other = tmp_path / "other.json"
    other.write_text('{"openai/gpt-4o-mini": [0.15, 0.6]}', encoding="utf-8")
    unpriced = invoke(grade_args(server, path, "--prices", str(other)), env)
    assert f"cost: n/a (no price for openai/judge in {other})" in unpriced.stderr
    assert "cost: n/a (give --prices FILE" in invoke(grade_args(server, path), env).stderr
    bad = invoke(grade_args(server, path, "--prices", str(tmp_path / "absent.json")), env)
    assert bad.exit_code == 2 and "--prices: cannot read" in bad.stderr
    assert server.calls == 3


def test_a_folder_as_out_or_a_bad_base_url_is_refused_before_any_call(
    tmp_path: Path, server: FakeLLMServer, env: dict[str, str]
) -> None:
    path = write_jsonl(tmp_path / "in.jsonl", ROWS[:2])
    folder = tmp_path / "graded"
    folder.mkdir()
    result = invoke(grade_args(server, path, "--out", str(folder)), env)
    assert result.exit_code == 2
    assert (
        result.stderr.strip()
        == f"error: --out {folder} is a folder: give the path of a .jsonl file"
    )
    args = ["judge", "grade", str(path), "--model", "openai/judge", "--base-url", "localhost:8000"]
    result = invoke(args, env)
    assert result.exit_code == 2 and "expected an http:// or https:// URL" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert server.calls == 0


def test_ctrl_c_leaves_one_line_and_exit_130(
    tmp_path: Path, server: FakeLLMServer, ctrl_c_when: Any
) -> None:
    server.latency = 30.0  # every call is in flight when the interrupt comes
    env = dict(os.environ)
    env.pop("MODEL_NAME", None)
    env.update(OPENAI_API_KEY="test", LASAGNA_CACHE_DIR=str(tmp_path / "cache"))
    out = tmp_path / "graded.jsonl"
    args = grade_args(server, EXAMPLES / "answers.jsonl", "--out", str(out))
    returncode, _, stderr = ctrl_c_when([str(LASAGNA), *args], env, lambda: server.calls > 0)
    assert returncode == 130
    assert stderr.strip().splitlines()[-1] == (
        "interrupted: no grade was written; finished calls are cached, so the same command "
        "resumes where this one stopped"
    )
    assert "Traceback" not in stderr and not out.exists()


def test_the_real_executable_grades_the_example(tmp_path: Path, server: FakeLLMServer) -> None:
    env = dict(os.environ)
    env.pop("MODEL_NAME", None)
    env.update(OPENAI_API_KEY="test", LASAGNA_CACHE_DIR=str(tmp_path / "cache"))
    server.reply = '{"reasoning": "fine", "score": 4}'
    out = tmp_path / "graded.jsonl"
    result = subprocess.run(
        [str(LASAGNA), *grade_args(server, EXAMPLES / "answers.jsonl", "--out", str(out))],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    rows = read_jsonl(out)
    assert len(rows) == len(read_jsonl(EXAMPLES / "answers.jsonl"))
    assert all(r["status"] == "ok" for r in rows)
    assert "test" not in out.read_text().split('"')  # the key is nowhere in the output


# -- calibrate ------------------------------------------------------------------------------


def graded_rows() -> list[dict[str, Any]]:
    return [
        {"id": "a", "prediction": "Paris", "score": 4, "status": "ok"},
        {"id": "b", "prediction": "Milan", "score": 4, "status": "ok"},
        {"id": 3, "prediction": "I don't know", "score": 0, "status": "ok"},
        {"id": "d", "prediction": "Rome", "score": 0, "status": "ok"},
        {"id": "e", "prediction": "x", "score": None, "status": "unparsed"},
        {"id": "f", "prediction": "y", "score": 4, "status": "ok"},
    ]


def labels_rows() -> list[dict[str, Any]]:
    return [
        {"id": "a", "label": "Correct Answer"},
        {"id": "b", "label": "Incorrect Answer"},
        {"id": "3", "label": "Refusal"},
        {"id": "d", "label": "Incorrect Answer"},
        {"id": "e", "label": "Correct Answer"},
        {"id": "zz", "label": "Correct Answer"},
    ]


def test_calibrate_prints_agreement(tmp_path: Path, env: dict[str, str]) -> None:
    graded = write_jsonl(tmp_path / "graded.jsonl", graded_rows())
    labels = write_jsonl(tmp_path / "labels.jsonl", labels_rows())
    result = invoke(["judge", "calibrate", str(graded), "--labels", str(labels)], env)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "compared 4 of 6 graded answers (left out: 1 unparsed, 1 without a label)" in out
    assert "1 labels have no graded answer" in out
    table = [
        line.split()
        for line in out.splitlines()
        if line.startswith(("correct ", "incorrect ", "refusal ")) and "accuracy" not in line
    ]
    assert table == [
        ["correct", "1", "0", "0"],
        ["incorrect", "1", "1", "0"],
        ["refusal", "0", "0", "1"],
    ]
    assert "three classes   accuracy 0.750" in out

    as_json = invoke(["judge", "calibrate", str(graded), "--labels", str(labels), "--json"], env)
    data = json.loads(as_json.stdout)
    assert data["compared"] == 4 and data["skipped"] == {"unparsed": 1}
    assert data["unlabelled"] == 1 and data["labels_without_grade"] == 1
    assert data["three_class"]["accuracy"] == 0.75
    # kappa by hand: po 0.75; human rows 1,2,1; judge columns 2,1,1 -> pe = (2+2+1)/16
    assert data["three_class"]["kappa"] == pytest.approx((0.75 - 5 / 16) / (1 - 5 / 16))
    assert data["binary"]["confusion"] == [[1, 0], [1, 2]]


def test_calibrate_threshold_and_fields(tmp_path: Path, env: dict[str, str]) -> None:
    graded = write_jsonl(
        tmp_path / "graded.jsonl",
        [{"id": i, "prediction": "p", "score": s, "status": "ok"} for i, s in enumerate([3, 4])],
    )
    labels = write_jsonl(
        tmp_path / "labels.jsonl",
        [{"qid": 0, "human": "incorrect"}, {"qid": 1, "human": "correct"}],
    )
    args = ["judge", "calibrate", str(graded), "--labels", str(labels), "--json"]
    args += ["--id-field", "qid", "--label-field", "human"]
    assert json.loads(invoke(args, env).stdout)["three_class"]["accuracy"] == 0.5
    strict = json.loads(invoke([*args, "--correct-at", "4"], env).stdout)
    assert strict["three_class"]["accuracy"] == 1.0


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        ([{"id": "a"}], "labels.jsonl:1: missing field 'label'"),
        (
            [{"id": "a", "Label": "Correct"}],
            "labels.jsonl:1: missing field 'label' (found 'Label': a typo?)",
        ),
        ([{"id": "a", "label": "perhaps"}], "labels.jsonl:1: field 'label': expected a label"),
        (
            [{"id": "a", "label": "Correct"}, {"id": "a", "label": "Refusal"}],
            "labels.jsonl:2: duplicate id",
        ),
        ([{"id": "nope", "label": "Correct"}], "no id of"),
    ],
)
def test_calibrate_bad_labels(
    tmp_path: Path, env: dict[str, str], labels: list[dict[str, Any]], expected: str
) -> None:
    graded = write_jsonl(tmp_path / "graded.jsonl", graded_rows())
    path = write_jsonl(tmp_path / "labels.jsonl", labels)
    result = invoke(["judge", "calibrate", str(graded), "--labels", str(path)], env)
    assert result.exit_code == 1
    assert expected in result.stderr
    assert "Traceback" not in result.output


def test_calibrate_needs_graded_rows(tmp_path: Path, env: dict[str, str]) -> None:
    plain = write_jsonl(tmp_path / "in.jsonl", ROWS)
    labels = write_jsonl(tmp_path / "labels.jsonl", labels_rows())
    result = invoke(["judge", "calibrate", str(plain), "--labels", str(labels)], env)
    assert result.exit_code == 1
    assert "in.jsonl:1: missing field 'score'" in result.stderr
    missing = invoke(
        ["judge", "calibrate", str(plain), "--labels", str(tmp_path / "no.jsonl")], env
    )
    assert missing.exit_code == 2 and "labels file not found" in missing.stderr


@pytest.mark.skipif(not FINANCEBENCH_RESULTS.is_dir(), reason="shared FinanceBench data absent")
def test_calibrate_reads_financebench_labels(tmp_path: Path, env: dict[str, str]) -> None:
    # A judge that agrees with the reviewers on right versus wrong: the binary view must be
    # perfect; the three-class view then measures only the refusal detector.
    labels = FINANCEBENCH_RESULTS / "gpt-4-1106-preview_sharedStore.jsonl"
    source = read_jsonl(labels)
    graded = write_jsonl(
        tmp_path / "graded.jsonl",
        [
            {
                "id": r["financebench_id"],
                "prediction": r["model_answer"],
                "score": 4 if r["label"] == "Correct Answer" else 0,
                "status": "ok",
            }
            for r in source
        ],
    )
    args = ["judge", "calibrate", str(graded), "--labels", str(labels), "--json"]
    data = json.loads(invoke([*args, "--id-field", "financebench_id"], env).stdout)
    assert data["compared"] == 150
    assert data["binary"]["accuracy"] == 1.0 and data["binary"]["kappa"] == pytest.approx(1.0)
    assert sum(data["three_class"]["confusion"][0]) == 29  # the reviewers' Correct answers
    assert data["three_class"]["confusion"][0][0] == 29


def test_calibrate_on_a_labelled_sample_gives_the_prediction_powered_share(
    tmp_path: Path, env: dict[str, str]
) -> None:
    # 40 graded answers, 12 of them labelled by a human who disagrees with the judge twice.
    scores = [4, 0, 4, 4, 0, 4, 4, 4, 0, 4] * 4
    graded = write_jsonl(
        tmp_path / "graded.jsonl",
        [{"id": i, "prediction": "p", "score": s, "status": "ok"} for i, s in enumerate(scores)],
    )
    human = ["Correct"] * 12
    human[0] = "Incorrect"  # the judge said 4
    human[1] = "Correct"  # the judge said 0
    labels = write_jsonl(
        tmp_path / "labels.jsonl", [{"id": str(i), "label": h} for i, h in enumerate(human)]
    )
    result = invoke(["judge", "calibrate", str(graded), "--labels", str(labels), "--json"], env)
    assert result.exit_code == 0, result.output
    ppi = json.loads(result.stdout)["prediction_powered"]
    assert ppi["labels"] == 12 and ppi["unlabelled"] == 28
    assert ppi["judge_mean"] == pytest.approx(sum(s == 4 for s in scores) / 40)

    ppi_py = pytest.importorskip("ppi_py")
    import numpy as np

    y = np.array([0.0 if h == "Incorrect" else 1.0 for h in human])
    yhat = np.array([float(s == 4) for s in scores[:12]])
    yhat_u = np.array([float(s == 4) for s in scores[12:]])
    low, high = ppi_py.ppi_mean_ci(y, yhat, yhat_u, alpha=0.05)
    assert (ppi["low"], ppi["high"]) == (pytest.approx(low[0], abs=1e-9),
                                         pytest.approx(high[0], abs=1e-9))  # fmt: skip
    text = invoke(["judge", "calibrate", str(graded), "--labels", str(labels)], env).stdout
    assert "prediction-powered (PPI++)" in text and "from 12 labels" in text


def test_dry_run_prices_the_judge_and_bias_check_calls_and_calls_nothing(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    prices = tmp_path / "prices.json"
    prices.write_text('{"openai/j": [1.0, 4.0]}')
    env = {"OPENAI_API_KEY": "", "OPENAI_BASE_URL": "", "MODEL_NAME": ""}
    result = CliRunner().invoke(
        app,
        ["judge", "grade", str(rows), "--model", "openai/j", "--dry-run", "--prices",
         str(prices), "--bias-check", "2", "-o", str(tmp_path / "out.jsonl")],
        env=env,
    )  # fmt: skip
    assert result.exit_code == 0, result.output  # no key needed: nothing is sent
    lines = result.stdout.splitlines()
    assert lines[0] == "dry run: no model called, nothing written"
    # Row d's answer and reference both decline: the refusal rule grades it, no call.
    assert lines[1] == "4 rows: 3 for the judge, 1 graded by the refusal rule (no call)"
    assert lines[2].startswith("judge openai/j: 3 calls, ~") and "192 output" in lines[2]
    assert lines[3].startswith("bias check openai/j: 4 calls at most, ~")
    assert lines[4].startswith("cost at most: $")
    assert lines[5].startswith("with --batch: at most $") and "50%" in lines[5]
    assert not (tmp_path / "out.jsonl").exists()
    # The calls it counts are the calls a grading makes.
    with FakeLLMServer(reply=score_by_prediction) as server:
        graded = CliRunner().invoke(
            app,
            ["judge", "grade", str(rows), "--model", "openai/j", "--base-url", server.base_url,
             "--no-cache", "-o", str(tmp_path / "out.jsonl")],
        )  # fmt: skip
        assert graded.exit_code == 0, graded.output
        assert server.calls == 3
