"""One rule for exit codes, in every command (docs/reference/exit-codes.md): an input path named on
the command line that does not exist or cannot be read as what it should be (a folder for a
file) is a usage error, exit 2; a file that is there but holds what cannot be used is bad
data, exit 1; a sweep file, the flags of a run written down, exits as the flags would.
Each case fails before any model call (none of them has a server to call)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lasagna_cli._app import app

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
PASTA = EXAMPLES / "data" / "pasta.jsonl"
SQUAD = EXAMPLES / "squad"
ANSWERS = EXAMPLES / "judge" / "answers.jsonl"
LABELS = EXAMPLES / "judge" / "labels.jsonl"
DEAD = "http://127.0.0.1:9/v1"  # nothing listens: a call would fail, not hang
MODEL = ["--model", "openai/judge", "--base-url", DEAD]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    """A missing path, a folder, a dangling symlink, and files with unusable contents."""
    (tmp_path / "folder").mkdir()
    (tmp_path / "dangling.jsonl").symlink_to(tmp_path / "gone.jsonl")
    (tmp_path / "not-json.jsonl").write_text("not json\n", encoding="utf-8")
    (tmp_path / "not-json.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "rubric.toml").write_text('id = "x"\n', encoding="utf-8")
    (tmp_path / "prices.json").write_text('{"m": "free"}', encoding="utf-8")
    (tmp_path / "setups.toml").write_text('[a]\nprovider = "openai"\nmodel = "m"\n', "utf-8")
    (tmp_path / "datasets.json").write_text(json.dumps({"d": {"q": {"input": "Q?"}}}), "utf-8")
    (tmp_path / "bad-setups.toml").write_text("[a\n", encoding="utf-8")
    (tmp_path / "bad-config.toml").write_text("[providers\n", encoding="utf-8")
    (tmp_path / "results").mkdir()
    return {p.name: str(p) for p in tmp_path.iterdir()} | {
        "missing": str(tmp_path / "missing.jsonl"),
        "missing.json": str(tmp_path / "missing.json"),
        "missing.toml": str(tmp_path / "missing.toml"),
        "missing-dir": str(tmp_path / "missing-dir"),
        "out": str(tmp_path / "out"),
    }


# (command line with {name} placeholders for the files above, expected exit code)
CASES: list[tuple[str, list[str], int]] = [
    # metrics squad
    ("metrics squad: missing", ["metrics", "squad", "{missing.json}", f"{SQUAD}/dataset.json"], 2),
    ("metrics squad: folder", ["metrics", "squad", "{folder}", f"{SQUAD}/dataset.json"], 2),
    ("metrics squad: bad", ["metrics", "squad", "{not-json.json}", f"{SQUAD}/dataset.json"], 1),
    (
        "metrics squad: missing dataset",
        ["metrics", "squad", f"{SQUAD}/predictions.json", "{missing.json}"],
        2,
    ),
    # judge grade
    ("judge grade: missing", ["judge", "grade", "{missing}", *MODEL], 2),
    ("judge grade: folder", ["judge", "grade", "{folder}", *MODEL], 2),
    ("judge grade: dangling", ["judge", "grade", "{dangling.jsonl}", *MODEL], 2),
    ("judge grade: bad", ["judge", "grade", "{not-json.jsonl}", *MODEL], 1),
    ("judge grade: missing rubric", ["judge", "grade", str(ANSWERS), *MODEL, "--rubric",
                                     "{missing.toml}"], 2),
    ("judge grade: bad rubric", ["judge", "grade", str(ANSWERS), *MODEL, "--rubric",
                                 "{rubric.toml}"], 1),
    ("judge grade: missing prices", ["judge", "grade", str(ANSWERS), *MODEL, "--prices",
                                     "{missing.json}"], 2),
    ("judge grade: bad prices", ["judge", "grade", str(ANSWERS), *MODEL, "--prices",
                                 "{prices.json}"], 1),
    # judge calibrate
    ("calibrate: missing", ["judge", "calibrate", "{missing}", "--labels", str(LABELS)], 2),
    ("calibrate: folder", ["judge", "calibrate", "{folder}", "--labels", str(LABELS)], 2),
    ("calibrate: missing labels", ["judge", "calibrate", str(LABELS), "--labels", "{missing}"], 2),
    ("calibrate: bad", ["judge", "calibrate", "{not-json.jsonl}", "--labels", str(LABELS)], 1),
    # benchmark validate-data
    ("validate-data: missing", ["benchmark", "validate-data", "{missing}"], 2),
    ("validate-data: dangling", ["benchmark", "validate-data", "{dangling.jsonl}"], 2),
    ("validate-data: bad", ["benchmark", "validate-data", "{not-json.jsonl}"], 1),
    # A folder that is not a BEIR folder is a path that is not what it should be, as with
    # `info beir --data-dir`: usage.
    ("validate-data: not a BEIR folder", ["benchmark", "validate-data", "{folder}"], 2),
    # benchmark run
    ("run: missing", ["benchmark", "run", "{missing}", "-o", "{out}"], 2),
    ("run: dangling", ["benchmark", "run", "{dangling.jsonl}", "-o", "{out}"], 2),
    ("run: missing sweep file", ["benchmark", "run", "{missing.toml}", "-o", "{out}"], 2),
    ("run: bad", ["benchmark", "run", "{not-json.jsonl}", "-o", "{out}"], 1),
    # a sweep file is flags written down (see the test below)
    ("run: bad sweep file", ["benchmark", "run", "{bad-setups.toml}", "-o", "{out}"], 2),
    ("run: missing predictions", ["benchmark", "run", str(PASTA), "--predictions", "{missing}",
                                  "-o", "{out}"], 2),
    ("run: predictions folder", ["benchmark", "run", str(PASTA), "--predictions", "{folder}",
                                 "-o", "{out}"], 2),
    ("run: bad predictions", ["benchmark", "run", str(PASTA), "--predictions",
                              "{not-json.jsonl}", "-o", "{out}"], 1),
    ("run: missing prices", ["benchmark", "run", str(PASTA), "--prices", "{missing.json}",
                             "-o", "{out}"], 2),
    ("run: missing rubric", ["benchmark", "run", str(PASTA), "--generator", "openai/m",
                             "--judge", "openai/m", "--rubric", "{missing.toml}", "-o",
                             "{out}"], 2),
    ("run: bad rubric", ["benchmark", "run", str(PASTA), "--generator", "openai/m", "--judge",
                         "openai/m", "--rubric", "{rubric.toml}", "-o", "{out}"], 1),
    ("run: missing --system file", ["benchmark", "run", str(PASTA), "--system",
                                    "{missing-dir}/system.py:f", "-o", "{out}"], 2),
    ("run NAME: missing --data-dir", ["benchmark", "run", "locomo", "--data-dir",
                                      "{missing-dir}", "--step", "gen", "-o", "{out}"], 2),
    # benchmark sweep
    ("sweep: missing datasets", ["benchmark", "sweep", "-d", "{missing.json}", "-b",
                                 "{setups.toml}", "-o", "{out}"], 2),
    ("sweep: datasets folder", ["benchmark", "sweep", "-d", "{folder}", "-b", "{setups.toml}",
                                "-o", "{out}"], 2),
    ("sweep: bad datasets", ["benchmark", "sweep", "-d", "{not-json.json}", "-b",
                             "{setups.toml}", "-o", "{out}"], 1),
    ("sweep: missing setups", ["benchmark", "sweep", "-d", "{datasets.json}", "-b",
                               "{missing.toml}", "-o", "{out}"], 2),
    ("sweep: bad setups", ["benchmark", "sweep", "-d", "{datasets.json}", "-b",
                           "{bad-setups.toml}", "-o", "{out}"], 1),
    ("sweep: missing config", ["benchmark", "sweep", "-d", "{datasets.json}", "-b",
                               "{setups.toml}", "-c", "{missing.toml}", "-o", "{out}"], 2),
    ("sweep: bad config", ["benchmark", "sweep", "-d", "{datasets.json}", "-b",
                           "{setups.toml}", "-c", "{bad-config.toml}", "-o", "{out}"], 1),
    # benchmark stats
    ("stats: missing results", ["benchmark", "stats", "--results", "{missing-dir}",
                                "--datasets", "{datasets.json}"], 2),
    ("stats: missing datasets", ["benchmark", "stats", "--results", "{results}", "--datasets",
                                 "{missing.json}"], 2),
    ("stats: bad datasets", ["benchmark", "stats", "--results", "{results}", "--datasets",
                             "{not-json.json}"], 1),
    # benchmark synthesize
    ("synthesize: missing corpus", ["benchmark", "synthesize", "{missing-dir}", "--dry-run"], 2),
    ("synthesize: dangling corpus", ["benchmark", "synthesize", "{dangling.jsonl}",
                                     "--dry-run"], 2),
    ("synthesize: empty corpus", ["benchmark", "synthesize", "{folder}", "--dry-run"], 1),
    ("synthesize: missing prices", ["benchmark", "synthesize", str(EXAMPLES / "docs"),
                                    "--dry-run", "--prices", "{missing.json}"], 2),
    ("synthesize: bad prices", ["benchmark", "synthesize", str(EXAMPLES / "docs"), "--dry-run",
                                "--prices", "{prices.json}"], 1),
    # benchmark sample / info
    ("sample: missing --data-dir", ["benchmark", "sample", "locomo", "--data-dir",
                                    "{missing-dir}", "-o", "{out}"], 2),
    ("sample: bad raw file", ["benchmark", "sample", "locomo", "--data-dir", "{not-json.json}",
                              "-o", "{out}"], 1),
    ("info: missing --data-dir", ["benchmark", "info", "locomo", "--data-dir",
                                  "{missing-dir}"], 2),
    ("info: bad raw file", ["benchmark", "info", "locomo", "--data-dir", "{not-json.json}"], 1),
    # benchmark openviking / run --config / prepare
    ("openviking: missing config", ["benchmark", "openviking", "{missing.toml}"], 2),
    ("openviking: config folder", ["benchmark", "openviking", "{folder}"], 2),
    ("openviking: bad config", ["benchmark", "openviking", "{not-json.json}"], 1),
    ("run --config: missing", ["benchmark", "run", "--config", "{missing.toml}"], 2),
    ("prepare: missing --raw-dir", ["benchmark", "prepare", "--raw-dir", "{missing-dir}", "-o",
                                    "{out}"], 2),
]  # fmt: skip


@pytest.mark.parametrize(("case", "args", "code"), CASES, ids=[c[0] for c in CASES])
def test_exit_code(
    case: str,
    args: list[str],
    code: int,
    files: dict[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.setenv("LASAGNA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MODEL_NAME", raising=False)
    argv = [re.sub(r"\{([^}]+)\}", lambda m: files[m.group(1)], a) for a in args]
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == code, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    error = [line for line in result.output.splitlines() if line.strip()]
    assert error, "a refusal says why"
    assert "Traceback" not in result.output


def test_a_sweep_files_settings_are_checked_as_the_flags_they_stand_for(tmp_path: Path) -> None:
    """The exception the exit-code page states: a sweep file is the flags of a run written
    down, so what it says (`top_k: 0`, an unknown key, even text that is not YAML or TOML)
    exits as the flag would: 2."""
    sweep = tmp_path / "s.yaml"
    sweep.write_text(
        f"benchmarks:\n  - path: {PASTA}\nsetups:\n  - name: a\n    retriever: {{top_k: 0}}\n",
        encoding="utf-8",
    )
    in_file = CliRunner().invoke(app, ["benchmark", "run", str(sweep), "-o", str(tmp_path / "a")])
    as_flag = CliRunner().invoke(
        app, ["benchmark", "run", str(PASTA), "--top-k", "0", "-o", str(tmp_path / "b")]
    )
    assert in_file.exit_code == as_flag.exit_code == 2
