"""`benchmark run` scores a question file's duplicate question once and says so; the figures
of the distinct questions are those of the file without the copies; near duplicates and a
BEIR folder's queries are each scored."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from lasagna_cli._app import app

PASTA = Path(__file__).resolve().parents[2] / "examples" / "data" / "pasta.jsonl"


def run(*args: str) -> Any:
    return CliRunner().invoke(app, ["benchmark", "run", *args])


def results_of(out: Path) -> dict[str, Any]:
    (found,) = json.loads((out / "results.json").read_text(encoding="utf-8"))["results"]
    return dict(found)


def with_rows(tmp_path: Path, name: str, extra: list[dict[str, Any]]) -> Path:
    path = tmp_path / name
    text = PASTA.read_text(encoding="utf-8")
    path.write_text(text + "".join(json.dumps(row) + "\n" for row in extra), encoding="utf-8")
    return path


def test_a_duplicate_question_is_scored_once_and_said(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in PASTA.read_text(encoding="utf-8").splitlines()]
    copies = [
        # the same question in other case and punctuation, with another answer: a copy
        {**rows[2], "id": "again-3", "question": rows[2]["question"].upper().rstrip("?")},
        {**rows[0], "id": "again-1"},
        {**rows[2], "id": "again-3b"},
    ]
    data = with_rows(tmp_path, "pasta-twice.jsonl", copies)
    result = run(str(data), "-o", str(tmp_path / "twice"))
    assert result.exit_code == 0, result.output
    note = (
        f"3 duplicate questions scored once: again-3 = {rows[2]['id']}, again-1 = "
        f"{rows[0]['id']}, again-3b = {rows[2]['id']}"
    )
    assert f"{data}: {note}" in result.stderr.splitlines()
    planned = run(str(data), "--dry-run")  # the dry run counts the distinct questions too
    assert planned.exit_code == 0, planned.output
    assert f"x bm25-k5: {len(rows)}" in planned.stdout
    assert f"  note: {data}: {note}" in planned.stdout.splitlines()
    twice = results_of(tmp_path / "twice")
    assert note in twice["dataset"]["notes"]
    assert twice["counts"]["questions"] == len(rows)
    assert [q["id"] for q in twice["per_query"]] == [row["id"] for row in rows]

    # every figure is that of the file without its copies
    once = run(str(PASTA), "-o", str(tmp_path / "once"))
    assert once.exit_code == 0, once.output
    plain = results_of(tmp_path / "once")
    assert twice["metrics"] == plain["metrics"]
    assert twice["per_query"] == plain["per_query"]
    assert "duplicate" not in once.stderr and plain["dataset"]["notes"] == []

    # and a paired comparison counts each question once
    other = run(str(data), "-o", str(tmp_path / "k1"), "--top-k", "1")
    assert other.exit_code == 0, other.output
    compared = CliRunner().invoke(
        app,
        ["benchmark", "compare", str(tmp_path / "k1"), str(tmp_path / "twice"), "--force",
         "--format", "json"],
    )  # fmt: skip
    assert compared.exit_code == 0, compared.output
    (comparison,) = json.loads(compared.stdout)["comparisons"]
    assert {m["n"] for m in comparison["metrics"]} == {len(rows) - 2}  # 2 are unanswerable


def test_near_duplicates_in_a_users_file_are_each_scored(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in PASTA.read_text(encoding="utf-8").splitlines()]
    question = rows[0]["question"]
    assert " is " in question
    near = {**rows[0], "id": "reworded", "question": question.replace(" is ", " was ")}
    result = run(str(with_rows(tmp_path, "near.jsonl", [near])), "-o", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    found = results_of(tmp_path / "out")
    assert found["counts"]["questions"] == len(rows) + 1
    assert found["dataset"]["notes"] == [] and "duplicate" not in result.stderr


def test_a_beir_folders_queries_are_each_scored_as_trec_eval_does(tmp_path: Path) -> None:
    folder = tmp_path / "beir"
    shutil.copytree(PASTA.parent / "pasta-beir", folder)
    queries = folder / "queries.jsonl"
    first = json.loads(queries.read_text(encoding="utf-8").splitlines()[0])
    with queries.open("a", encoding="utf-8") as out:
        out.write(json.dumps({"_id": "again", "text": first["text"]}) + "\n")
    with (folder / "qrels" / "test.tsv").open("a", encoding="utf-8") as out:
        out.write("again\tragu\t2\n")
    result = run(str(folder), "-o", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    found = results_of(tmp_path / "out")
    assert "again" in [q["id"] for q in found["per_query"]]
    assert "duplicate" not in result.stderr
