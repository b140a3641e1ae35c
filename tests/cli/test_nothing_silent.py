"""Nothing silent: what a hostile (or careless) user gives gets a line that says what it is.

- `stats` names the files of a results folder named as results that are none, keeps them
  out of the setups and exits 1;
- a key given twice in DATASETS.json is refused (JSON readers keep the last one);
- `synthesize` that keeps no question says why and leaves an existing output as it was;
- a judge that gives every answer the same grade is called out (`judge grade`, `calibrate`);
- `judge grade` on a folder says so, and refuses a row too large to send;
- the server a model's calls went to (OPENAI_BASE_URL) is recorded, never its credentials.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_judge.testing import FakeLLMServer

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def invoke(args: list[str], env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(app, args, env=env or {}, catch_exceptions=False)


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    def reply(request: dict[str, Any]) -> str:
        if "tools" in request or "response_format" in request:  # a judge that likes all
            return json.dumps({"reasoning": "fine", "score": 4})
        return "Ada"

    with FakeLLMServer(reply=reply) as fake:
        yield fake


def environ(server: FakeLLMServer, tmp_path: Path) -> dict[str, str]:
    return {
        "OPENAI_API_KEY": "sk-never-written",
        "OPENAI_BASE_URL": server.base_url,
        "LASAGNA_CACHE_DIR": str(tmp_path / "cache"),
        "MODEL_NAME": "",
    }


def test_stats_names_files_that_are_not_results(tmp_path: Path, server: FakeLLMServer) -> None:
    datasets = {"facts": {"q1": {"input": "Who?", "output": "Ada"}, "q2": {"input": "When?"}}}
    (tmp_path / "datasets.json").write_text(json.dumps(datasets))
    (tmp_path / "setups.toml").write_text('[a]\nprovider = "fake"\nmodel = "m"\n')
    (tmp_path / "config.toml").write_text(
        f'[providers.fake]\napi = "openai"\nbase_url = "{server.base_url}"\n'
    )
    out = tmp_path / "out"
    swept = invoke(["benchmark", "sweep", "-d", str(tmp_path / "datasets.json"), "-b",
                    str(tmp_path / "setups.toml"), "-o", str(out)])  # fmt: skip
    assert swept.exit_code == 0, swept.output
    (out / "facts" / "q1" / "notes.json").write_text('{"what": "my notes"}')
    (out / "facts" / "q2" / "a-copy.json").write_text("{not json")
    result = invoke(["benchmark", "stats", "-d", str(tmp_path / "datasets.json"), "--results",
                     str(out), "--format", "json"])  # fmt: skip
    assert result.exit_code == 1
    (line,) = result.stderr.splitlines()
    assert "notes.json is not a result" in line and "a-copy.json is not JSON" in line
    assert "left out of every figure above" in line
    setups = set(json.loads(result.stdout)["lasagna"]["setups"])
    assert setups == {"a"}  # no phantom setup "notes" or "a-copy"


def test_a_key_twice_in_datasets_json_is_refused(tmp_path: Path) -> None:
    (tmp_path / "datasets.json").write_text(
        '{"facts": {"q1": {"input": "Who?"}, "q1": {"input": "Where?"}}}'
    )
    (tmp_path / "setups.toml").write_text('[a]\nprovider = "local"\nmodel = "smollm2"\n')
    result = invoke(["benchmark", "sweep", "-d", str(tmp_path / "datasets.json"), "-b",
                     str(tmp_path / "setups.toml"), "-o", str(tmp_path / "out")])  # fmt: skip
    assert result.exit_code == 1
    assert "the key 'q1' appears twice in one object" in result.stderr
    assert str(tmp_path / "datasets.json") in result.stderr


def test_synthesize_that_keeps_no_question_says_why(tmp_path: Path) -> None:
    out = tmp_path / "qa.jsonl"
    out.write_text('{"id": "kept", "question": "from before"}\n')
    with FakeLLMServer(reply="not a question at all") as fake:
        env = environ(fake, tmp_path)
        args = ["benchmark", "synthesize", str(EXAMPLES / "docs"), "--n", "2", "--model",
                "openai/gen", "--out", str(out), "--overwrite"]  # fmt: skip
        result = invoke(args, env)
    assert result.exit_code == 1, result.output
    assert "no question was kept" in result.stderr and "was not written" in result.stderr
    assert out.read_text() == '{"id": "kept", "question": "from before"}\n'


def test_a_judge_that_gives_one_grade_to_everything_is_called_out(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    graded = tmp_path / "graded.jsonl"
    result = invoke(["judge", "grade", str(EXAMPLES / "judge" / "answers.jsonl"), "--model",
                     "openai/judge", "--out", str(graded)], environ(server, tmp_path))  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "the same grade (4): such a judge measures nothing" in result.output
    calibrated = invoke(["judge", "calibrate", str(graded), "--labels",
                         str(EXAMPLES / "judge" / "labels.jsonl")])  # fmt: skip
    assert calibrated.exit_code == 0, calibrated.output
    # the warning opens the output whose table it speaks of, in the same stream
    warning, *rest = calibrated.stdout.splitlines()
    assert warning.startswith("warning: the judge gave all ")
    assert "such a judge measures nothing" in warning and "the agreement below" in warning
    assert "judge calibrate" not in warning  # not told to run what it runs
    assert "use a stronger judge model" in warning
    assert any(line.startswith("human \\ judge") for line in rest)  # the table, below it
    assert calibrated.stderr == ""
    as_json = invoke(["judge", "calibrate", str(graded), "--labels",
                      str(EXAMPLES / "judge" / "labels.jsonl"), "--json"])  # fmt: skip
    assert json.loads(as_json.stdout)["warning"] == warning.removeprefix("warning: ")
    assert as_json.stderr.strip() == warning


def test_judge_grade_on_a_folder_and_on_a_row_too_large(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    folder = invoke(["judge", "grade", str(tmp_path), "--model", "openai/j"])
    assert folder.exit_code == 2 and "is a folder" in folder.output
    rows = tmp_path / "rows.jsonl"
    rows.write_text(
        json.dumps({"id": "big", "question": "q?", "answers": "a", "prediction": "x" * 60_000})
        + "\n"
    )
    big = invoke(["judge", "grade", str(rows), "--model", "openai/j"], environ(server, tmp_path))
    assert big.exit_code == 1
    assert "rows.jsonl:1 (id 'big'): 60,003 characters" in big.stderr
    assert "--max-chars" in big.stderr and server.calls == 0
    allowed = invoke(["judge", "grade", str(rows), "--model", "openai/j", "--max-chars",
                      "100000"], environ(server, tmp_path))  # fmt: skip
    assert allowed.exit_code == 0, allowed.output


def test_the_server_of_the_calls_is_recorded_without_credentials(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    out = tmp_path / "run"
    result = invoke(["benchmark", "run", str(EXAMPLES / "data" / "pasta.jsonl"), "--generator",
                     "openai/gen", "-o", str(out)], environ(server, tmp_path))  # fmt: skip
    assert result.exit_code == 0, result.output
    endpoint = server.base_url
    (found,) = json.loads((out / "results.json").read_text())["results"]
    assert found["setup"]["generator_endpoint"] == endpoint
    manifest = (out / "manifest.json").read_text()
    assert endpoint in manifest
    task = next(out.glob("tasks/*/*/*.json")).read_text()
    assert json.loads(task)["generation"]["endpoint"] == endpoint
    for text in (manifest, task, (out / "results.json").read_text()):
        assert "sk-never" not in text


def test_a_recorded_endpoint_drops_credentials_and_query() -> None:
    from lasagna_cli.engine.config._config import endpoint_url

    url = "https://user:pw@gateway.example:8443/v1/?api-key=secret#frag"
    assert endpoint_url(url) == "https://gateway.example:8443/v1"


def test_a_question_id_twice_in_squad_predictions_is_refused(tmp_path: Path) -> None:
    predictions = (EXAMPLES / "squad" / "predictions.json").read_text()
    first_id = next(iter(json.loads(predictions)))
    twice = tmp_path / "predictions.json"
    twice.write_text(predictions.replace("{", f'{{"{first_id}": "a first answer", ', 1))
    result = invoke(["metrics", "squad", str(twice), str(EXAMPLES / "squad" / "dataset.json")])
    assert result.exit_code == 1
    assert f"predictions {twice}: the key '{first_id}' appears twice" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_stats_and_the_staged_pipeline_call_out_a_one_grade_judge(
    tmp_path: Path, server: FakeLLMServer
) -> None:
    env = environ(server, tmp_path)
    questions = {f"q{i}": {"input": f"Who {i}?", "output": "Ada"} for i in range(3)}
    (tmp_path / "datasets.json").write_text(json.dumps({"facts": questions}))
    (tmp_path / "setups.toml").write_text('[a]\nprovider = "fake"\nmodel = "m"\n')
    (tmp_path / "config.toml").write_text(
        f'[providers.fake]\napi = "openai"\nbase_url = "{server.base_url}"\n'
    )
    out = tmp_path / "out"
    swept = invoke(["benchmark", "sweep", "-d", str(tmp_path / "datasets.json"), "-b",
                    str(tmp_path / "setups.toml"), "-o", str(out)], env)  # fmt: skip
    assert swept.exit_code == 0, swept.output
    stats = invoke(["benchmark", "stats", "-d", str(tmp_path / "datasets.json"), "--results",
                    str(out), "--judge", "openai/judge"], env)  # fmt: skip
    assert stats.exit_code == 0, stats.output
    assert "the same grade (4): such a judge measures nothing" in stats.output

    staged = tmp_path / "staged"
    locomo = ["benchmark", "run", "locomo", "--data-dir", str(EXAMPLES / "data" / "locomo-mini"),
              "-o", str(staged)]  # fmt: skip
    gen = invoke([*locomo, "--step", "gen", "--generator", "openai/gen"], env)
    assert gen.exit_code == 0, gen.output
    evaluated = invoke([*locomo, "--step", "eval", "--judge", "openai/judge"], env)
    assert evaluated.exit_code == 0, evaluated.output
    assert "the same grade (4): such a judge measures nothing" in evaluated.output


def test_system_credentials_in_the_url_and_an_authorization_header_are_refused(
    tmp_path: Path,
) -> None:
    result = invoke(["benchmark", "run", str(EXAMPLES / "data" / "pasta.jsonl"), "--system",
                     "http://user:pw@127.0.0.1:9/answer", "--system-header",
                     "Authorization: Bearer x", "-o", str(tmp_path / "run")])  # fmt: skip
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert "keep one of the two" in line and "pw" not in line
    assert not (tmp_path / "run").exists()
