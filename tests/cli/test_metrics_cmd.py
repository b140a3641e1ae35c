"""`lasagna metrics squad`: the official scripts' numbers, and one-line errors."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from typer.testing import CliRunner

from lasagna_cli._app import app

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "squad"
SQUAD_DATA = ROOT.parent / "shared" / "data" / "datasets" / "squad"
LASAGNA = Path(sys.executable).with_name("lasagna")


def _official() -> ModuleType:
    # The oracle lives with the metrics tests: faithful copies of the official scripts.
    path = ROOT / "tests" / "metrics" / "official_squad.py"
    spec = importlib.util.spec_from_file_location("lasagna_test_official_squad_cli", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


official = _official()


def run(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["metrics", "squad", *map(str, args)])
    return result.exit_code, result.stdout, result.stderr


def load(path: Path) -> object:
    return json.loads(path.read_text(encoding="utf-8"))


def test_example_prints_the_official_v2_numbers() -> None:
    preds, data = EXAMPLES / "predictions.json", EXAMPLES / "dataset.json"
    want = official.main_v2(load(data), load(preds))
    code, out, err = run(preds, data, "--json")
    assert code == 0, err
    assert out == json.dumps(want, indent=2) + "\n"
    # The table shows the same numbers, rounded.
    code, out, _ = run(preds, data)
    assert code == 0
    assert "SQuAD v2.0 rules (from the dataset's version field)" in out
    for name, prefix in (("overall", ""), ("HasAns", "HasAns_"), ("NoAns", "NoAns_")):
        row = next(line for line in out.splitlines() if line.startswith(name)).split()
        assert row[1:] == [
            f"{want[prefix + 'exact']:.2f}",
            f"{want[prefix + 'f1']:.2f}",
            str(want[prefix + "total"]),
        ]


def test_no_answer_probabilities_as_the_official_script() -> None:
    preds, data, probs = (
        EXAMPLES / n for n in ("predictions.json", "dataset.json", "na_probs.json")
    )
    want = official.main_v2(load(data), load(preds), load(probs), 0.6)
    code, out, err = run(preds, data, "--na-prob", probs, "--na-prob-thresh", "0.6", "--json")
    assert code == 0, err
    assert json.loads(out) == dict(want)
    assert "best_f1_thresh" in json.loads(out)


@pytest.mark.skipif(not SQUAD_DATA.is_dir(), reason="shared SQuAD data not found")
def test_shared_bert_predictions_match_the_official_v1_script() -> None:
    preds = SQUAD_DATA / "bert_predictions_subset293.json"
    data = SQUAD_DATA / "squad_v1_dev_subset_from_haystack_small.json"
    want = official.evaluate_v1(load(data)["data"], load(preds))  # type: ignore[index]
    code, out, err = run(preds, data, "--json")
    assert code == 0, err
    assert out == json.dumps(want) + "\n"
    code, out, _ = run(preds, data)
    assert f"{want['exact_match']:.2f}" in out and f"{want['f1']:.2f}" in out
    assert "SQuAD v1.1 rules" in out
    # --v2 scores the same files with the v2.0 rules, as evaluate-v2.0.py would.
    code, out, _ = run(preds, data, "--v2", "--json")
    assert json.loads(out) == dict(official.main_v2(load(data), load(preds)))


def test_missing_predictions_warn_and_score_zero(tmp_path: Path) -> None:
    preds = load(EXAMPLES / "predictions.json")
    assert isinstance(preds, dict)
    del preds["lh1"], preds["sd6"]
    path = tmp_path / "preds.json"
    path.write_text(json.dumps(preds), encoding="utf-8")
    code, out, err = run(path, EXAMPLES / "dataset.json", "--json")
    assert code == 0
    assert err == "warning: 2 question(s) have no prediction and score 0 (first: lh1, sd6)\n"
    assert json.loads(out)["total"] == 22


def test_numbered_question_ids_match_predictions_keyed_by_their_string(tmp_path: Path) -> None:
    # Haystack numbers its SQuAD questions (JSON integers); a predictions file's keys are text.
    qas = [
        {"id": 7211011040021040393, "question": "Who?", "answers": [{"text": "Carla"}]},
        {"id": -57, "question": "What?", "answers": [{"text": "This"}]},
    ]
    data = tmp_path / "numbered.json"
    data.write_text(json.dumps({"data": [{"paragraphs": [{"context": "c", "qas": qas}]}]}))
    preds = tmp_path / "preds.json"
    preds.write_text(json.dumps({"7211011040021040393": "Carla", "-57": "That"}))
    code, out, err = run(preds, data, "--json")
    assert code == 0, err
    assert json.loads(out)["exact"] == 50.0 and json.loads(out)["total"] == 2
    assert err == ""


@pytest.mark.skipif(not SQUAD_DATA.is_dir(), reason="shared SQuAD data not found")
def test_shared_haystack_file_with_numbered_ids_is_scored(tmp_path: Path) -> None:
    data = SQUAD_DATA / "haystack_tiny.json"
    raw = load(data)
    assert isinstance(raw, dict)
    ids = [qa["id"] for a in raw["data"] for p in a["paragraphs"] for qa in p["qas"]]
    assert all(isinstance(i, int) for i in ids)  # what this test is about
    preds = tmp_path / "preds.json"
    preds.write_text(json.dumps({str(ids[0]): "Carla"}))
    code, out, err = run(preds, data, "--json")
    assert code == 0, err
    assert json.loads(out)["total"] == len(ids) and json.loads(out)["exact"] > 0
    assert f"first: {ids[1]}" in err  # the question without a prediction, by its id


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("files", "extra", "code", "message"),
    [
        (("missing.json", "dataset"), [], 2, "predictions {tmp}/missing.json: no such file"),
        (("preds", "missing.json"), [], 2, "dataset {tmp}/missing.json: no such file"),
        (("notjson", "dataset"), [], 1, "not valid JSON (Expecting value at line 1 column 1)"),
        (("list", "dataset"), [], 1, "expected predictions as a JSON object"),
        (("unknown", "dataset"), [], 1, "1 prediction(s) for question ids not in dataset"),
        (("dataset", "preds"), [], 1, "this looks like a SQuAD dataset, not predictions"),
        (("preds", "badshape"), [], 1, 'data[0] should hold a "paragraphs" list'),
        (("preds", "dataset"), ["--na-prob-thresh", "0.5"], 2, "--na-prob-thresh needs --na-prob"),
        (("preds", "dataset"), ["--v1"], 1, "which SQuAD v1.1 scoring cannot handle"),
        (
            ("preds", "dataset"),
            ["--v1", "--na-prob", "x"],
            2,
            "--na-prob applies to the SQuAD v2.0",
        ),
        (("preds", "dataset"), ["--na-prob", "{tmp}"], 2, "is a folder, expected a JSON file"),
    ],
)
def test_bad_files_are_one_line_and_an_exit_code(
    tmp_path: Path, files: tuple[str, str], extra: list[str], code: int, message: str
) -> None:
    preds = load(EXAMPLES / "predictions.json")
    assert isinstance(preds, dict)
    paths = {
        "preds": EXAMPLES / "predictions.json",
        "dataset": EXAMPLES / "dataset.json",
        "notjson": write(tmp_path, "n.json", "predictions: none\n"),
        "list": write(tmp_path, "l.json", '["1871"]'),
        "unknown": write(tmp_path, "u.json", json.dumps({**preds, "zz-unknown": "x"})),
        "badshape": write(tmp_path, "b.json", '{"version": "v2.0", "data": [{"title": "t"}]}'),
    }
    args = [paths.get(f, tmp_path / f) for f in files]
    args += [e.replace("{tmp}", str(tmp_path)) for e in extra]
    exit_code, out, err = run(*args)
    assert exit_code == code
    assert out == ""
    assert err.startswith("error: ") and err.count("\n") == 1
    assert message.replace("{tmp}", str(tmp_path)) in err


def test_the_installed_command_fails_without_a_traceback(tmp_path: Path) -> None:
    bad = write(tmp_path, "bad.json", "{")
    result = subprocess.run(
        [str(LASAGNA), "metrics", "squad", str(bad), str(EXAMPLES / "dataset.json")],
        capture_output=True,
        text=True,
        env=os.environ,
        timeout=60,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1 and "not valid JSON" in result.stderr
