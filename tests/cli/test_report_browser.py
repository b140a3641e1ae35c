"""The HTML report in a real browser: Debian's headless Chromium, driven by selenium through
chromedriver (started here, on 127.0.0.1). The page loads from file:// with no console
error, its leaderboard numbers are results.json's, a filter, the search and the drill-down
work, and text from documents and models is shown as text: a `<script>` in an answer never
runs. Skipped, with the reason, only where chromium or chromedriver is not installed
(`apt-get install chromium chromium-driver`; .ci/run installs them)."""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_judge.testing import FakeLLMServer

DATA = Path(__file__).resolve().parents[2] / "examples" / "data"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")

pytestmark = pytest.mark.skipif(
    CHROMIUM is None or CHROMEDRIVER is None,
    reason="needs Debian's chromium and chromium-driver (apt-get install -y chromium "
    "chromium-driver), which are not installed here",
)

SCRIPT_ANSWER = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">No'


def reply(request: dict[str, Any]) -> str:
    everything = json.dumps(request["messages"], ensure_ascii=False)
    if "Answer to grade:" in everything:
        return json.dumps({"reasoning": "the answer <b>matches</b> the reference", "score": 4})
    user = request["messages"][-1]["content"]
    if "carbonara" in user:
        return SCRIPT_ANSWER
    return "wide, flat pasta sheets"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("browser")
    generated = tmp / "generated"
    with FakeLLMServer(reply=reply) as server:
        env = {
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "sk-test",
            "LASAGNA_CACHE_DIR": str(tmp / "cache"),
            "MODEL_NAME": "",
        }
        result = CliRunner().invoke(
            app,
            ["benchmark", "run", str(DATA / "pasta.jsonl"), "--tracks", "retrieval,generation",
             "--generator", "openai/fake", "--judge", "openai/judge", "-o", str(generated)],
            env=env,
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    staged = tmp / "staged"
    result = CliRunner().invoke(
        app,
        ["benchmark", "run", "locomo", "--data-dir", str(DATA / "locomo-mini"), "--step", "gen",
         "-o", str(staged)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    sweep = tmp / "sweep"
    result = CliRunner().invoke(
        app, ["benchmark", "run", str(DATA / "sweep.yaml"), "-o", str(sweep)]
    )
    assert result.exit_code == 0, result.output
    return {"generated": generated, "staged": staged, "sweep": sweep}


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Chromium through chromedriver, which selenium starts on 127.0.0.1 and stops at quit."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    assert CHROMEDRIVER is not None and CHROMIUM is not None
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu",
                 "--disable-dev-shm-usage", "--window-size=1300,1000"):  # fmt: skip
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(CHROMEDRIVER)
    driver = webdriver.Chrome(service=service, options=options)
    try:
        yield driver
    finally:
        driver.quit()


def report_of(folders: list[Path], target: Path) -> Path:
    result = CliRunner().invoke(app, ["benchmark", "report", *map(str, folders), "-o", str(target)])
    assert result.exit_code == 0, result.output
    return target


def open_page(browser: Any, page: Path) -> list[dict[str, Any]]:
    """Open the report and wait until it says it is ready; the console's messages."""
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get_log("browser")  # drop earlier pages' messages
    browser.get(page.as_uri())
    WebDriverWait(browser, 20).until(
        lambda d: d.find_element("tag name", "body").get_attribute("data-ready") == "1"
    )
    logs: list[dict[str, Any]] = browser.get_log("browser")
    return logs


def test_report_loads_and_shows_results_json(
    runs: dict[str, Path], browser: Any, tmp_path: Path
) -> None:
    page = report_of([runs["generated"]], tmp_path / "report.html")
    logs = open_page(browser, page)
    assert [entry for entry in logs if entry["level"] in ("SEVERE", "WARNING")] == []
    (result,) = json.loads((runs["generated"] / "results.json").read_text())["results"]
    cells = browser.find_elements("css selector", "table.leaderboard td[data-value]")
    seen = {}
    for cell in cells:
        track, name = cell.get_attribute("data-metric").split("/", 1)
        seen[(track, name)] = float(cell.get_attribute("data-value"))
        assert seen[(track, name)] == result["metrics"][track][name]["mean"]
        assert cell.text.startswith(f"{result['metrics'][track][name]['mean']:.3f}")
    assert ("retrieval", "ndcg@10") in seen and ("generation", "judge_score") in seen
    charts = browser.find_elements("css selector", ".chart svg")
    assert len(charts) >= 4  # Vega drew the headline metrics
    failed = browser.find_element("css selector", "td[data-count='failed']")
    assert failed.text == "0"


def test_untrusted_text_is_shown_as_text(
    runs: dict[str, Path], browser: Any, tmp_path: Path
) -> None:
    page = report_of([runs["generated"]], tmp_path / "report.html")
    open_page(browser, page)
    assert browser.execute_script("return window.pwned === undefined")
    search = browser.find_element("id", "q-search")
    search.send_keys("carbonara")
    time.sleep(0.4)  # the search waits for typing to pause
    rows = browser.find_elements("css selector", "#q-list .qrow")
    assert len(rows) == 1 and "q08" in rows[0].text
    rows[0].click()
    detail = browser.find_element("id", "q-detail")
    answer = detail.find_element("css selector", ".answer")
    assert answer.text == SCRIPT_ANSWER  # the markup, as text
    assert detail.find_elements("css selector", ".answer script, .answer img") == []
    reasoning = detail.find_element("css selector", ".reasoning")
    assert "<b>matches</b>" in reasoning.text
    assert reasoning.find_elements("tag name", "b") == []
    assert browser.execute_script("return window.pwned === undefined")
    # The drill-down has the question, its references, the judge and the ranking.
    assert "carbonara" in detail.text.lower() and "judge: score 4" in detail.text
    relevant = detail.find_elements("css selector", "ol.ranking li.relevant")
    assert relevant and re.search(r"score \d+(\.\d+)? · relevant \(grade 1\)", relevant[0].text)


def test_filters_sort_and_groups(runs: dict[str, Path], browser: Any, tmp_path: Path) -> None:
    page = report_of([runs["sweep"]], tmp_path / "sweep.html")
    logs = open_page(browser, page)
    assert [entry for entry in logs if entry["level"] == "SEVERE"] == []
    from selenium.webdriver.support.ui import Select

    count = browser.find_element("id", "q-count")
    assert count.text == "showing 14 of 14 questions"
    Select(browser.find_element("id", "q-filter")).select_by_value("failed")
    assert count.text == "showing 0 of 14 questions"
    Select(browser.find_element("id", "q-filter")).select_by_value("disagree")
    assert count.text == "showing 0 of 14 questions"  # nDCG@10 ranks 10 deep for both
    Select(browser.find_element("id", "q-metric")).select_by_value("retrieval/evidence_recall")
    disagreeing = int(count.text.split()[1])
    assert 0 < disagreeing < 14  # evidence in the top 1 against the top 5
    Select(browser.find_element("id", "q-filter")).select_by_value("all")
    Select(browser.find_element("id", "q-sort")).select_by_value("disagreement")
    first = browser.find_element("css selector", "#q-list .qrow")
    first.click()
    assert browser.find_element("id", "q-detail").get_attribute("data-qid") == first.get_attribute(
        "data-qid"
    )
    groups = Select(browser.find_element("id", "q-group")).options
    assert len(groups) == 3  # pasta (pooled gold), pasta-multihop, pasta-beir
    comparisons = browser.find_elements("css selector", "table.comparisons tr[data-metric]")
    assert comparisons
    # One sentence per compared metric, the engine's, after the comparisons' table.
    verdicts = browser.find_elements("css selector", "ul.verdicts li")
    assert len(verdicts) == len(comparisons)
    assert (
        "bm25-k1 and bm25-k5 score the same on retrieval/ndcg@10 on every one of the 12 "
        "questions" in [v.get_attribute("textContent") for v in verdicts]
    )
    # Each setup's settings: the first group's three setups at their top_k.
    cells = browser.find_elements("css selector", "table.settings td[data-setting='top_k']")
    assert [c.get_attribute("textContent") for c in cells[:3]] == ["1", "5", "5"]
    cells = browser.find_elements("css selector", "table.settings td[data-setting='stemmer']")
    stemmers = [c.get_attribute("textContent") for c in cells[:3]]
    assert stemmers[0] == stemmers[1] != stemmers[2] == "none"  # what compared: names
    overview = browser.find_element("css selector", "table.overview")  # every benchmark
    assert overview.text.count("bm25-k5-no-stemming") == 1 and "pasta-beir" in overview.text


def test_staged_pipeline_folder(runs: dict[str, Path], browser: Any, tmp_path: Path) -> None:
    page = report_of([runs["staged"]], tmp_path / "staged.html")
    logs = open_page(browser, page)
    assert [entry for entry in logs if entry["level"] == "SEVERE"] == []
    cell = browser.find_element("css selector", "td[data-metric='retrieval/evidence_recall']")
    report = json.loads((runs["staged"] / "benchmark_metrics_report.json").read_text())
    assert float(cell.get_attribute("data-value")) == pytest.approx(
        report["Performance Metrics"]["Average Recall"], abs=1e-12
    )
    browser.find_element("css selector", "#q-list .qrow").click()
    marks = browser.find_elements("css selector", "#q-detail mark")
    assert marks  # the question's evidence highlighted in its passages


def test_pooled_gold_is_said_and_the_key_is_the_terminals(
    runs: dict[str, Path], browser: Any, tmp_path: Path
) -> None:
    again = CliRunner().invoke(
        app, ["benchmark", "run", str(DATA / "sweep.yaml"), "-o", str(tmp_path / "again")]
    )
    assert again.exit_code == 0, again.output
    terminal = [line.split()[2].rstrip(";") for line in again.stdout.splitlines()
                if line.startswith("comparability key ")]  # fmt: skip
    page = report_of([runs["sweep"]], tmp_path / "sweep.html")
    open_page(browser, page)
    sections = browser.find_elements("css selector", "section.group")
    shown = [s.find_element("css selector", "p.muted").text for s in sections]
    assert len(shown) == len(terminal) == 3  # pasta, pasta-multihop, pasta-beir
    for key, text in zip(terminal, shown, strict=True):
        assert text.startswith(f"comparability key {key}")  # the same key in both
    notes = [s.find_elements("css selector", "p.note.pooled") for s in sections]
    assert [len(n) for n in notes] == [1, 1, 0]  # pooled gold twice; BEIR has its corpus
    assert "pooled gold" in notes[0][0].text and "--corpus" in notes[0][0].text
    # The leaderboard fits a 1400 px window: nothing scrolls sideways.
    browser.set_window_size(1400, 1000)
    wide = browser.execute_script(
        "return Array.from(document.querySelectorAll('table.leaderboard'))"
        ".map(t => t.getBoundingClientRect().right)"
    )
    assert wide and max(wide) <= browser.execute_script("return window.innerWidth")
    browser.set_window_size(1300, 1000)


def test_the_claim_diagnosis_table(browser: Any, tmp_path: Path) -> None:
    from tests.cli.test_run_diagnostics import flags, reply, run

    out = tmp_path / "diagnosed"
    with FakeLLMServer(reply=reply) as server:
        assert run(tmp_path, server, *flags(out, "--diagnostics")).exit_code == 0
    page = report_of([out], tmp_path / "report.html")
    logs = open_page(browser, page)
    assert [entry for entry in logs if entry["level"] in ("SEVERE", "WARNING")] == []
    (result,) = json.loads((out / "results.json").read_text())["results"]
    found = result["metrics"]["diagnostics"]
    table = browser.find_element("css selector", "table.diagnosis")
    cells = table.find_elements("css selector", "td[data-value]")
    assert len(cells) == 12  # RAGChecker's 11, and answer_relevance (rows without a reference)
    for cell in cells:
        name = cell.find_element("xpath", "..").get_attribute("data-metric").split("/", 1)[1]
        assert float(cell.get_attribute("data-value")) == found[name]["mean"]
        assert f"[{found[name]['ci95_low']:.3f}, {found[name]['ci95_high']:.3f}]" in cell.text
    assert "retriever" in table.text and "hallucination ↓" in table.text
    assert not browser.find_elements("css selector", "table.leaderboard[data-track='diagnostics']")


def test_each_setups_chunking_and_what_the_setups_vary(browser: Any, tmp_path: Path) -> None:
    """A sweep of two chunkings over a folder of documents: the settings table shows each
    setup's chunker, size and overlap, and the key line names what the setups vary."""
    from tests.cli.test_run_corpus import corpus_and_questions

    corpus_and_questions(tmp_path)
    (tmp_path / "sweep.yaml").write_text(
        "benchmarks:\n  - {path: qa.jsonl, corpus: docs}\nsetups:\n"
        "  - {name: words-50, chunking: {size: 50}}\n"
        "  - {name: md-120, chunking: {chunker: markdown, size: 120, overlap: 10}}\n",
        encoding="utf-8",
    )
    out = tmp_path / "run"
    done = CliRunner().invoke(
        app, ["benchmark", "run", str(tmp_path / "sweep.yaml"), "-o", str(out)]
    )
    assert done.exit_code == 0, done.output
    open_page(browser, report_of([out], tmp_path / "report.html"))
    rows = browser.find_elements("css selector", "table.settings tr[data-setup]")
    shown = {
        row.get_attribute("data-setup"): [
            row.find_element("css selector", f"td[data-setting='{name}']").text
            for name in ("chunker", "chunk size", "chunk overlap")
        ]
        for row in rows
    }
    assert shown == {"words-50": ["fixed", "50", "0"], "md-120": ["markdown", "120", "10"]}
    key = browser.find_element("css selector", "section.group p.muted").text
    assert key.endswith("compared: chunker, chunk_size, chunk_overlap")


def test_the_question_list_shows_each_setups_whole_name(browser: Any, tmp_path: Path) -> None:
    """Setup names longer than a column (`hybrid-200-overlap-40`) wrap in the question
    list's header instead of being cut to "hybrid-2…"."""
    names = ["bm25-200-words-overlap-40", "bm25-200-words-overlap-80"]
    (tmp_path / "sweep.yaml").write_text(
        f"benchmarks:\n  - path: {json.dumps(str(DATA / 'pasta.jsonl'))}\nsetups:\n"
        + "".join(
            f"  - {{name: {n}, retriever: {{top_k: {i + 1}}}}}\n" for i, n in enumerate(names)
        )
        + "tracks: [retrieval]\n",
        encoding="utf-8",
    )
    out = tmp_path / "run"
    done = CliRunner().invoke(
        app, ["benchmark", "run", str(tmp_path / "sweep.yaml"), "-o", str(out)]
    )
    assert done.exit_code == 0, done.output
    open_page(browser, report_of([out], tmp_path / "report.html"))
    cells = browser.find_elements("css selector", ".qhead .cell")
    assert [cell.get_attribute("title") for cell in cells] == names
    for cell in cells:
        # Every character on the page: nothing cut off, nothing hidden by an ellipsis.
        assert cell.text.replace("\n", "") == cell.get_attribute("title")
        width = browser.execute_script(
            "return [arguments[0].scrollWidth, arguments[0].clientWidth]", cell
        )
        assert width[0] <= width[1]
