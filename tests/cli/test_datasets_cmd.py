"""`lasagna benchmark list | info | sample`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from lasagna_cli._app import app

FIXTURES = Path(__file__).resolve().parents[1] / "synth" / "fixtures"
DATASETS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "datasets"


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def test_list_shows_every_benchmark_with_splits_and_licence() -> None:
    result = invoke("benchmark", "list")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["name", "benchmark", "splits", "categories", "licence"]
    for name in (
        "locomo",
        "syllabusqa",
        "qasper",
        "financebench",
        "squad",
        "beir",
        "chroma-chunking",
    ):
        assert any(line.startswith(name + " ") for line in lines), name
    locomo = next(line for line in lines if line.startswith("locomo "))
    assert "CC BY-NC 4.0" in locomo and " test " in locomo
    assert all(line == line.rstrip() for line in lines)


def test_info_shows_licence_citation_splits_categories_and_instructions() -> None:
    result = invoke("benchmark", "info", "syllabusqa")
    assert result.exit_code == 0
    out = result.stdout
    assert "citation:  Fernandez, Scarlatos, Lan. SyllabusQA" in out
    assert "splits:    train, val, test (default)" in out
    assert "judge:     the scale rubric" in out
    assert "  no answer: the syllabus does not answer it (skipped)" in out
    assert "yes/no" in out and 'Start with "Yes" or "No"' in out
    assert "https://github.com/umass-ml4ed/SyllabusQA" in out


def test_info_with_data_counts_questions_categories_and_skips() -> None:
    result = invoke("benchmark", "info", "locomo", "--data-dir", str(FIXTURES / "locomo"))
    assert result.exit_code == 0
    out = result.stdout
    assert "in --data-dir (split test): 2 documents, 8 questions" in out
    assert "  1: 3\n  2: 2\n  3: 1\n  4: 2\n" in out
    assert "skipped, category 5 (adversarial): 2" in out
    assert "without evidence (recall counted apart): 1" in out


def test_unknown_name_is_a_usage_error_with_a_suggestion() -> None:
    result = invoke("benchmark", "info", "qasperr")
    assert result.exit_code == 2
    assert "did you mean 'qasper'" in result.output


def test_missing_files_name_the_file_and_where_to_get_it(tmp_path: Path) -> None:
    result = invoke("benchmark", "info", "financebench", "--data-dir", str(tmp_path))
    assert result.exit_code == 2
    assert "financebench_open_source.jsonl" in result.output
    assert "github.com/patronus-ai/financebench" in result.output


def test_sample_writes_the_subset_and_metadata_and_is_reproducible(tmp_path: Path) -> None:
    args = ["benchmark", "sample", "locomo", "--data-dir", str(FIXTURES / "locomo"),
            "--sample-size", "6", "--seed", "42"]  # fmt: skip
    first = invoke(*args, "-o", str(tmp_path / "a"))
    assert first.exit_code == 0, first.output
    assert "locomo (test): 2 of 2 documents, 6 of 8 questions (seed 42, stratified)" in first.stdout
    assert "  1: 2 (quota 2)" in first.stdout
    hint = f"run it: lasagna benchmark run locomo --data-dir {tmp_path / 'a'} --step gen "
    assert hint in first.stdout  # a command that runs as printed (no --generator needed)
    second = invoke(*args, "-o", str(tmp_path / "b"))
    assert second.exit_code == 0
    for name in ("locomo10.json", "sampling_metadata.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    metadata = json.loads((tmp_path / "a" / "sampling_metadata.json").read_text())
    assert metadata["sampled"]["questions"] == 6
    # The sample runs as the benchmark itself.
    gen = invoke("benchmark", "run", "locomo", "--data-dir", str(tmp_path / "a"), "--step", "gen",
                 "-o", str(tmp_path / "run"))  # fmt: skip
    assert gen.exit_code == 0, gen.output
    assert "gen: 6 questions" in gen.stdout


def test_sample_documents_and_random_mode(tmp_path: Path) -> None:
    result = invoke("benchmark", "sample", "qasper", "--data-dir", str(FIXTURES / "qasper"),
                    "--num-docs", "1", "--mode", "random", "-o", str(tmp_path / "s"))  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "1 of 2 documents" in result.stdout
    assert (tmp_path / "s" / "qasper-dev-v0.3.json").is_file()
    assert f"--data-dir {tmp_path / 's'} --step gen" in result.stdout  # dev is the default


def test_the_run_hint_of_a_sample_of_another_split_names_it(tmp_path: Path) -> None:
    result = invoke("benchmark", "sample", "qasper", "--data-dir", str(FIXTURES / "qasper"),
                    "--split", "dev", "--num-docs", "1", "-o", str(tmp_path / "s"))  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "--split" not in result.stdout.split("run it:")[1]
    data = tmp_path / "train"
    data.mkdir()
    (data / "qasper-train-v0.3.json").write_bytes(
        (FIXTURES / "qasper" / "qasper-dev-v0.3.json").read_bytes()
    )
    other = invoke("benchmark", "sample", "qasper", "--data-dir", str(data), "--split", "train",
                   "--num-docs", "1", "-o", str(tmp_path / "t"))  # fmt: skip
    assert other.exit_code == 0, other.output
    assert f"--data-dir {tmp_path / 't'} --split train --step gen" in other.stdout


def test_sample_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "keep.txt").write_text("mine")
    args = ["benchmark", "sample", "locomo", "--data-dir", str(FIXTURES / "locomo"), "--full",
            "-o", str(tmp_path / "s")]  # fmt: skip
    refused = invoke(*args)
    assert refused.exit_code == 2 and "--overwrite" in refused.output
    assert invoke(*args, "--overwrite").exit_code == 0
    assert (tmp_path / "s" / "keep.txt").read_text() == "mine"


def test_sample_usage_errors(tmp_path: Path) -> None:
    base = ["benchmark", "sample", "locomo", "--data-dir", str(FIXTURES / "locomo")]
    cases = [
        ([], "--num-docs N"),
        (["--full", "--num-docs", "1"], "--full takes the whole benchmark"),
        (["--sample-size", "3", "--mode", "even"], "--mode: expected stratified or random"),
    ]
    for extra, message in cases:
        result = invoke(*base, *extra, "-o", str(tmp_path / "x"))
        assert result.exit_code == 2, extra
        assert message in result.output
    beir = invoke("benchmark", "sample", "beir", "--data-dir", str(FIXTURES / "beir"),
                  "--num-docs", "1", "-o", str(tmp_path / "y"))  # fmt: skip
    assert beir.exit_code == 2 and "use --sample-size N" in beir.output


def test_sample_real_syllabusqa_when_present(tmp_path: Path) -> None:
    source = DATASETS / "syllabusqa"
    if not source.exists():
        import pytest

        pytest.skip("real data not present")
    result = invoke("benchmark", "sample", "syllabusqa", "--data-dir", str(source),
                    "--sample-size", "60", "-o", str(tmp_path / "s"))  # fmt: skip
    assert result.exit_code == 0, result.output
    metadata = json.loads((tmp_path / "s" / "sampling_metadata.json").read_text())
    assert set(metadata["sampled"]["categories"].values()) == {10}
    assert (
        len(list((tmp_path / "s" / "syllabi_text_test").iterdir()))
        == metadata["sampled"]["documents"]
    )
