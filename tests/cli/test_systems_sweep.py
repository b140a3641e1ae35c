"""`system =` in `lasagna benchmark sweep` setups: the user's pipeline beside a plain model,
graded by `lasagna benchmark stats` like any setup."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_judge.testing import FakeLLMServer

DATASETS: dict[str, Any] = {
    "facts": {
        "q1": {"input": "What is the capital of France?", "output": "Paris"},
        "q2": {"input": "Who wrote Hamlet?", "output": "Shakespeare"},
    },
    "quiz": {
        "m1": {
            "input": "How many legs has a spider?",
            "output": {"type": "MCQ", "options": {"a": "six", "b": "eight"}, "answer": "b"},
        },
    },
}

PIPELINE = """
import json, pathlib
HERE = pathlib.Path(__file__).parent

def answer(question, row):
    with open(HERE / "seen.jsonl", "a") as f:
        f.write(json.dumps({"question": question, "row": row}) + "\\n")
    if "Hamlet" in question:
        raise KeyError("no such author")
    if row["metadata"]["options"]:
        return {"answer": "b", "retrieved": ["spiders.md#0"]}
    return {"answer": "Paris", "retrieved": [{"id": "france.md#2", "text": "Paris is..."}]}

def ranking_only(question):
    return ["doc1", "doc2"]
"""

CONFIG = """\
[providers.fake]
api = "openai"
base_url = "{base_url}"
"""


def sweep(folder: Path, setups: str, server: FakeLLMServer, *extra: str) -> Any:
    (folder / "datasets.json").write_text(json.dumps(DATASETS))
    (folder / "setups.toml").write_text(setups)
    (folder / "config.toml").write_text(CONFIG.format(base_url=server.base_url))
    return CliRunner().invoke(
        app,
        [
            "benchmark",
            "sweep",
            "--datasets",
            str(folder / "datasets.json"),
            "--benchmark",
            str(folder / "setups.toml"),
            "--output",
            str(folder / "out"),
            *extra,
        ],
        env={"OPENAI_API_KEY": "unused"},
    )


@pytest.fixture
def pipeline(tmp_path: Path) -> Path:
    path = tmp_path / "pipeline.py"
    path.write_text(textwrap.dedent(PIPELINE))
    return path


def test_a_system_setup_beside_a_model(pipeline: Path, tmp_path: Path) -> None:
    setups = f"""\
[plain-model]
provider = "fake"
model = "m"

[my-rag]
system = "{pipeline}:answer"
"""
    with FakeLLMServer(reply="Paris") as server:
        result = sweep(tmp_path, setups, server)
        model_calls = server.calls
    assert result.exit_code == 1, result.output  # my-rag failed on q2: recorded, counted
    assert model_calls == 3  # the model answered its own tasks only
    out = tmp_path / "out"
    ok = json.loads((out / "facts" / "q1" / "my-rag.json").read_text())["ok"]
    assert ok["result"] == "Paris"
    assert ok["stats"]["passages"] == ["france.md#2"]
    assert ok["stats"]["setup"] == {
        "name": "my-rag",
        "system": {"kind": "callable", "target": f"{pipeline}:answer"},
        "prompt": "{{INPUT}}",
        "datasets": None,
    }
    failed = json.loads((out / "facts" / "q2" / "my-rag.json").read_text())
    assert "raised KeyError: 'no such author' (at pipeline.py:" in failed["error"]
    seen = [json.loads(x) for x in (tmp_path / "seen.jsonl").read_text().splitlines()]
    mcq = next(s for s in seen if s["row"]["id"] == "quiz/m1")
    assert mcq["question"] == "How many legs has a spider?\n\na: six\nb: eight"
    assert mcq["row"]["metadata"] == {
        "dataset": "quiz",
        "question": "m1",
        "options": {"a": "six", "b": "eight"},
    }

    stats = CliRunner().invoke(
        app,
        [
            "benchmark",
            "stats",
            "--datasets",
            str(tmp_path / "datasets.json"),
            "--results",
            str(out),
            "--format",
            "json",
        ],
    )
    assert stats.exit_code == 0, stats.output
    payload = json.loads(stats.stdout)
    by_setup = {n: r["overall"] for n, r in payload["lasagna"]["setups"].items()}
    assert set(by_setup) == {"my-rag", "plain-model"}
    # The failed question is an error, not a wrong answer: my-rag's one scored free-form
    # answer is right, and its MCQ answer too.
    mine = by_setup["my-rag"]
    assert mine["free_form"] == {"scored": 1, "errors": 1, "em": 1.0, "f1": 1.0}
    extracted = mine["option_extraction"]
    assert (extracted["correct"], extracted["accuracy"]) == (1, 1.0)
    kag = {r["setup"]: r["overall"] for r in payload["setups"]}
    assert kag["my-rag"]["total"] == 1 and kag["my-rag"]["avg_generation_secs"] is not None


def test_a_system_that_only_ranks_is_an_error_per_task(pipeline: Path, tmp_path: Path) -> None:
    setups = f'[ranker]\nsystem = "{pipeline}:ranking_only"\n'
    with FakeLLMServer(reply="x") as server:
        result = sweep(tmp_path, setups, server)
    assert result.exit_code == 1
    record = json.loads((tmp_path / "out" / "facts" / "q1" / "ranker.json").read_text())
    assert "gave no answer for facts/q1 (only a ranking); a sweep grades answers" in record["error"]


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ('system = "m:f"\nmodel = "x"', "`model` does not apply to a system setup"),
        ('system = {predictions = "p.jsonl"}', "a predictions file is scored by"),
        ('system = "m:f"\nprompt = "{{INPUT}} {{RETRIEVAL}}"', "a system retrieves for itself"),
        ('system = "nonsense"', "expected package.module:attr"),
        ('system = {url = "http://h/x", retries = -1}', "retries: expected a whole number >= 0"),
    ],
)
def test_bad_system_setups_are_refused_before_any_call(
    tmp_path: Path, setup: str, message: str
) -> None:
    with FakeLLMServer(reply="x") as server:
        result = sweep(tmp_path, f"[mine]\n{setup}\n", server)
        assert server.calls == 0
    assert result.exit_code == 1, result.output
    assert message in result.stderr
    assert not (tmp_path / "out").exists()


def test_an_import_error_is_one_line(tmp_path: Path) -> None:
    with FakeLLMServer(reply="x") as server:
        result = sweep(tmp_path, f'[mine]\nsystem = "{tmp_path}/nope.py:answer"\n', server)
    assert result.exit_code == 2
    assert "no such Python file" in result.stderr
    assert "Traceback" not in result.output
