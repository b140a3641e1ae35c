"""Every step a user waits for says so: off a terminal one line per step (here with
LASAGNA_STEP_LINES_AFTER=0, so a step this small still gets its line), on a terminal a bar
per step above the main bar, which shows an ETA. The libraries only report (`on_step`)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lasagna_cli._app import app

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "examples" / "data"
FINANCEBENCH = ROOT / "tests" / "synth" / "fixtures" / "financebench"


def cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


@pytest.fixture(autouse=True)
def every_step_has_its_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LASAGNA_STEP_LINES_AFTER", "0")
    monkeypatch.setenv("LASAGNA_CACHE_DIR", str(tmp_path / "cache"))


def test_run_says_it_reads_the_data_and_builds_the_bm25_index(tmp_path: Path) -> None:
    beir = DATA / "pasta-beir"
    result = cli("benchmark", "run", str(beir), "-o", str(tmp_path / "run"))
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    reading = lines.index(f"reading {beir}")
    indexing = next(i for i, line in enumerate(lines) if line.startswith("indexing "))
    assert reading < indexing
    assert lines[indexing].endswith(": 14 documents (BM25)")
    assert lines[indexing].startswith("indexing local/pasta-beir@")


def test_synthesize_says_it_reads_cuts_and_plans(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lasagna_judge.testing import FakeLLMServer

    monkeypatch.setenv("OPENAI_API_KEY", "test")
    docs = ROOT / "examples" / "docs"
    with FakeLLMServer(reply="not JSON") as server:  # the run: every question dropped
        for args in (["--dry-run"], ["--model", "openai/x", "--base-url", server.base_url]):
            result = cli("benchmark", "synthesize", str(docs), "--n", "10", *args,
                         "--out", str(tmp_path / "o.jsonl"))  # fmt: skip
            assert result.stderr.splitlines()[:2] == [
                f"reading and cutting the documents of {docs}",
                "planning 10 question(s) over 8 passages",
            ], result.output


def test_the_staged_pipeline_says_it_extracts_pdfs_and_indexes(tmp_path: Path) -> None:
    """FinanceBench's first run: the filings' text is extracted (then kept in the cache),
    the documents cut, the index built; a second run folder reads the text from the cache
    (no PDF line) but still says it indexes."""
    data = tmp_path / "financebench"
    shutil.copytree(FINANCEBENCH, data)
    args = ["benchmark", "run", "financebench", "--data-dir", str(data), "--step", "gen"]
    first = cli(*args, "-o", str(tmp_path / "a"))
    assert first.exit_code == 0, first.output
    lines = first.stderr.splitlines()
    assert lines[:3] == [
        "index: reading and cutting financebench's documents",
        "extracting the text of 1 PDF filing(s)",
        next(line for line in lines if line.startswith("indexing financebench")),
    ], lines
    assert lines[2].endswith(": 1 document (BM25)")  # the one filing: singular
    again = cli(*args, "-o", str(tmp_path / "b"))
    assert again.exit_code == 0, again.output
    assert "extracting the text of 1 PDF filing(s)" in again.stderr  # the step, from the cache
    assert any(line.startswith("indexing financebench") for line in again.stderr.splitlines())


def test_a_quick_step_leaves_no_line_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LASAGNA_STEP_LINES_AFTER")
    result = cli("benchmark", "run", str(DATA / "pasta-beir"), "-o", str(tmp_path / "run"))
    assert result.exit_code == 0
    assert not any(line.startswith(("reading", "indexing ")) for line in result.stderr.splitlines())


def test_a_slow_step_gets_its_line_while_it_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """The line comes from a timer, while the step still holds the thread."""
    import time

    from lasagna_cli.commands._progress import StageProgress

    with StageProgress(enabled=False) as steps:
        steps._after = 0.05
        steps.step("indexing big: 100,000 documents (BM25)", 0, 100_000)
        time.sleep(0.3)  # the build holds the thread; the line is already out
        assert capsys.readouterr().err == "indexing big: 100,000 documents (BM25)\n"
        steps.step("indexing big: 100,000 documents (BM25)", 100_000, 100_000)
        steps.step("quick", 0, 1)
        steps.step("quick", 1, 1)
        time.sleep(0.1)
    assert capsys.readouterr().err == ""  # the quick one ended before its line was due


def test_on_a_terminal_each_step_is_a_bar_above_the_main_bar_with_an_eta(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from lasagna_cli.commands._progress import TaskProgress

    monkeypatch.setenv("COLUMNS", "160")
    with TaskProgress(0, "tasks", enabled=True) as progress:
        progress.step("indexing x: 3 documents (BM25)", 0, 3)
        progress.step("indexing x: 3 documents (BM25)", 3, 3)
        progress.start(2, "tasks")
        progress.advance("done")
        progress.advance("done")
    drawn = capsys.readouterr().err
    assert drawn.index("indexing x: 3 documents (BM25)") < drawn.index("tasks")
    assert "3/3" in drawn and "2/2" in drawn and "eta" in drawn


def test_a_run_off_a_terminal_prints_its_counts_rate_and_eta_as_it_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not only the totals at the end: a line of counts every LASAGNA_PROGRESS_LINES_EVERY
    seconds (0 here: one per task) while a generator answers."""
    from lasagna_judge.testing import FakeLLMServer

    monkeypatch.setenv("LASAGNA_PROGRESS_LINES_EVERY", "0")
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with FakeLLMServer(reply="Not mentioned") as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        result = cli("benchmark", "run", str(DATA / "pasta.jsonl"), "--generator", "openai/x",
                     "--concurrency", "1", "-o", str(tmp_path / "run"))  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stderr.splitlines() if " of 14 (done " in line]
    assert len(lines) == 14
    assert lines[0].startswith("tasks") and ": 1 of 14 (done 1  failed 0  skipped 0" in lines[0]
    assert ", eta " in lines[0] and "/s" in lines[0]
    assert ", eta " not in lines[-1]  # nothing left


