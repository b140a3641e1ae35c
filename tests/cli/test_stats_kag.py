"""`benchmark stats` gives kag's figures on a result tree kag wrote, and a damaged result
file (a truncated one, issue 29) fails the command after the report.

The tree is `fixtures/kag/stats/` (written by hand from kag's structs: its README). The
expected figures are worked out by hand from kag 0.2's `src/subcommand/stats/metric.rs` and
`mod.rs` (commit 12389ee):
- mcq-form 0-2 have an answer (b, a, c): 3 scorable questions; 3 has none, so its two
  files are "skipped"; free-form has no `output` and is not kag's.
- qwen-kag answers " B\\n" (trimmed and ASCII-case-folded: correct), "(a) Vitamin A" (not
  the bare id: incorrect, though lasagna's extraction reads a), "c" (correct): OK 2,
  WRONG 1, ERR 0, TOT 3. Its times 1.5 + 2.0 + 1.700000001 s: the mean, Duration's
  from_secs_f64(5.200000001 / 3), rounds to 1.733333334 s. Retrieval (the embedder's
  time): 0.2 + 0.3 + 0.1 s over 3, graph counts 36/54/123 over 3.
- qwen-native: "b" (correct), an error, "d" (incorrect): OK 1, WRONG 1, ERR 1; its two
  timed files 0.9 + 1.1 s: mean 1.0.
- CTX_LEN is the prompt's length in UTF-8 bytes (Rust's `str::len`): its "é"s count twice.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_judge.testing import FakeLLMServer

KAG = Path(__file__).parent / "fixtures" / "kag" / "stats"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "data"


def stats(*args: str) -> Any:
    return CliRunner().invoke(app, ["benchmark", "stats", *args])


def prompts(setup: str, questions: tuple[str, ...]) -> list[str]:
    return [
        json.loads((KAG / "results" / "mcq-form" / q / f"{setup}.json").read_text())["ok"]["stats"][
            "prompt"
        ]
        for q in questions
    ]


def test_kags_json_report_key_for_key() -> None:
    result = stats("-d", str(KAG / "datasets.json"), "-r", str(KAG / "results"), "--format",
                   "json")  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert list(report) == ["datasets", "scorable_questions", "skipped_files", "setups",
                            "lasagna"]  # fmt: skip
    assert (report["datasets"], report["scorable_questions"], report["skipped_files"]) == (2, 3, 2)
    kag, native = report["setups"]
    assert kag["setup"] == "qwen-kag" and native["setup"] == "qwen-native"
    assert list(kag) == ["setup", "overall", "per_dataset"]
    assert list(kag["per_dataset"]) == ["mcq-form"]
    kag_bytes = sum(len(p.encode()) for p in prompts("qwen-kag", ("0", "1", "2")))
    assert kag_bytes > sum(len(p) for p in prompts("qwen-kag", ("0", "1", "2")))
    assert kag["overall"] == {
        "total": 3, "correct": 2, "incorrect": 1, "errors": 0, "parsed": 3,
        "accuracy": 2 / 3, "precision": 2 / 3, "coverage": 1.0,
        "avg_generation_secs": 1 + 733333334 / 1e9,
        "total_generation_secs": 5 + 200000001 / 1e9,
        "avg_context_length": kag_bytes / 3,
        "retrieval": {
            "time_secs": 0.6, "vertices": 36, "relationships": 54, "properties": 123,
            "samples": 3, "avg_time_secs": 0.2, "avg_vertices": 12.0,
            "avg_relationships": 18.0, "avg_properties": 41.0,
        },
    }  # fmt: skip
    assert kag["per_dataset"]["mcq-form"] == kag["overall"]
    native_bytes = sum(len(p.encode()) for p in prompts("qwen-native", ("0", "2")))
    assert native["overall"] == {
        "total": 3, "correct": 1, "incorrect": 1, "errors": 1, "parsed": 2,
        "accuracy": 1 / 3, "precision": 0.5, "coverage": 2 / 3,
        "avg_generation_secs": 1.0, "total_generation_secs": 2.0,
        "avg_context_length": native_bytes / 2, "retrieval": None,
    }  # fmt: skip
    # lasagna's option extraction, beside: "(a) Vitamin A" picks a
    extracted = report["lasagna"]["setups"]["qwen-kag"]["overall"]["option_extraction"]
    assert (extracted["correct"], extracted["incorrect"], extracted["accuracy"]) == (3, 0, 1.0)
    assert report["lasagna"]["damaged"] == []


def test_kags_text_layout() -> None:
    result = stats("-d", str(KAG / "datasets.json"), "-r", str(KAG / "results"))
    assert result.exit_code == 0, result.output
    # SETUP padded to the longest name (11), then the columns at kag's widths.
    assert result.stdout.splitlines()[:11] == [
        "Datasets: 2 | Scorable questions: 3 | Skipped files: 2",
        "",
        "SETUP           ACC%    PREC%    COVER%     OK  WRONG   ERR  TOT    GEN(s)     CTX_LEN"
        "    RET(s)  VERTICE  RELATION  PROPERTY",
        "qwen-kag       66.67    66.67    100.00      2      1     0    3     1.733     195.333"
        "     0.200    12.00     18.00     41.00",
        "  └ mcq-form    66.67    66.67    100.00      2      1     0    3     1.733     195.333"
        "     0.200    12.00     18.00     41.00",
        "qwen-native    33.33    50.00     66.67      1      1     1    3     1.000     138.500",
        "  └ mcq-form    33.33    50.00     66.67      1      1     1    3     1.000     138.500",
        "",
        "ACC% = correct / scored, PREC% = correct / committed, COVER% = committed / scored",
        "GEN(s)/RET(s) = mean generation/retrieval time per question, in seconds",
        "CTX_LEN = average context length",
    ]
    assert "lasagna's own figures, beside kag's" in result.stdout


def test_kags_flags_short_and_long_and_results_defaults_to_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(KAG / "results", tmp_path / "results")
    monkeypatch.chdir(tmp_path / "results")
    here = stats("-d", str(KAG / "datasets.json"), "--format", "json")
    assert here.exit_code == 0, here.output
    long = stats("--datasets", str(KAG / "datasets.json"), "--results", ".", "--prefix", "",
                 "--format", "json")  # fmt: skip
    assert json.loads(here.stdout)["setups"] == json.loads(long.stdout)["setups"]
    # a prefix names another run: nothing of it here
    prefixed = stats("-d", str(KAG / "datasets.json"), "--prefix", "run1-")
    assert prefixed.exit_code == 1 and "with prefix 'run1-'" in prefixed.stderr


def test_a_truncated_result_file_fails_after_the_report_naming_it(tmp_path: Path) -> None:
    shutil.copytree(KAG / "results", tmp_path / "results")
    damaged = tmp_path / "results" / "mcq-form" / "2" / "qwen-native.json"
    damaged.write_bytes(damaged.read_bytes()[:120])  # a full disk cut it
    result = stats("-d", str(KAG / "datasets.json"), "-r", str(tmp_path / "results"))
    assert result.exit_code == 1
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error: {damaged} is truncated")
    assert "left out of every figure above" in line and "--continue" in line
    native = next(x for x in result.stdout.splitlines() if x.startswith("qwen-native"))
    assert native.split()[4:8] == ["1", "0", "1", "2"]  # OK WRONG ERR TOT: the file is out


def test_a_run_folder_with_a_truncated_task_file_is_not_clean(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeLLMServer(reply="Not mentioned") as server:
        env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.base_url,
               "LASAGNA_CACHE_DIR": str(tmp_path / "cache")}  # fmt: skip
        args = ["benchmark", "run", str(EXAMPLES / "pasta.jsonl"), "--generator", "openai/gen",
                "-o", str(out)]  # fmt: skip
        ran = CliRunner().invoke(app, args, env=env)
        assert ran.exit_code == 0, ran.output
    clean = stats("-r", str(out))
    assert clean.exit_code == 0, clean.output
    task = sorted((out / "tasks").glob("*/*/*.json"))[3]
    task.write_bytes(task.read_bytes()[:-40])
    result = stats("-r", str(out))
    assert result.exit_code == 1
    (line,) = result.stderr.splitlines()
    assert f"{task} is truncated" in line and "--resume" in line
    assert "Datasets:" in result.stdout  # the report of the rest, then the failure
