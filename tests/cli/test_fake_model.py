"""The newcomer's keyless path: every model-backed command runs on `fake/scripted` in
seconds, with no key, no server and no lasagna variable, and every view of its figures
says they are scripted.

Each command runs as a user runs it: the installed `lasagna` in a process of its own, in
an environment holding only PATH and a home of the test's own (the default cache lands
there), so nothing of the test's fake servers, keys or variables can help it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from lasagna_synth import question_issues

ROOT = Path(__file__).resolve().parents[2]
PASTA = ROOT / "examples" / "data" / "pasta.jsonl"
LASAGNA = Path(sys.executable).parent / ("lasagna.exe" if os.name == "nt" else "lasagna")
SECONDS = 30.0
"""What one command may take: seconds, where the smallest real model in-process took
11 and 19 minutes to synthesize 20 and 60 questions."""
SCRIPTED = "scripted: fake/scripted answers with canned replies"


def lasagna(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`lasagna ARGS` in `tmp_path`, keyless: exit 0 within `SECONDS`, or the output."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "COLUMNS": "120",
    }
    start = time.monotonic()
    done = subprocess.run(
        [str(LASAGNA), *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    took = time.monotonic() - start
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"lasagna {' '.join(args)} exited {done.returncode}:\n{output}"
    assert took < SECONDS, f"lasagna {' '.join(args)} took {took:.1f} s"
    return done


def results(folder: Path) -> dict[str, Any]:
    found: dict[str, Any] = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    return found


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_judge_grade_with_no_key(tmp_path: Path) -> None:
    out = tmp_path / "graded.jsonl"
    done = lasagna(
        tmp_path, "judge", "grade", str(ROOT / "examples/judge/answers.jsonl"),
        "--model", "fake/scripted", "--out", str(out),
    )  # fmt: skip
    lines = done.stdout.splitlines()
    assert lines[0].startswith("graded 8 answers with fake/scripted")
    assert lines[1].startswith(SCRIPTED) and "these figures mean nothing" in lines[1]
    assert "cost: $0.0000 this run" in done.stdout  # priced at 0, never "no price"
    graded = rows(out)
    assert {g["model"] for g in graded} == {"fake/scripted"}
    assert {g["status"] for g in graded} == {"ok"}
    schema = [g for g in graded if g["path"] == "schema"]
    assert len(schema) >= 6 and all(len(g["reasoning"].split()) >= 8 for g in schema)
    # a judge, not a constant: the right answer passes, the wrong one fails
    by_id = {g["id"]: g for g in graded}
    assert by_id["q01"]["score"] == 4 and by_id["q02"]["score"] == 0


def test_run_with_a_generator_a_judge_and_diagnostics_then_its_report(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = lasagna(
        tmp_path, "benchmark", "run", str(PASTA), "--generator", "fake/scripted",
        "--judge", "fake/scripted", "--diagnostics", "-o", str(out),
    )  # fmt: skip
    assert SCRIPTED in done.stdout
    result = results(out)["results"][0]
    assert result["setup"]["generator"] == "fake/scripted"
    assert result["held_fixed"]["judge"]["model"] == "fake/scripted"
    generation = result["metrics"]["generation"]
    assert generation["judge_status"] == {"error": 0, "ok": 14, "unparsed": 0}
    assert 0 < generation["f1"]["mean"] < 1  # answers that quote the passages, not the key
    lines = PASTA.read_text(encoding="utf-8").splitlines()
    texts = " ".join(" ".join(json.loads(line)["contexts"]) for line in lines)
    for entry in result["per_query"]:
        answer = entry["generation"]["prediction"]
        assert answer == "Not mentioned" or answer.removesuffix(" ...") in texts, answer
    calls = result["metrics"]["diagnostics"]["calls"]
    assert calls["made"] > 14 and calls["error"] == calls["unparsed"] == 0
    report = tmp_path / "report.html"
    lasagna(tmp_path, "benchmark", "report", str(out), "-o", str(report))
    page = report.read_text(encoding="utf-8")
    assert f'<p id="scripted" role="note">{SCRIPTED}' in page


def test_run_with_batch_goes_through_the_batch_api(tmp_path: Path) -> None:
    out = tmp_path / "batch"
    done = lasagna(
        tmp_path, "benchmark", "run", str(PASTA), "--generator", "fake/scripted",
        "--judge", "fake/scripted", "--batch", "-o", str(out),
    )  # fmt: skip
    output = done.stdout + done.stderr
    assert output.count("14 through OpenAI's Batch API") == 2  # the answers, then the grades
    assert "batch price: $0.0000" in output
    assert SCRIPTED in done.stdout
    generation = results(out)["results"][0]["metrics"]["generation"]
    assert generation["judge_status"]["ok"] == 14


def test_synthesize_keeps_every_scripted_question(tmp_path: Path) -> None:
    out = tmp_path / "questions.jsonl"
    done = lasagna(
        tmp_path, "benchmark", "synthesize", str(ROOT / "examples/docs"), "--n", "10",
        "--model", "fake/scripted", "-o", str(out),
    )  # fmt: skip
    assert SCRIPTED in done.stdout
    assert "Dropped 0:" in done.stdout
    written = rows(out)
    assert len(written) == 10
    assert {r["metadata"]["model"] for r in written} == {"fake/scripted"}
    answers = {r["id"]: [r["answer"]] if r.get("answer") else [] for r in written}
    found = question_issues((r["id"], r["question"], answers[r["id"]]) for r in written)
    assert not found, found
    types = {r["metadata"]["question_type"] for r in written}
    assert types == {"factoid", "multihop", "unanswerable"}
    for row in written:
        assert row["question"].endswith("?") and len(row["question"].split()) >= 4
        if row["metadata"]["question_type"] == "factoid":  # its answer is the passage's words
            assert row["answer"] in " ".join(" ".join(c.split()) for c in row["contexts"])


@pytest.mark.parametrize("model", ["openai/gpt-4o-mini", "anthropic/claude-3-5-haiku-latest"])
def test_a_model_that_needs_a_key_points_to_the_keyless_ones(tmp_path: Path, model: str) -> None:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)}
    done = subprocess.run(
        [str(LASAGNA), "judge", "grade", str(ROOT / "examples/judge/answers.jsonl"),
         "--model", model],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert "--model fake/scripted" in done.stderr and "--model local/smollm2" in done.stderr