def test_synthesize_off_a_terminal_prints_its_counts_rate_and_eta_as_it_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a run does: a line of kept, dropped and failed questions every
    LASAGNA_PROGRESS_LINES_EVERY seconds (0 here: one per question) while the model writes."""
    import json

    from lasagna_judge.testing import FakeLLMServer

    def reply(request: dict[str, Any]) -> str:
        user = request["messages"][-1]["content"]
        if "Write one" not in user:
            return json.dumps({"reason": "stated", "supported": "yes"})
        if "from skerra-ferry.txt:" in user:
            return json.dumps({"question": "Question 1", "answer": "a"})  # a placeholder
        return json.dumps({"question": f"What does prompt {hash(user)} say?", "answer": "it"})

    monkeypatch.setenv("LASAGNA_PROGRESS_LINES_EVERY", "0")
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with FakeLLMServer(reply=reply) as server:
        result = cli("benchmark", "synthesize", str(ROOT / "examples" / "docs"), "--n", "6",
                     "--mix", "factoid=1", "--model", "openai/x", "--base-url", server.base_url,
                     "--concurrency", "1", "--out", str(tmp_path / "qa.jsonl"))  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stderr.splitlines() if line.startswith("synthesize: ")]
    assert [line.split(" (")[0] for line in lines] == [
        f"synthesize: {i} of 6 questions" for i in range(1, 7)
    ]
    assert ", eta " in lines[0] and "/s" in lines[0] and ", eta " not in lines[-1]
    last = re.search(r"kept (\d+)  dropped (\d+)  errors 0", lines[-1])
    assert last is not None and int(last.group(1)) + int(last.group(2)) == 6
    assert int(last.group(2)) > 0  # the placeholders are counted as they come
    assert re.match(rf"Wrote {last.group(1)} rows? ", result.stdout)
