"""A folder of documents someone sent, through every command that reads one: `synthesize`
(its dry run, in a process of its own so that its peak memory is measured), `validate-data
--corpus` and `run --corpus`. The folder holds a link to a secret outside it, a link to
/dev/zero, a FIFO, a link to a folder, a file name that carries escape sequences, and the
bombs of the hostile probe: a PDF whose stream inflates to 1.5 GB, a DOCX of 2 GB of XML and
one of 9 million paragraphs. Each command finishes in a bounded time under 1 GB, lists every
file it left out with the reason, and no byte of the secret reaches an output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests import _bombs
from typer.testing import CliRunner

from lasagna_cli._app import app

SECRET = "hunter2-root-password-never-in-a-prompt"
TITLE = "\x1b]0;pwned\x07\x1b[2Jnotes.md"  # sets the window's title, clears the screen
PEAK = 1024**3


def words(stem: str, n: int) -> str:
    return " ".join(f"{stem}{i}" for i in range(n))


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile")
    (root / "outside").mkdir()
    (root / "outside" / "shadow").write_text(f"root:{SECRET}\n", encoding="utf-8")
    docs = root / "docs"
    docs.mkdir()
    (docs / "harbour.md").write_text(words("harbour", 300), encoding="utf-8")
    (docs / "ferry.md").write_text(words("ferry", 300), encoding="utf-8")
    (docs / TITLE).write_text(words("title", 30), encoding="utf-8")
    (docs / "shadow.md").symlink_to(root / "outside" / "shadow")
    (docs / "zero.txt").symlink_to("/dev/zero")
    (docs / "away").symlink_to(root / "outside", target_is_directory=True)
    os.mkfifo(docs / "pipe.txt")
    (docs / "bomb.pdf").write_bytes(_bombs.pdf_with_stream(_bombs.zlib_zeros(1536)))
    (docs / "bomb.docx").write_bytes(_bombs.docx_of_spaces(2048))
    (docs / "paragraphs.docx").write_bytes(_bombs.docx_of_paragraphs(9_000_000))
    rows = [
        {
            "id": "q1",
            "question": "harbour120?",
            "answer": "a",
            "contexts": [words("harbour", 140)[-200:]],
        }
    ]
    (root / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return root


LEFT_OUT = {
    "away": "a link to a folder: not followed",
    "bomb.docx": "too big to read safely: 2,048 MB once unzipped",
    "bomb.pdf": "too big to read safely: streams inflating to over 256 MB",
    "paragraphs.docx": "too big to read safely: a part that inflates",
    "pipe.txt": "not a regular file: a named pipe (FIFO)",
    "shadow.md": "a link to a file outside the folder: not followed",
    "zero.txt": "a link to a file outside the folder: not followed",
}


def assert_clean(output: str) -> None:
    assert SECRET not in output
    assert "\x1b" not in output and "\x07" not in output  # shown as escapes instead
    assert "Traceback" not in output


def test_the_dry_run_lists_what_it_left_out_in_bounded_time_and_memory(hostile: Path) -> None:
    # The peak of this process's own memory (VmHWM): ru_maxrss would also count the memory
    # of the pytest process it was forked from, which Linux carries over an exec.
    measured = (
        "import os, re\n"
        "from lasagna_cli._app import main\n"
        "try:\n"
        "    main()\n"
        "finally:\n"
        "    status = open('/proc/self/status').read()\n"
        "    peak = int(re.search(r'VmHWM:\\s+(\\d+) kB', status).group(1)) * 1024\n"
        "    os.write(2, f'peak {peak}\\n'.encode())\n"
    )
    command = [
        sys.executable, "-c", measured, "benchmark", "synthesize", str(hostile / "docs"),
        "--dry-run", "--n", "4", "--out", str(hostile / "out.jsonl"),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    *_, peak_line = done.stderr.splitlines()
    peak = int(peak_line.removeprefix("peak "))
    assert peak < PEAK, f"peak memory {peak / 1024**2:,.0f} MB"
    assert_clean(done.stdout + done.stderr)
    skipped = {}
    for line in done.stdout.splitlines():
        path, _, reason = line.strip().partition(": ")
        if line.startswith("  ") and path in LEFT_OUT:
            skipped[path] = reason
    assert set(skipped) == set(LEFT_OUT)
    for path, reason in LEFT_OUT.items():
        assert skipped[path].startswith(reason), (path, skipped[path])
    assert "LASAGNA_MAX_DOCUMENT_MB=<MB> raises it" in skipped["bomb.pdf"]
    assert "\\x1b]0;pwned\\x07\\x1b[2Jnotes.md" in done.stdout
    assert "Skipped:    7" in done.stdout


def test_validate_data_and_a_run_list_the_files_left_out(hostile: Path, tmp_path: Path) -> None:
    data, docs = str(hostile / "qa.jsonl"), str(hostile / "docs")
    checked = CliRunner().invoke(app, ["benchmark", "validate-data", data, "--corpus", docs])
    assert checked.exit_code == 0, checked.output
    assert_clean(checked.output)
    assert "3 in " in checked.output and "7 files skipped" in checked.output
    for path, reason in LEFT_OUT.items():
        assert f"    skipped {path}: {reason}" in checked.output
    out = tmp_path / "run"
    ran = CliRunner().invoke(app, ["benchmark", "run", data, "--corpus", docs, "-o", str(out)])
    assert ran.exit_code == 0, ran.output
    assert_clean(ran.output)
    for written in out.rglob("*"):
        if written.is_file():
            assert SECRET.encode() not in written.read_bytes(), written
    described = json.loads((out / "results.json").read_text(encoding="utf-8"))
    corpus = described["results"][0]["dataset"]["corpus"]
    reasons = {entry["path"]: entry["reason"] for entry in corpus["skipped"]}
    assert set(reasons) == set(LEFT_OUT)


@pytest.mark.parametrize(
    ("value", "code", "said"),
    [
        ("0.002", 0, "    skipped harbour.md: too big to read safely: 3,"),
        ("lots", 2, "LASAGNA_MAX_DOCUMENT_MB: expected a number of megabytes above 0"),
    ],
)
def test_the_setting_raises_and_lowers_the_bounds(
    value: str, code: int, said: str, hostile: Path
) -> None:
    data, docs = str(hostile / "qa.jsonl"), str(hostile / "docs")
    result = CliRunner().invoke(
        app,
        ["benchmark", "validate-data", data, "--corpus", docs],
        env={"LASAGNA_MAX_DOCUMENT_MB": value},
    )
    assert result.exit_code == code, result.output
    assert said in result.output
    if code:
        assert len(result.output.strip().splitlines()) == 1


def test_one_sanitiser_shows_control_characters_as_escapes() -> None:
    from lasagna_cli.commands._terminal import shown

    assert (
        shown("a\x1b[2Jb\x07c\rd\te\x9bf\u202eg\nh") == "a\\x1b[2Jb\\x07c\\rd\\te\\x9bf\\u202eg\\nh"
    )
    assert shown("one\ntwo\x1b", keep_newlines=True) == "one\ntwo\\x1b"
    assert shown("café — ok 🍝") == "café — ok 🍝"


def test_an_error_line_naming_a_hostile_path_shows_its_escapes(tmp_path: Path) -> None:
    missing = str(tmp_path / "\x1b]0;pwned\x07\x1b[2Jdocs")
    result = CliRunner().invoke(app, ["benchmark", "validate-data", missing])
    assert result.exit_code == 2, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert "\\x1b]0;pwned\\x07\\x1b[2Jdocs" in result.output


def test_a_synthesis_over_the_folder_sends_no_byte_of_the_secret(
    hostile: Path, tmp_path: Path
) -> None:
    """The real run, against the fake server: every request and the question set are free
    of the file the link points to."""
    import re

    from lasagna_judge.testing import FakeLLMServer

    def reply(request: dict[str, Any]) -> str:
        user = request["messages"][-1]["content"]
        if "Write one" in user:
            doc = re.search(r"from (\S+?):", user)
            return json.dumps(
                {"question": f"What of {doc.group(1) if doc else '?'}?", "answer": "a fact"}
            )
        if "Reference answer:" in user:
            return json.dumps({"reason": "stated", "supported": "yes"})
        return json.dumps({"reason": "not stated", "answered": "no"})

    out = tmp_path / "qa.jsonl"
    with FakeLLMServer(reply=reply) as server:
        result = CliRunner().invoke(
            app,
            ["benchmark", "synthesize", str(hostile / "docs"), "--n", "6", "--out", str(out),
             "--model", "openai/m", "--base-url", server.base_url],
            env={"OPENAI_API_KEY": "test", "LASAGNA_CACHE_DIR": str(tmp_path / "cache")},
        )  # fmt: skip
        requests = json.dumps(server.requests)
    assert result.exit_code == 0, result.output
    assert server.calls > 0
    assert SECRET not in requests and "root:" not in requests
    assert SECRET not in out.read_text(encoding="utf-8")
    assert_clean(result.output)


def test_a_data_file_named_with_escape_sequences_reaches_the_leaderboard_and_compare_escaped(
    tmp_path: Path,
) -> None:
    from typer.testing import CliRunner

    from lasagna_cli._app import app

    data = tmp_path / "evil\x1b[2J\x1b]0;owned\x07.jsonl"
    examples = Path(__file__).resolve().parents[2] / "examples" / "data"
    data.write_bytes((examples / "pasta.jsonl").read_bytes())
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(
        f"benchmarks:\n  - path: {json.dumps(data.name)}\nsetups:\n"
        "  - {name: k1, retriever: {top_k: 1}}\n  - {name: k5, retriever: {top_k: 5}}\n"
        "tracks: [retrieval]\n"
    )
    out = tmp_path / "out"
    ran = CliRunner().invoke(app, ["benchmark", "run", str(sweep), "-o", str(out)])
    assert ran.exit_code == 0, ran.output
    compared = CliRunner().invoke(
        app, ["benchmark", "compare", str(out), "--setup", "k1", "--setup", "k5"]
    )
    assert compared.exit_code == 0, compared.output
    for output in (ran.output, compared.output):
        assert_clean(output)
        assert "evil\\x1b[2J\\x1b]0;owned\\x07" in output
