"""Writes docs/report.png, the README's picture of the HTML report of the example sweep.

    uv run --group documents python docs/screenshot_report.py

Runs examples/data/sweep.yaml (BM25, no model), writes its report, opens it in Debian's
headless Chromium and takes the picture of its top: the first benchmark's leaderboard
with its intervals, its charts and breakdown.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import WebDriverWait

    lasagna = str(Path(sys.executable).parent / "lasagna")
    with tempfile.TemporaryDirectory() as tmp:
        run, page = Path(tmp) / "sweep", Path(tmp) / "report.html"
        subprocess.run([lasagna, "benchmark", "run", str(ROOT / "examples/data/sweep.yaml"),
                        "-o", str(run)], check=True, capture_output=True)  # fmt: skip
        subprocess.run([lasagna, "benchmark", "report", str(run), "-o", str(page),
                        "--title", "lasagna report: examples/data/sweep.yaml"],
                       check=True, capture_output=True)  # fmt: skip
        options = webdriver.ChromeOptions()
        options.binary_location = shutil.which("chromium") or "chromium"
        for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1100,1250",
                     "--hide-scrollbars"):  # fmt: skip
            options.add_argument(flag)
        driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
        try:
            driver.get(page.as_uri())
            WebDriverWait(driver, 20).until(
                lambda d: d.find_element("tag name", "body").get_attribute("data-ready") == "1"
            )
            driver.save_screenshot(str(ROOT / "docs" / "report.png"))
        finally:
            driver.quit()
    print(f"wrote {ROOT / 'docs' / 'report.png'}")


if __name__ == "__main__":
    main()
