"""Sweep files (YAML or TOML): benchmarks by path relative to the file, setups to compare,
filters, names, and the comparability groups they produce."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lasagna_cli._app import app

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "data"

TOML = """
tracks = ["retrieval"]
seed = 42

[[benchmarks]]
path = "pasta.jsonl"

[[benchmarks]]
path = "pasta.jsonl"
name = "pasta-multihop"
filters = { question_type = "multihop" }

[[benchmarks]]
path = "pasta-beir"
split = "test"

[[setups]]
name = "bm25-k1"
retriever = { top_k = 1 }

[[setups]]
name = "bm25-k5"
retriever = { top_k = 5 }

[[setups]]
name = "bm25-k5-no-stemming"
retriever = { top_k = 5, stemmer = "none" }
"""


def run(*args: str) -> Any:
    return CliRunner().invoke(app, ["benchmark", "run", *args])


def copy_examples(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("pasta.jsonl", "pasta.csv"):
        shutil.copy(EXAMPLES / name, folder / name)
    shutil.copytree(EXAMPLES / "pasta-beir", folder / "pasta-beir")
    return folder


def results_of(out: Path) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads((out / "results.json").read_text())["results"]
    return found


def test_the_example_sweep_file(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = run(str(EXAMPLES / "sweep.yaml"), "-o", str(out))
    assert result.exit_code == 0, result.output
    found = results_of(out)
    assert [(r["dataset"]["name"], r["setup"]["name"]) for r in found] == [
        (dataset, setup)
        for dataset in (
            "local/pasta@b16e975f7950",
            "pasta-multihop@b16e975f7950",
            "local/pasta-beir@31063d792100",
        )
        for setup in ("bm25-k1", "bm25-k5", "bm25-k5-no-stemming")
    ]
    # The settings the setups vary are compared, not held fixed: one group per benchmark.
    keys = [r["comparability_key"] for r in found]
    assert len(set(keys)) == 3 and keys[0] == keys[1] == keys[2]
    assert found[0]["varied"] == ["stemmer", "top_k"]
    assert "top_k" not in found[0]["held_fixed"]["retriever"]
    assert found[3]["dataset"]["filters"] == {"question_type": ["multihop"]}
    assert found[3]["counts"]["questions"] == 2
    assert "recall@1" in found[0]["metrics"]["retrieval"]
    assert "recall@5" in found[1]["metrics"]["retrieval"]
    for table in (
        "retrieval: local/pasta@b16e975f7950",
        "retrieval: pasta-multihop@",
        "compared: stemmer, top_k",
    ):
        assert table in result.stdout
    # Setups compared at different k: the recall@k and hit@k cells say whose k.
    row = next(line for line in result.stdout.splitlines() if "│ bm25-k1 " in line)
    assert "0.917 ±0.125 (k=1)" in row and "1.000 (k=1)" in row
    # Headings and keys are whole lines, never wrapped to a narrow table's width.
    lines = result.stdout.splitlines()
    assert "retrieval: local/pasta-beir@31063d792100 (test, 7 questions, native)" in lines
    assert (
        sum(
            line.startswith("comparability key ")
            and line.endswith("± the 95% bootstrap interval (wider side); compared: stemmer, top_k")
            for line in lines
        )
        == 3
    )


def test_toml_and_yaml_sweeps_are_the_same_run(tmp_path: Path) -> None:
    folder = copy_examples(tmp_path / "data")
    (folder / "sweep.toml").write_text(TOML, encoding="utf-8")
    assert run(str(folder / "sweep.toml"), "-o", str(tmp_path / "toml")).exit_code == 0
    assert run(str(EXAMPLES / "sweep.yaml"), "-o", str(tmp_path / "yaml")).exit_code == 0
    toml, yaml = results_of(tmp_path / "toml"), results_of(tmp_path / "yaml")
    assert [r["comparability_key"] for r in toml] == [r["comparability_key"] for r in yaml]
    assert [r["metrics"] for r in toml] == [r["metrics"] for r in yaml]


def test_paths_are_relative_to_the_sweep_file_and_setups_can_be_limited(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = copy_examples(tmp_path / "deep" / "data")
    sweep = folder / "s.yaml"
    sweep.write_text(
        "benchmarks:\n"
        "  - path: pasta.csv\n"
        "    setups: [small]\n"
        "  - path: ./pasta-beir\n"
        "    n_samples: 3\n"
        "setups:\n"
        "  - {name: small, retriever: {top_k: 2}}\n"
        "  - {name: okapi, retriever: {variant: okapi, k1: 1.2, b: 0.6}}\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)  # not the sweep file's folder
    result = run(str(sweep.relative_to(tmp_path)), "-o", "out")
    assert result.exit_code == 0, result.output
    found = results_of(tmp_path / "out")
    assert [(r["dataset"]["name"], r["setup"]["name"]) for r in found] == [
        ("local/pasta@bfc162ef3687", "small"),
        ("local/pasta-beir@31063d792100", "small"),
        ("local/pasta-beir@31063d792100", "okapi"),
    ]
    assert found[1]["counts"]["questions"] == 3
    assert found[2]["setup"]["retriever"]["variant"] == "okapi"
    assert found[2]["setup"]["retriever"]["k1"] == 1.2


def test_flags_fill_what_the_sweep_file_leaves_out(tmp_path: Path) -> None:
    folder = copy_examples(tmp_path / "data")
    sweep = folder / "s.yaml"
    sweep.write_text("benchmarks:\n  - path: pasta.jsonl\n    n_samples: 4\n", encoding="utf-8")
    result = run(
        str(sweep),
        "-n",
        "9",
        "--top-k",
        "3",
        "--filter",
        "question_type=factoid",
        "-o",
        str(tmp_path / "out"),
    )
    assert result.exit_code == 0, result.output
    (found,) = results_of(tmp_path / "out")
    assert found["counts"]["questions"] == 4  # the file's n_samples wins over -n
    assert found["setup"]["name"] == "bm25-k3" and "recall@3" in found["metrics"]["retrieval"]
    assert found["dataset"]["filters"] == {"question_type": ["factoid"]}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "benchmark:\n  - path: pasta.jsonl\n",
            'unknown key "benchmark" (did you mean "benchmarks"?)',
        ),
        (
            "benchmarks:\n  - pth: pasta.jsonl\n",
            'benchmarks[0]: unknown key "pth" (did you mean "path"?)',
        ),
        (
            "benchmarks:\n  - path: pasta.jsonl\nsetups:\n  - name: a\n    retriver: {}\n",
            'setups[0]: unknown key "retriver" (did you mean "retriever"?)',
        ),
        (
            "benchmarks:\n  - path: pasta.jsonl\nsetups:\n  - name: a\n    retriever: {topk: 3}\n",
            'unknown key "topk" (did you mean "top_k"?)',
        ),
        (
            "benchmarks:\n  - path: pasta.jsonl\nsetups:\n  - name: a\n  - name: a\n",
            "the name is used twice",
        ),
        (
            "benchmarks:\n  - path: pasta.jsonl\n    setups: [b]\nsetups:\n  - name: a\n",
            'no setup is named "b"',
        ),
        ("benchmarks:\n  - name: squad\n", "benchmarks[0] (squad): give `data_dir:`"),
        ("benchmarks:\n  - name: sqaud\n", '"sqaud" is not a registered benchmark (did you'),
        ("benchmarks: [\n", "not valid YAML at line"),
        ("benchmarks: []\n", "expected a list of benchmarks"),
        ("benchmarks:\n  - path: pasta.jsonl\ntop_k: 0\n", "s.yaml: top_k: expected a whole"),
        (
            "benchmarks:\n  - path: pasta.jsonl\nsetups:\n  - name: a\n"
            "    retriever: {stemmer: klingon}\n",
            'unknown stemmer "klingon"',
        ),
    ],
)
def test_sweep_mistakes_are_usage_errors(tmp_path: Path, text: str, message: str) -> None:
    folder = copy_examples(tmp_path / "data")
    (folder / "s.yaml").write_text(text, encoding="utf-8")
    result = run(str(folder / "s.yaml"), "-o", str(tmp_path / "out"))
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert not (tmp_path / "out").exists()


def test_a_missing_sweep_file_is_named_as_one(tmp_path: Path) -> None:
    result = run(str(tmp_path / "sweep.yaml"), "-o", str(tmp_path / "out"))
    assert result.exit_code == 2, result.output
    assert "sweep.yaml: no such sweep file; check the path" in result.stderr


def test_two_entries_under_one_name_are_refused(tmp_path: Path) -> None:
    folder = copy_examples(tmp_path / "data")
    (folder / "s.yaml").write_text(
        "benchmarks:\n  - path: pasta.jsonl\n  - path: pasta.jsonl\n    n_samples: 3\n",
        encoding="utf-8",
    )
    result = run(str(folder / "s.yaml"), "-o", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert "runs under the same name and split" in result.stderr
