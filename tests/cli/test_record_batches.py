"""Records of tasks that call no model go to batch files (1,000 a file): a run killed with
SIGKILL keeps every batch whole, resumes from them with no finished batch redone, and gives
the figures of a run never killed; a task's own file wins over a batch, a newer batch over
an older one."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_cli.engine.records._store import RunStore, folder_records, iter_records, write_batch

LASAGNA = Path(sys.executable).with_name("lasagna")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "data"


def run(*args: str) -> Any:
    return CliRunner().invoke(app, ["benchmark", "run", *args])


def beir_folder(folder: Path, questions: int) -> Path:
    """A BEIR folder of 50 short documents and `questions` judged queries."""
    words = [f"w{i}" for i in range(120)]
    (folder / "qrels").mkdir(parents=True)
    docs = [" ".join(words[(d * 7 + j) % 120] for j in range(12)) for d in range(50)]
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": f"d{d}", "text": t}) + "\n" for d, t in enumerate(docs))
    )
    (folder / "queries.jsonl").write_text(
        "".join(
            json.dumps({"_id": f"q{q}", "text": " ".join(docs[q % 50].split()[q % 5 :][:3])}) + "\n"
            for q in range(questions)
        )
    )
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"q{q}\td{q % 50}\t1\n" for q in range(questions))
    )
    return folder


def batches(out: Path) -> list[Path]:
    return sorted((out / "tasks").glob("*/*/batch-*.jsonl"))


def test_a_retrieval_run_writes_batches_and_resumes_from_them(tmp_path: Path) -> None:
    out = tmp_path / "run"
    data = beir_folder(tmp_path / "beir", 2500)
    assert run(str(data), "-o", str(out)).exit_code == 0
    assert [p.name for p in batches(out)] == [f"batch-00000{i}.jsonl" for i in (1, 2, 3)]
    assert not list((out / "tasks").rglob("*.json"))  # no file per task
    records = list(iter_records(RunStore(out)))
    assert len(records) == 2500 and {r["task"]["item"] for _, r in records} == {
        f"q{q}" for q in range(2500)
    }
    results = (out / "results.json").read_bytes()
    again = run(str(data), "-o", str(out), "--resume")
    assert again.exit_code == 0, again.output
    assert "resuming: 2,500 of 2,500 tasks already finished" in again.stderr
    assert len(batches(out)) == 3  # nothing rewritten
    assert (out / "results.json").read_bytes() == results


def test_a_task_file_wins_over_a_batch_and_a_newer_batch_over_an_older(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    folder = tmp_path / "tasks" / "d" / "s"
    folder.mkdir(parents=True)

    def record(tag: str) -> bytes:
        return store.encode({"format": "lasagna-task/1", "tag": tag})

    write_batch(folder, 1, [("a.json", record("old")), ("b.json", record("old"))])
    write_batch(folder, 2, [("b.json", record("new")), ("c.json", record("new"))])
    (folder / "a.json").write_bytes(record("own"))
    found = {name: r["tag"] for name, r in folder_records(store, folder).items()}
    assert found == {"a.json": "own", "b.json": "new", "c.json": "new"}


def test_resume_redoes_a_batched_record_of_other_settings(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert run(str(EXAMPLES / "pasta-beir"), "-o", str(out)).exit_code == 0
    (batch,) = batches(out)
    lines = [json.loads(line) for line in batch.read_text().splitlines()]
    for name in ("fingerprint", "answer_fingerprint"):  # as if written by other settings
        lines[0]["record"][name] = "0" * 64
    batch.write_text("".join(json.dumps(line) + "\n" for line in lines))
    again = run(str(EXAMPLES / "pasta-beir"), "-o", str(out), "--resume")
    assert again.exit_code == 0, again.output
    assert "resuming: 6 of 7 tasks already finished" in again.stderr
    assert [p.name for p in batches(out)] == ["batch-000001.jsonl", "batch-000002.jsonl"]
    redone = {r["task"]["item"]: r for _, r in iter_records(RunStore(out))}
    assert redone[lines[0]["record"]["task"]["item"]]["fingerprint"] != "0" * 64


def test_a_retrieval_run_killed_with_sigkill_keeps_whole_batches(
    tmp_path: Path, sigkill_when: Any
) -> None:
    data = beir_folder(tmp_path / "beir", 6000)
    out = tmp_path / "run"
    command = [str(LASAGNA), "benchmark", "run", str(data), "-o", str(out)]
    returncode = sigkill_when(command, lambda: bool(batches(out)), within=120)
    assert returncode == -signal.SIGKILL
    kept = batches(out)
    assert 1 <= len(kept) < 6
    for batch in kept:  # whole or absent: every line a finished record
        lines = batch.read_text().splitlines()
        assert len(lines) == 1000
        assert all(json.loads(line)["record"]["error"] is None for line in lines)
    resumed = subprocess.run(
        [*command, "--resume"], capture_output=True, text=True, timeout=300, check=False
    )
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming: {len(kept) * 1000:,} of 6,000 tasks already finished" in resumed.stderr
    assert not list(out.rglob(".lasagna-tmp-*"))
    clean = tmp_path / "clean"
    assert run(str(data), "-o", str(clean)).exit_code == 0
    figures = [json.loads((o / "results.json").read_text())["results"] for o in (out, clean)]
    assert figures[0][0]["metrics"] == figures[1][0]["metrics"]
    assert figures[0][0]["per_query"] == figures[1][0]["per_query"]
