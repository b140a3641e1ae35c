"""`lasagna benchmark prepare`: OpenViking's run_sampling.py in one command, from raw files
in OpenViking's raw_data/ layout to datasets/{dataset_name}/, which its configs then read."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_judge.testing import FakeLLMServer

HERE = Path(__file__).parent
ADAPTER_FIXTURES = HERE.parent / "synth" / "fixtures"
RAW = {"Locomo": "locomo", "SyllabusQA": "syllabusqa", "Qasper": "qasper"}


@pytest.fixture
def rag(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "RAG"
    for spelled, name in RAW.items():
        shutil.copytree(ADAPTER_FIXTURES / name, folder / "raw_data" / spelled)
    shutil.copytree(ADAPTER_FIXTURES / "financebench", folder / "raw_data" / "financebench")
    shutil.copytree(HERE / "fixtures" / "openviking" / "RAG" / "config", folder / "config")
    monkeypatch.chdir(folder)
    return folder


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, ["benchmark", *args], env={"LASAGNA_CACHE_DIR": "cache"})


def test_prepare_samples_all_four_with_openvikings_parameters(rag: Path) -> None:
    result = invoke("prepare")
    assert result.exit_code == 0, result.output
    sizes = {"Locomo": (80, 3), "SyllabusQA": (90, 7), "Qasper": (60, 8), "FinanceBench": (12, 3)}
    for spelled, (size, docs) in sizes.items():
        meta = json.loads((rag / "datasets" / spelled / "sampling_metadata.json").read_text())
        assert meta["seed"] == 42 and meta["sample_mode"] == "stratified"
        assert (meta["sample_size"], meta["num_docs"], meta["is_full"]) == (size, docs, False)
    locomo = json.loads((rag / "datasets" / "Locomo" / "sampling_metadata.json").read_text())
    assert locomo["sampled_num_docs"] <= 3 and "Category 5" in locomo["note"]
    assert (rag / "datasets" / "Locomo" / "locomo10.json").is_file()  # the config's path
    again = invoke("prepare")
    assert again.exit_code == 2 and "--overwrite" in again.stderr
    assert invoke("prepare", "--overwrite").exit_code == 0
    # The samples are what OpenViking's configs read: gen runs on each.
    with FakeLLMServer(reply="Not mentioned") as fake:
        for config in ("locomo", "syllabusqa", "qasper", "financebench"):
            run = invoke(
                "openviking", f"config/{config}_config.yaml", "--step", "gen",
                "--base-url", fake.base_url,
            )  # fmt: skip
            assert run.exit_code == 0, run.output


def test_a_missing_dataset_is_named_and_the_others_are_written(rag: Path) -> None:
    shutil.rmtree(rag / "raw_data" / "Qasper")
    result = invoke("prepare")
    assert result.exit_code == 1
    assert "qasper: no raw files in raw_data/Qasper" in result.stderr
    assert (rag / "datasets" / "Locomo" / "sampling_metadata.json").is_file()
    one = invoke("prepare", "--dataset", "squad", "-o", "other")
    assert one.exit_code == 2 and "lasagna benchmark sample" in one.stderr


def test_sample_datasets_flags_are_accepted(rag: Path) -> None:
    result = invoke("prepare", "--dataset", "Locomo", "--num-docs", "1", "--seed", "7")
    assert result.exit_code == 0, result.output
    meta = json.loads((rag / "datasets" / "Locomo" / "sampling_metadata.json").read_text())
    assert (meta["num_docs"], meta["sample_size"], meta["seed"]) == (1, None, 7)
    assert meta["sampled_num_docs"] == 1 and not (rag / "datasets" / "Qasper").exists()
    full = invoke("prepare", "-d", "qasper", "--full", "--sample-size", "3")
    assert full.exit_code == 0, full.output
    meta = json.loads((rag / "datasets" / "Qasper" / "sampling_metadata.json").read_text())
    assert meta["is_full"] and meta["sample_size"] is None  # --full overrides the size
    random = invoke("prepare", "-d", "all", "--sample-size", "2", "--sample-mode", "random",
                    "--overwrite")  # fmt: skip
    assert random.exit_code == 0, random.output


@pytest.mark.parametrize(
    ("dataset", "raw"),
    [
        ("Locomo", "Locomo/locomo10.json"),
        ("Qasper", "Qasper/qasper-dev-v0.3.json"),
        ("FinanceBench", "financebench/financebench_open_source.jsonl"),
    ],
)
def test_a_raw_file_nested_too_deep_is_bad_data_in_a_line(
    rag: Path, dataset: str, raw: str
) -> None:
    path = rag / "raw_data" / raw
    assert path.is_file()
    path.write_text("[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")
    result = invoke("prepare", "--dataset", dataset)
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output and "nested too deep" in result.stderr
    assert str(path.name) in result.stderr and len(result.stderr.strip().splitlines()) == 1
