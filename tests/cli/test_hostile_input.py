"""Hostile files, walked through every command that reads them: JSON nested 100,000 deep, a
lone surrogate escape in a row, a YAML alias bomb. Each is refused in a line (a data file's
problems are one heading and one line each), with exit 1 for bad data or 2 for a sweep
file (flags written down), never a traceback, and before any model call."""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lasagna_cli._app import app

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
PASTA = EXAMPLES / "data" / "pasta.jsonl"
SQUAD = EXAMPLES / "squad"
LABELS = EXAMPLES / "judge" / "labels.jsonl"
DEAD = "http://127.0.0.1:9/v1"  # nothing listens: a call would fail, not hang
MODEL = ["--model", "openai/judge", "--base-url", DEAD]

DEEP = "[" * 100_000 + "]" * 100_000
LONE = r"Why\ud800?"  # half of a UTF-16 pair, as an escape: valid JSON syntax, not text


def _row(question: str) -> str:
    return (
        f'{{"id": "q1", "question": "{question}", "answer": "a", "prediction": "a", '
        '"score": 4, "status": "graded", "label": 4}\n'
    )


def _rows(question: str) -> str:
    return f'{{"id": "q1", "question": "{question}", "answer": "a"}}\n'


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real run folder (retrieval only: no model) to spoil a file of."""
    folder = tmp_path_factory.mktemp("run") / "run"
    result = CliRunner().invoke(app, ["benchmark", "run", str(PASTA), "-o", str(folder)])
    assert result.exit_code == 0, result.output
    return folder


@pytest.fixture(params=["deep", "lone"])
def hostile(request: pytest.FixtureRequest, tmp_path: Path, run_folder: Path) -> dict[str, str]:
    """Files of one kind of hostile JSON, in every shape a command reads."""
    kind = request.param
    value = DEEP if kind == "deep" else f'"{LONE}"'
    files = {
        "grade.jsonl": _row("Q?").replace('"a", "score"', f'{value}, "score"'),
        "rows.jsonl": _rows(LONE) if kind == "lone" else f'{{"id": "q1", "answer": {DEEP}}}\n',
        "doc.json": f'{{"data": {value}}}',
        "datasets.json": f'{{"d": {{"q": {{"input": {value}}}}}}}',
        "prices.json": f'{{"m": {value}}}',
        "graded.jsonl": _row("Q?"),
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    spoiled = tmp_path / "run"
    shutil.copytree(run_folder, spoiled)
    (spoiled / "results.json").write_text(files["doc.json"], encoding="utf-8")
    (tmp_path / "setups.toml").write_text('[a]\nprovider = "openai"\nmodel = "m"\n', "utf-8")
    return {name: str(tmp_path / name) for name in [*files, "run", "setups.toml"]} | {
        "kind": kind,
        "good-run": str(run_folder),
        "out": str(tmp_path / "out"),
    }


JSON_CASES: list[tuple[str, list[str]]] = [
    ("validate-data", ["benchmark", "validate-data", "{rows.jsonl}"]),
    ("run", ["benchmark", "run", "{rows.jsonl}", "-o", "{out}"]),
    ("run --predictions", ["benchmark", "run", str(PASTA), "--predictions", "{grade.jsonl}",
                           "-o", "{out}"]),
    ("run --prices", ["benchmark", "run", str(PASTA), "--prices", "{prices.json}", "-o",
                      "{out}"]),
    ("judge grade", ["judge", "grade", "{grade.jsonl}", *MODEL]),
    ("judge calibrate", ["judge", "calibrate", "{grade.jsonl}", "--labels", str(LABELS)]),
    ("judge calibrate --labels", ["judge", "calibrate", "{graded.jsonl}", "--labels",
                                  "{grade.jsonl}"]),
    ("metrics squad: predictions", ["metrics", "squad", "{doc.json}", f"{SQUAD}/dataset.json"]),
    ("metrics squad: dataset", ["metrics", "squad", f"{SQUAD}/predictions.json", "{doc.json}"]),
    ("sweep -d", ["benchmark", "sweep", "-d", "{datasets.json}", "-b", "{setups.toml}", "-o",
                  "{out}"]),
    ("stats --datasets", ["benchmark", "stats", "--results", "{good-run}", "--datasets",
                          "{datasets.json}"]),
    ("report", ["benchmark", "report", "{run}", "-o", "{out}"]),
    ("export", ["benchmark", "export", "{run}"]),
    ("compare", ["benchmark", "compare", "{good-run}", "{run}"]),
    ("validate-data: a SQuAD file", ["benchmark", "validate-data", "{doc.json}"]),
]  # fmt: skip


def _invoke(args: list[str], files: dict[str, str]) -> tuple[int, str, BaseException | None]:
    argv = [re.sub(r"\{([^}]+)\}", lambda m: files[m.group(1)], a) for a in args]
    result = CliRunner().invoke(app, argv)
    return result.exit_code, result.output, result.exception


def assert_refused(code: int, output: str, exception: BaseException | None, expected: int) -> None:
    """Exit `expected`, no traceback, and the refusal said in a line (or a data file's
    heading and its one problem)."""
    assert exception is None or isinstance(exception, SystemExit), repr(exception)
    assert code == expected, output
    assert "Traceback" not in output
    lines = [line for line in output.splitlines() if line.strip()]
    assert 1 <= len(lines) <= 2, output
    assert max(len(line) for line in lines) < 600, "the untrusted value is not quoted whole"


@pytest.mark.parametrize(("case", "args"), JSON_CASES, ids=[c[0] for c in JSON_CASES])
def test_hostile_json_is_bad_data_in_one_line(
    case: str,
    args: list[str],
    hostile: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.setenv("LASAGNA_CACHE_DIR", str(tmp_path / "cache"))
    code, output, exception = _invoke(args, hostile)
    assert_refused(code, output, exception, 1)
    said = "nested too deep" if hostile["kind"] == "deep" else "lone UTF-16 surrogate"
    assert said in output


def test_a_file_with_a_surrogate_pair_is_valid(tmp_path: Path) -> None:
    """The refusal is of lone halves only: an emoji written as json.dumps escapes it reads."""
    rows = tmp_path / "emoji.jsonl"
    rows.write_text(
        json.dumps({"id": "q1", "question": "Which \U0001f35d?", "answer": "lasagna"}) + "\n",
        encoding="utf-8",
    )
    assert "\\ud83c" in rows.read_text(encoding="utf-8")
    result = CliRunner().invoke(app, ["benchmark", "validate-data", str(rows)])
    assert result.exit_code == 0, result.output


# -- YAML and values too big to quote -------------------------------------------------------

_LAUGHS = "[" + ", ".join(["x"] * 10) + "]"
BOMB = (
    "seed: [&a "
    + _LAUGHS
    + "".join(f", &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]" for i in range(8))
    + "]\n"
)  # 10**9 values once written out; its repr in an error took 3.9 GB
SETUP = "setups:\n  - name: bm25\n    retriever: {top_k: 3}\nbenchmarks:\n  - path: %s\n"


@pytest.mark.parametrize(
    ("case", "text", "said"),
    [
        ("alias bomb", BOMB, "at most 100,000 values"),
        ("an alias in itself", "seed: &s [1, *s]\n", "contains itself"),
        ("nested 100,000 deep", "seed: " + "[" * 100_000 + "]" * 100_000 + "\n", "too deep"),
        ("a 10 MB value", "seed: " + "x" * 10_000_000 + "\n", "seed: expected a whole number"),
    ],
)
def test_a_hostile_sweep_file_is_refused_in_a_line(
    case: str, text: str, said: str, tmp_path: Path
) -> None:
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(SETUP % PASTA + text, encoding="utf-8")
    result = CliRunner().invoke(app, ["benchmark", "run", str(sweep), "-o", str(tmp_path / "o")])
    assert_refused(result.exit_code, result.output, result.exception, 2)
    assert said in result.output
    assert not (tmp_path / "o").exists()


def test_a_rubric_file_with_an_alias_bomb_is_refused(tmp_path: Path) -> None:
    rubric = tmp_path / "rubric.yaml"
    rubric.write_text(BOMB.replace("seed", "criteria"), encoding="utf-8")
    result = CliRunner().invoke(
        app, ["judge", "grade", str(LABELS), "--rubric", str(rubric), *MODEL]
    )
    assert result.exit_code in (1, 2), result.output
    assert_refused(result.exit_code, result.output, result.exception, result.exit_code)
    assert "at most 100,000 values" in result.output


def test_a_dry_run_of_3_000_000_questions_is_refused_at_once(tmp_path: Path) -> None:
    started = time.monotonic()
    result = CliRunner().invoke(
        app,
        ["benchmark", "synthesize", str(EXAMPLES / "docs"), "--dry-run", "--n", "3000000",
         "--model", "openai/m"],
    )  # fmt: skip
    assert time.monotonic() - started < 5
    assert_refused(result.exit_code, result.output, result.exception, 2)
    assert "at most 1,000,000" in result.output
