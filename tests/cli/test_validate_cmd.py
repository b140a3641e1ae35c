"""`lasagna benchmark validate-data`: counts, name, tracks and the command to run it; every
problem listed; exit codes. Also a file written by `lasagna benchmark synthesize`, validated
and run."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_judge.testing import FakeLLMServer

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "data"
SHARED = ROOT.parent / "shared" / "data" / "datasets"
LASAGNA = Path(sys.executable).with_name("lasagna")
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data is not present")


def validate(*args: str) -> Any:
    return CliRunner().invoke(app, ["benchmark", "validate-data", *args])


def test_a_valid_jsonl_file() -> None:
    result = validate(str(EXAMPLES / "pasta.jsonl"))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[:9] == [
        "pasta.jsonl: valid JSONL data",
        "  Questions:      14",
        "  With answers:   12",
        "  With contexts:  14",
        "  Unanswerable:   2",
        "  Documents:      10 (every row's passages pooled; results labelled pooled_gold)",
        "  Name:           local/pasta@b16e975f7950",
        "  Revision:       sha256:b16e975f7950a3d032dd88a4e5640e063ccc8bc2c4e8ab5f0a80a29ed828e68b",
        "  Tracks:",
    ]
    assert lines[9].startswith("    retrieval:    yes, 12 questions with relevant passages")
    assert lines[10].startswith(
        "    generation:   yes, 12 questions with answers and 2 unanswerable"
    )
    assert lines[11].startswith("    closed-book:  yes,")
    path = str(EXAMPLES / "pasta.jsonl")
    assert lines[12] == (
        f"Run it:  lasagna benchmark run {path} --profile speed   (BM25 retrieval, no key)"
    )
    assert lines[13] == (
        f"With a model:  lasagna benchmark run {path} --tracks retrieval,generation "
        "--generator local/smollm2"
    )


def test_a_beir_folder_and_a_csv() -> None:
    result = validate(str(EXAMPLES / "pasta-beir"))
    assert result.exit_code == 0
    assert "  Questions:      7 with a relevant document; splits: test (7 judged)" in result.stdout
    assert "    generation:   no, a BEIR folder has relevance judgments but no answers" in (
        result.stdout
    )
    assert "--generator" not in result.stdout
    result = validate(str(EXAMPLES / "pasta.csv"))
    assert result.exit_code == 0 and "local/pasta@bfc162ef3687" in result.stdout


def test_duplicates_placeholders_and_questions_too_short_are_warned_of_not_refused(
    tmp_path: Path,
) -> None:
    """Warnings with counts and the first row ids; the data still runs (exit 0)."""
    questions = {
        "q1": "What kind of pasta is layered to make lasagna?",
        "q2": "Which sauce goes into lasagna?",
        "q3": "WHAT KIND OF PASTA IS LAYERED TO MAKE A LASAGNA",  # = q1
        "q4": "What kind of pasta was layered to make lasagna?",  # ~ q1
        "q5": "A question and its short reference answer.",  # the schema's description
        "q6": "{question}",
        "q7": "Why?",
        "q8": "which sauce goes into lasagna?!",  # = q2
    }
    questions |= {f"c{i}": "Which sauce goes into lasagna" for i in range(6)}  # 6 more = q2
    data = tmp_path / "qa.jsonl"
    rows = [{"id": i, "question": q, "answer": "sheets"} for i, q in questions.items()]
    rows.append({"id": "q9", "question": "Which cheese tops a lasagna?", "answer": "a"})
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = validate(str(data))
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stdout.splitlines() if line.startswith("  Warning:")]
    assert warnings == [
        "  Warning:        8 duplicate questions (the same text once case, punctuation and "
        "articles are set aside; run scores the question once, as its first row): "
        '"q3" = "q1", "q8" = "q2", "c0" = "q2", "c1" = "q2", "c2" = "q2", ...',
        "  Warning:        1 near-duplicate question (the same words in the same order once "
        'auxiliaries and of/in/on/at/for are set aside; run scores each): "q4" ~ "q1"',
        "  Warning:        3 placeholder rows (a question or answer that is empty, a template's "
        'filler or a slot, or echoes a prompt): "q5", "q6", "q9"',
        "  Warning:        1 question too short to mean anything (fewer than 3 words and 10 "
        'letters or digits): "q7"',
    ]
    assert "Run it:  lasagna benchmark run" in result.stdout


def test_every_problem_is_listed_up_to_20_and_exit_1(tmp_path: Path) -> None:
    data = tmp_path / "qa.jsonl"
    data.write_text("".join('{"question": "Q", "answr": "A"}\n' for _ in range(25)), "utf-8")
    result = validate(str(data))
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0] == "qa.jsonl: 25 problems; fix them and try again:"
    assert lines[1] == (
        '  qa.jsonl row 1: unknown field "answr" (did you mean "answer"?); put fields of your '
        'own under "metadata"'
    )
    assert len(lines) == 22 and lines[-1] == "  ... and 5 more"


def test_data_that_supports_no_track_exits_1(tmp_path: Path) -> None:
    data = tmp_path / "qa.jsonl"
    data.write_text('{"question": "Q?"}\n', encoding="utf-8")
    result = validate(str(data))
    assert result.exit_code == 1
    assert "Nothing can be measured on this data" in result.stdout
    assert 'no row has an "answer" (fix: add an "answer" to the rows)' in result.stdout


def test_a_sweep_file_is_pointed_to_run() -> None:
    result = validate(str(ROOT / "examples" / "data" / "sweep.yaml"))
    assert result.exit_code == 2
    assert "this is a sweep file; validate each `path:` it lists" in result.stderr
    assert "lasagna benchmark run " in result.stderr


def test_a_missing_path_exits_2() -> None:
    result = validate("no/such/file.jsonl")
    assert result.exit_code == 2 and "no such file or folder" in result.output


@needs_shared
def test_the_real_sets() -> None:
    for name, expected in (
        ("msmarco", "local/msmarco@19044231c5f4"),
        ("dbpedia", "local/dbpedia@6031441ea236"),
    ):
        result = validate(str(SHARED / "beir" / name))
        assert result.exit_code == 0, result.output
        assert f"  Name:           {expected}" in result.stdout
    arcd = validate(str(SHARED / "beir" / "arcd"))
    assert arcd.exit_code == 1
    assert "652 judged query ids are not in queries.jsonl" in arcd.stdout
    arcd = validate(str(SHARED / "beir" / "arcd"), "--drop-unknown-judgments")
    assert arcd.exit_code == 0
    assert "dropped 653 judgments" in arcd.stdout and "--drop-unknown-judgments" in arcd.stdout
    squad = validate(str(SHARED / "squad" / "haystack_small.json"))
    assert squad.exit_code == 0
    assert "  Questions:      626" in squad.stdout and "  Unanswerable:   333" in squad.stdout


# ------------------------------------------------------------- a synthesized question set


def synth_reply(request: dict[str, Any]) -> str:
    """Plays both of synthesize's calls: writing a question, then checking it."""
    user = request["messages"][-1]["content"]
    if "Write one" in user:
        doc = re.search(r"from (\S+?):", user)
        question = f"What does {doc.group(1) if doc else 'it'} say about the lighthouse?"
        if "on the subject" in user:
            return json.dumps({"question": question})
        return json.dumps({"question": question, "answer": "a fact"})
    if "Reference answer:" in user:
        return json.dumps({"reason": "stated", "supported": "yes"})
    return json.dumps({"reason": "not stated", "answered": "no"})


