"""How fast the HTML report of a large run opens in Chromium: 10,000 questions x 4 setups.

    uv run --group documents python benchmarks/report_open.py [--questions 10000] [--repeat 3]

On two shapes of data: `short` (3-word answers, 60-word passages, systems ranking 9
documents) and `long` (40-word answers, 300-word passages, rankings of 20). For each, it
makes a data file of N questions (each with a reference answer and one gold passage: a
pooled corpus of N passages), two predictions files (answers and rankings of two "systems"),
and runs one sweep of 4 setups through `lasagna benchmark run` (BM25 top-3 and top-5, the
two systems): 4N tasks. Then `lasagna benchmark report` writes the report, and headless
Chromium (Debian's, through selenium and chromedriver) opens it from file:// `--repeat`
times: the figure is the time from navigation to the page saying it is ready (every table,
chart and the question list drawn; `performance.now()` at that point), and the time a search
over every question and answer takes to redraw. The same is measured on a run of 100
questions in the same session as the baseline. Goal: under 2 s for 10,000 x 4 on this
2-core machine.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

WORDS = (  # noqa: SIM905
    "pasta sauce oven layer cheese flour egg water salt pepper basil tomato garlic olive "
    "butter milk cream wine onion carrot celery beef pork lemon herb bread rice bean lentil "
    "soup broth roast grill boil simmer bake fry chop slice whisk"
).split()


def _words(rng: random.Random, k: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(k))


SHAPES = {"short": (3, 60, 9), "long": (40, 300, 20)}
"""shape -> (words an answer, words a passage, documents a system ranks)"""


def make_data(folder: Path, n: int, shape: str, seed: int = 7) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    answer_words, passage_words, ranks = SHAPES[shape]
    rows, a, b = [], [], []
    for i in range(n):
        qid, doc = f"q{i:05d}", f"d{i:05d}"
        answer = _words(rng, answer_words)
        rows.append(
            {
                "id": qid,
                "question": f"what {_words(rng, 10)} item{i}?",
                "answer": answer,
                "contexts": [f"{_words(rng, passage_words)} item{i}"],
                "expected_docs": [doc],
                "metadata": {"question_type": rng.choice(["factoid", "multihop"])},
            }
        )
        ranked = [f"d{rng.randrange(n):05d}" for _ in range(ranks)]
        ranked = [d for d in dict.fromkeys(ranked) if d != doc]
        first = [doc, *ranked] if rng.random() < 0.7 else ranked
        a.append({"id": qid, "answer": answer if rng.random() < 0.6 else "no idea",
                  "retrieved": first})  # fmt: skip
        b.append({"id": qid, "answer": answer if rng.random() < 0.65 else answer.split()[0],
                  "retrieved": [*ranked[:3], doc, *ranked[3:]]})  # fmt: skip
    (folder / "big.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    for name, found in (("sys-a", a), ("sys-b", b)):
        text = "".join(json.dumps(r) + "\n" for r in found)
        (folder / f"{name}.jsonl").write_text(text, encoding="utf-8")
    sweep = folder / "sweep.yaml"
    sweep.write_text(
        "benchmarks:\n  - path: big.jsonl\nsetups:\n"
        "  - {name: bm25-k3, retriever: {top_k: 3}}\n"
        "  - {name: bm25-k5, retriever: {top_k: 5}}\n"
        "  - {name: sys-a, system: {predictions: sys-a.jsonl}, retriever: {top_k: 5}}\n"
        "  - {name: sys-b, system: {predictions: sys-b.jsonl}, retriever: {top_k: 5}}\n",
        encoding="utf-8",
    )
    return sweep


def lasagna(*args: str) -> None:
    command = Path(sys.executable).parent / "lasagna"
    subprocess.run([str(command), *args], check=True, stdout=subprocess.DEVNULL)


def build(folder: Path, n: int, shape: str) -> tuple[Path, float]:
    sweep = make_data(folder, n, shape)
    run = folder / "run"
    started = time.perf_counter()
    lasagna("benchmark", "run", str(sweep), "-o", str(run), "--concurrency", "32")
    ran = time.perf_counter() - started
    report = folder / "report.html"
    started = time.perf_counter()
    lasagna("benchmark", "report", str(run), "-o", str(report))
    size = report.stat().st_size / 1e6
    wrote = time.perf_counter() - started
    print(f"  {shape}, {n:,} questions x 4 setups: run {ran:.1f} s, report written in "
          f"{wrote:.1f} s, {size:.1f} MB")  # fmt: skip
    return report, size


def open_times(driver: Any, page: Path, repeat: int) -> tuple[list[float], list[float]]:
    from selenium.webdriver.support.ui import WebDriverWait

    ready, searched = [], []
    for _ in range(repeat):
        driver.get("about:blank")
        driver.get(page.as_uri())
        WebDriverWait(driver, 60).until(
            lambda d: d.find_element("tag name", "body").get_attribute("data-ready") == "1"
        )
        ready.append(driver.execute_script("return window.lasagnaReadyMs") / 1000)
        # The search box waits 120 ms for typing to pause, then filters every question.
        took = driver.execute_script(
            "const box = document.getElementById('q-search');"
            "const count = document.getElementById('q-count');"
            "return new Promise(done => { const t0 = performance.now();"
            " new MutationObserver(() => done(performance.now() - t0 - 120))"
            ".observe(count, {childList: true, characterData: true, subtree: true});"
            " box.value = 'basil simmer'; box.dispatchEvent(new Event('input')); });"
        )
        searched.append(took / 1000)
        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        if errors:
            raise SystemExit(f"console errors: {errors}")
    return ready, searched


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--shapes", default="short,long")
    args = parser.parse_args()
    chromium, chromedriver = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or chromedriver is None:
        raise SystemExit(
            "needs chromium and chromedriver: apt-get install -y chromium chromium-driver"
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    met = True
    with tempfile.TemporaryDirectory() as tmp:
        print("building the runs and reports:")
        pages = {
            shape: (build(Path(tmp) / f"{shape}-small", 100, shape)[0],
                    *build(Path(tmp) / f"{shape}-big", args.questions, shape))
            for shape in args.shapes.split(",")
        }  # fmt: skip
        options = webdriver.ChromeOptions()
        options.binary_location = chromium
        for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1300,1000"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = webdriver.Chrome(service=Service(chromedriver), options=options)
        try:
            for shape, (small, big, size) in pages.items():
                base, base_search = open_times(driver, small, args.repeat)
                ready, searched = open_times(driver, big, args.repeat)
                met &= print_times(shape, args.questions, size, base, base_search, ready, searched)
        finally:
            driver.quit()
    raise SystemExit(0 if met else 1)


def print_times(
    shape: str,
    n: int,
    size: float,
    base: list[float],
    base_search: list[float],
    ready: list[float],
    searched: list[float],
) -> bool:
    median = statistics.median(ready)
    words, passage, ranks = SHAPES[shape]
    print(f"\n== {shape}: {words}-word answers, {passage}-word passages, rankings of {ranks}")
    print(f"open until ready, 100 x 4 (baseline): median {statistics.median(base):.2f} s "
          f"({', '.join(f'{t:.2f}' for t in base)})")  # fmt: skip
    print(f"open until ready, {n:,} x 4: median {median:.2f} s "
          f"({', '.join(f'{t:.2f}' for t in ready)}); {median / statistics.median(base):.1f}x "
          f"the baseline; goal < 2 s: {'met' if median < 2 else 'NOT met'}")  # fmt: skip
    print(f"search over every question and answer, redrawn: median "
          f"{statistics.median(searched) * 1000:.0f} ms (baseline "
          f"{statistics.median(base_search) * 1000:.0f} ms); file {size:.1f} MB")  # fmt: skip
    return median < 2


if __name__ == "__main__":
    main()
