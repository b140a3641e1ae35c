"""`lasagna benchmark stats`: the numbers on a results folder written by hand, and `find`.

kag's figures (graded by the whole trimmed answer) are the report's; lasagna's option
extraction, EM/F1 and judge grades sit under "lasagna". kag's own figures on a tree kag
wrote: tests/cli/test_stats_kag.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_judge.testing import FakeLLMServer

MCQ = {"type": "MCQ", "options": {"a": "one", "b": "two", "c": "three"}}
DATASETS: dict[str, Any] = {
    "quiz": {
        "m1": {"input": "1+1?", "output": {**MCQ, "answer": "b"}},
        "m2": {"input": "2+1?", "output": {**MCQ, "answer": "c"}},
        "m3": {"input": "0+1?", "output": {**MCQ, "answer": "a"}},
        "m4": {"input": "1+2?", "output": {**MCQ, "answer": "c"}},
        "m5": {"input": "no key", "output": MCQ},  # not graded: no answer
    },
    "facts": {
        "f1": {"input": "Capital of France?", "output": "Paris"},
        "f2": {"input": "Author of Hamlet?", "output": ["Shakespeare", "William Shakespeare"]},
        "f3": {"input": "Say hi."},  # free-form without reference: not scored
    },
}


def ok(text: str, setup_datasets: list[str] | None, gen: float, context: int,
       retrieval: float | None = None) -> dict[str, Any]:  # fmt: skip
    return {
        "ok": {
            "result": text,
            "stats": {
                "prompt": "p" * context,  # kag's CTX_LEN: the prompt's length
                "retrieval": None,
                "config": {"provider": "fake", "model": "m", "temperature": 0.0},
                "time": {"secs": int(gen), "nanos": round((gen % 1) * 1e9)},
                "generation_time_s": gen,
                "context_length": context,
                "retrieval_time_s": retrieval,
                "setup": {"datasets": setup_datasets},
            },
        }
    }


# setup -> (dataset, question) -> record; a missing pair is a skipped task.
RESULTS: dict[str, dict[tuple[str, str], Any]] = {
    "good": {
        ("quiz", "m1"): ok("b", None, 1.0, 100),  # correct
        ("quiz", "m2"): ok("(c) three", None, 2.0, 100),  # kag: wrong; extraction: correct
        ("quiz", "m3"): ok("I do not know.", None, 3.0, 100),  # kag: wrong; unanswered
        ("quiz", "m4"): {"error": "openai/x: HTTP 500"},  # error
        ("quiz", "m5"): ok("a", None, 4.0, 100),  # no answer key: a skipped file
        ("facts", "f1"): ok("Paris", None, 1.0, 50),
        ("facts", "f2"): ok("It was Shakespeare", None, 1.0, 50),
        ("facts", "f3"): ok("hi", None, 1.0, 50),
    },
    "bad": {
        ("quiz", "m1"): ok(" A ", ["quiz"], 0.5, 200, 0.01),  # incorrect
        ("quiz", "m3"): ok("a) one", ["quiz"], 0.5, 200, 0.03),  # kag: wrong; extraction: right
        ("quiz", "m4"): ok("The answer is (b) two", ["quiz"], 0.5, 200, 0.02),  # incorrect
        ("quiz", "m5"): ok("c", ["quiz"], 0.5, 200, 0.02),
        # m2 missing; facts are not in its datasets, so nothing is missing there
    },
    "free": {
        ("facts", "f1"): ok("paris.", ["facts"], 2.0, 10),
        ("facts", "f2"): ok("Marlowe", ["facts"], 2.0, 10),
    },
}


def write_results(root: Path, prefix: str = "") -> None:
    for setup, records in RESULTS.items():
        for (dataset, question), record in records.items():
            path = root / dataset / question / f"{prefix}{setup}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(record))


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "datasets.json").write_text(json.dumps(DATASETS))
    write_results(tmp_path / "results")
    return tmp_path


def stats(folder: Path, *extra: str) -> Any:
    return CliRunner().invoke(
        app,
        ["benchmark", "stats", "--datasets", str(folder / "datasets.json"), "--results",
         str(folder / "results"), *extra],
        env={"LASAGNA_CACHE_DIR": str(folder / "cache")},  # the judge's cache stays here
    )  # fmt: skip


def as_json(folder: Path, *extra: str) -> dict[str, Any]:
    result = stats(folder, "--format", "json", *extra)
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def kag_rows(report: dict[str, Any]) -> dict[str, Any]:
    return {row["setup"]: row for row in report["setups"]}


def extras(report: dict[str, Any]) -> dict[str, Any]:
    setups: dict[str, Any] = report["lasagna"]["setups"]
    return setups


def test_kag_grades_the_whole_trimmed_answer_and_counts_files(folder: Path) -> None:
    report = as_json(folder)
    assert (report["datasets"], report["scorable_questions"]) == (2, 4)
    assert report["skipped_files"] == 2  # m5 has no answer: its two files
    rows = kag_rows(report)
    assert list(rows) == ["good", "bad"]  # free answered no graded MCQ: not in kag's table
    good = rows["good"]["overall"]
    assert {k: good[k] for k in ("total", "correct", "incorrect", "errors", "parsed")} == {
        "total": 4, "correct": 1, "incorrect": 2, "errors": 1, "parsed": 3,
    }  # fmt: skip
    assert good["accuracy"] == 0.25 and good["precision"] == pytest.approx(1 / 3)
    assert good["coverage"] == 0.75
    # GEN and CTX_LEN over the graded ok files, from kag's `time` and `prompt`
    assert good["avg_generation_secs"] == 2.0 and good["total_generation_secs"] == 6.0
    assert good["avg_context_length"] == 100.0 and good["retrieval"] is None
    bad = rows["bad"]["overall"]
    assert (bad["total"], bad["correct"], bad["incorrect"], bad["errors"]) == (3, 0, 3, 0)
    assert (bad["accuracy"], bad["precision"], bad["coverage"]) == (0.0, 0.0, 1.0)
    assert list(rows["bad"]["per_dataset"]) == ["quiz"]


def test_lasagnas_option_extraction_sits_beside_kags_figures(folder: Path) -> None:
    found = extras(as_json(folder))
    good = found["good"]["overall"]["option_extraction"]
    assert good == {
        "total": 4, "correct": 2, "incorrect": 0, "unanswered": 1, "errors": 1,
        "accuracy": 0.5, "precision": 1.0, "coverage": 0.5,
    }  # fmt: skip
    bad = found["bad"]["overall"]
    assert (bad["option_extraction"]["correct"], bad["option_extraction"]["incorrect"]) == (1, 2)
    assert bad["missing"] == 1  # m2 of quiz, which its datasets list covers
    assert set(found["bad"]["per_dataset"]) == {"quiz"}
    assert found["free"]["overall"]["option_extraction"]["accuracy"] is None


def test_free_form_em_f1_and_means(folder: Path) -> None:
    found = extras(as_json(folder))
    free = found["free"]["overall"]["free_form"]
    assert free == {"scored": 2, "errors": 0, "em": 0.5, "f1": 0.5}
    good = found["good"]["per_dataset"]["facts"]["free_form"]
    # "It was Shakespeare" vs "Shakespeare": F1 = 2 * (1/3 * 1) / (1/3 + 1) = 0.5
    assert good["scored"] == 2 and good["em"] == 0.5 and good["f1"] == pytest.approx(0.75)
    assert found["good"]["overall"]["mean_retrieval_time_s"] is None
    assert found["bad"]["overall"]["mean_retrieval_time_s"] == pytest.approx(0.02)


def test_a_result_echoing_the_options_is_unanswered_not_option_a(tmp_path: Path) -> None:
    # The grading of issue 6: a trimmed, case-insensitive id, or "(b)" / "b) ..." first; a
    # reply that only repeats the options the prompt listed picks none of them.
    questions = {f"m{i}": {"input": "1+1?", "output": {**MCQ, "answer": "b"}} for i in range(6)}
    (tmp_path / "datasets.json").write_text(json.dumps({"quiz": questions}))
    replies = [
        "a: one\nb: two\nc: three",
        "(a) one (b) two (c) three",
        "a: one\nb: two\nc: three\nAnswer: b",
        " B ",
        "(b)",
        "b) two, not three",
    ]
    for question, reply in zip(questions, replies, strict=True):
        path = tmp_path / "results" / "quiz" / question / "echo.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(ok(reply, None, 1.0, 10)))
    report = as_json(tmp_path)
    mcq = extras(report)["echo"]["overall"]["option_extraction"]
    assert (mcq["correct"], mcq["incorrect"], mcq["unanswered"]) == (4, 0, 2)
    kag = report["setups"][0]["overall"]  # kag: only the bare " B " is the answer
    assert (kag["correct"], kag["incorrect"]) == (1, 5)


def test_setups_are_ranked_by_acc_then_name_and_text_is_kags_table(folder: Path) -> None:
    result = stats(folder)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[:2] == ["Datasets: 2 | Scorable questions: 4 | Skipped files: 2", ""]
    assert lines[2].split() == [
        "SETUP", "ACC%", "PREC%", "COVER%", "OK", "WRONG", "ERR", "TOT", "GEN(s)", "CTX_LEN",
    ]  # fmt: skip
    assert lines[3].split() == [
        "good", "25.00", "33.33", "75.00", "1", "2", "1", "4", "2.000", "100.000",
    ]  # fmt: skip
    assert lines[4].split()[:3] == ["└", "quiz", "25.00"]
    assert lines[5].split()[:2] == ["bad", "0.00"]
    assert "lasagna's own figures, beside kag's (not part of kag's report):" in lines
    assert any(line.split()[:2] == ["free", "-"] for line in lines)


def test_ties_in_acc_are_ranked_by_name(folder: Path) -> None:
    for question in ("m1", "m2", "m3", "m4", "m5"):
        source = folder / "results" / "quiz" / question / "good.json"
        (source.parent / "aaa.json").write_text(source.read_text())
    assert [r["setup"] for r in as_json(folder)["setups"]][:2] == ["aaa", "good"]
    assert list(extras(as_json(folder)))[:3] == ["aaa", "good", "bad"]


def test_prefix_selects_one_run(folder: Path) -> None:
    write_results(folder / "results", prefix="run2-")
    report = as_json(folder, "--prefix", "run2-")
    assert sorted(extras(report)) == ["bad", "free", "good"]
    assert report["lasagna"]["prefix"] == "run2-"


def test_judge_grades_free_form_answers_with_counts(folder: Path) -> None:
    def grade(request: dict[str, Any]) -> str:
        text = json.dumps(request)
        if "Marlowe" in text:
            return "not JSON and no score"
        score = 4 if "Paris" in text or "paris" in text else 0
        return json.dumps({"reasoning": "checked", "score": score})

    with FakeLLMServer(reply=grade) as server:
        report = as_json(
            folder, "--judge", "openai/judge", "--base-url", server.base_url, "--rubric",
            "binary",
        )  # fmt: skip
        calls = server.calls
        again = as_json(folder, "--judge", "openai/judge", "--base-url", server.base_url)
        assert server.calls == calls  # the judge's answers come from its cache
    assert report == again
    setups = extras(report)
    free = setups["free"]["overall"]["judge"]
    assert free["scored"] == 1 and free["mean_grade"] == 4 and free["unparsed"] == 1
    good = setups["good"]["overall"]["judge"]
    assert good["scored"] == 2 and good["mean_grade"] == 2 and good["errors"] == 0
    assert report["lasagna"]["judge"] == {"model": "openai/judge", "rubric": "binary"}


def test_max_chars_keeps_long_answers_from_the_judge_and_nothing_graded_exits_1(
    folder: Path,
) -> None:
    with FakeLLMServer(reply=json.dumps({"reasoning": "ok", "score": 4})) as server:
        judge = ("--judge", "openai/judge", "--base-url", server.base_url)
        result = stats(folder, "--format", "json", *judge, "--max-chars", "5")
        assert server.calls == 0  # every question is longer than 5 characters: none sent
    # The report is printed, then one line says no answer got a grade (exit 1).
    assert result.exit_code == 1, result.output
    assert "judge" in json.loads(result.stdout)["lasagna"]
    assert result.stderr.startswith("error: none of the ")
    assert "over --max-chars 5" in result.stderr
    assert "run the same stats command again" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    with FakeLLMServer(reply="no score here") as server:
        unparsed = stats(folder, *judge[:2], "--base-url", server.base_url)
    assert unparsed.exit_code == 1 and "unparsed" in unparsed.stderr


def test_find_lists_matching_results_as_kag_counts_them(folder: Path) -> None:
    root = str(folder / "results")
    result = CliRunner().invoke(app, ["benchmark", "stats", "find", "-i", "^paris", "-r", root])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == ["facts/f1/free: paris.", "facts/f1/good: Paris"]
    # kag counts every <prefix>*.json file it inspects, errors included
    assert "2 occurrence(s) out of 14 result file(s) matched the pattern." in result.stderr
    # -r and --format before `find`, as kag's global flags
    as_json = CliRunner().invoke(
        app, ["benchmark", "stats", "-r", root, "--format", "json", "find", "(?i)^paris"]
    )
    assert as_json.exit_code == 0, as_json.output
    assert json.loads(as_json.stdout) == {
        "matches": 2, "total": 14,
        "paths": [f"{root}/facts/f1/free.json", f"{root}/facts/f1/good.json"],
    }  # fmt: skip
    # the response is trimmed first: " A " matches ^A$
    trimmed = CliRunner().invoke(app, ["benchmark", "stats", "find", "^A$", "-r", root])
    assert trimmed.stdout.splitlines() == ["quiz/m1/bad: A"]
    none = CliRunner().invoke(app, ["benchmark", "stats", "find", "zzz", "-r", root])
    assert none.exit_code == 0 and "No result matched the pattern." in none.stderr
    bad = CliRunner().invoke(app, ["benchmark", "stats", "find", "(", "--results", str(folder)])
    assert bad.exit_code == 2 and "not a valid regular expression" in bad.output


def test_a_judge_without_a_key_is_named_by_its_flag(folder: Path) -> None:
    result = CliRunner().invoke(
        app,
        ["benchmark", "stats", "--datasets", str(folder / "datasets.json"), "--results",
         str(folder / "results"), "--judge", "openai/gpt-4o-mini"],
        env={"OPENAI_API_KEY": "", "OPENAI_BASE_URL": "", "MODEL_NAME": ""},
    )  # fmt: skip
    assert result.exit_code == 2
    assert result.stderr.startswith(
        "error: --judge openai/gpt-4o-mini needs OPENAI_API_KEY, or a server: OPENAI_BASE_URL "
        "or --base-url"
    )
    assert "use --judge local/smollm2" in result.stderr and "--model" not in result.stderr


def test_usage_errors_are_one_line(folder: Path) -> None:
    missing = CliRunner().invoke(app, ["benchmark", "stats"])
    assert missing.exit_code == 2 and "stats needs --datasets" in missing.output
    wrong = stats(folder, "--format", "xml")
    assert wrong.exit_code == 2 and "--format: expected text or json" in wrong.output
    empty = CliRunner().invoke(
        app, ["benchmark", "stats", "--datasets", str(folder / "datasets.json"), "--results",
              str(folder)],
    )  # fmt: skip
    assert empty.exit_code == 1 and "no result of" in empty.output


OUTCOMES = ("correct", "incorrect", "unanswered", "error", "missing")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(OUTCOMES), min_size=1, max_size=30))
def test_mcq_ratios_are_bounded_and_add_up(outcomes: list[str]) -> None:
    from lasagna_cli.engine._data import Question
    from lasagna_cli.engine.kag import Result, summarize

    options = {"a": "x", "b": "y"}
    questions = {
        f"q{i}": Question(
            f"q{i}", "?", options=options, correct_option="a", metadata={"dataset": "d"}
        )
        for i in range(len(outcomes))
    }
    text = {"correct": "a", "incorrect": "(b) y", "unanswered": "no idea"}
    results = [
        Result(
            questions[f"q{i}"],
            "s",
            Path(f"q{i}"),
            text.get(o),
            "boom" if o == "error" else None,
            {},
        )
        for i, o in enumerate(outcomes)
        if o != "missing"
    ]
    if not results:
        return
    report = summarize({"d": questions}, results)
    kag = report.as_json()["setups"][0]["overall"]
    mcq = report.as_json()["lasagna"]["setups"]["s"]["overall"]["option_extraction"]
    count = outcomes.count
    answered = len(outcomes) - count("missing")
    # kag: TOT counts the files; a reply that is not the bare id is wrong
    assert kag["total"] == answered and kag["errors"] == count("error")
    assert kag["correct"] == count("correct")
    assert kag["incorrect"] == count("incorrect") + count("unanswered")
    assert 0 <= kag["accuracy"] <= kag["coverage"] <= 1
    assert mcq["total"] == answered
    assert (mcq["correct"], mcq["incorrect"], mcq["unanswered"]) == (
        count("correct"), count("incorrect"), count("unanswered"),
    )  # fmt: skip
    assert report.as_json()["lasagna"]["setups"]["s"]["overall"]["missing"] == count("missing")
    assert 0 <= mcq["accuracy"] <= mcq["coverage"] <= 1
    if mcq["precision"] is not None:
        assert mcq["accuracy"] <= mcq["precision"] <= 1
    else:
        assert count("correct") + count("incorrect") == 0


def test_ctrl_c_while_grading_says_the_grades_are_kept(folder: Path, spawn: Any) -> None:
    reply = json.dumps({"reasoning": "checked", "score": 4})
    with FakeLLMServer(reply=reply, latency=2.0) as server:
        command = [
            sys.executable, "-c", "from lasagna_cli._app import main; main()",
            "benchmark", "stats", "--datasets", str(folder / "datasets.json"),
            "--results", str(folder / "results"), "--judge", "openai/judge",
            "--base-url", server.base_url, "--concurrency", "1",
        ]  # fmt: skip
        env = {**os.environ, "LASAGNA_CACHE_DIR": str(folder / "cache")}
        with spawn(command, env=env, stderr=subprocess.PIPE) as child:
            deadline = time.monotonic() + 30
            while not server.requests and time.monotonic() < deadline:
                time.sleep(0.02)
            child.send_signal(signal.SIGINT)
            _, stderr = child.communicate(timeout=30)
    assert child.returncode == 130, stderr
    assert "interrupted: the grades made so far are cached" in stderr
    assert "Traceback" not in stderr