def test_a_synthesized_file_validates_and_runs(tmp_path: Path) -> None:
    out = tmp_path / "synthetic_qa.jsonl"
    env = dict(os.environ, OPENAI_API_KEY="test", LASAGNA_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("MODEL_NAME", None)
    with FakeLLMServer(reply=synth_reply) as server:
        made = subprocess.run(
            [
                str(LASAGNA),
                "benchmark",
                "synthesize",
                str(ROOT / "examples" / "docs"),
                "--n",
                "8",
                "--seed",
                "3",
                "--out",
                str(out),
                "--model",
                "openai/fake",
                "--base-url",
                server.base_url,
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
    assert made.returncode == 0, made.stderr
    checked = validate(str(out))
    assert checked.exit_code == 0, checked.output
    assert "valid JSONL data" in checked.stdout
    assert "    retrieval:    yes" in checked.stdout and "    generation:   yes" in checked.stdout
    result = CliRunner().invoke(
        app, ["benchmark", "run", str(out), "--profile", "speed", "-o", str(tmp_path / "run")]
    )
    assert result.exit_code == 0, result.output
    (found,) = json.loads((tmp_path / "run" / "results.json").read_text())["results"]
    # The rows name the folder they were written from: it is the corpus searched.
    assert found["dataset"]["corpus_provenance"] == "documents"
    assert found["dataset"]["corpus"]["path"] == str((ROOT / "examples" / "docs").resolve())
    assert found["counts"]["failed"] == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    answerable = sum(1 for r in rows if not r["metadata"]["unanswerable"])
    assert found["metrics"]["retrieval"]["ndcg@10"]["count"] == answerable


def test_a_count_of_one_takes_the_singular() -> None:
    """ "1 file skipped", never "1 files skipped" (examples/docs skips its one .svg)."""
    docs = ROOT / "examples" / "docs"
    result = validate(str(EXAMPLES / "pasta.jsonl"), "--corpus", str(docs))
    assert result.exit_code == 0, result.output
    assert f"  Documents:      4 in {docs} (--corpus; 1 file skipped); results labelled " in (
        result.stdout
    )
