"""--resume: finished tasks are skipped, results from an old revision or other settings are
never restored, and a run killed with SIGKILL loses at most the tasks in flight."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_cli.engine.records._store import RunStore, iter_records
from lasagna_judge.testing import FakeLLMServer

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "data"
LASAGNA = Path(sys.executable).with_name("lasagna")


def run(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(app, ["benchmark", "run", *args], env=env)


def task_files(out: Path) -> list[Path]:
    return sorted((out / "tasks").rglob("*.json"))


def records(out: Path) -> dict[str, dict[str, Any]]:
    """Every task record of a run (batched ones too) by its question."""
    return {str(r["task"]["item"]): r for _, r in iter_records(RunStore(out))}


def test_resume_skips_finished_tasks_and_gives_the_same_results(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert run(str(EXAMPLES / "pasta.jsonl"), "-o", str(out)).exit_code == 0
    before = {p: p.stat().st_mtime_ns for p in (out / "tasks").rglob("*") if p.is_file()}
    results = (out / "results.json").read_bytes()
    assert len(records(out)) == 14
    time.sleep(0.01)
    again = run(str(EXAMPLES / "pasta.jsonl"), "-o", str(out), "--resume")
    assert again.exit_code == 0, again.output
    assert "resuming: 14 of 14 tasks already finished" in again.stderr
    after = {p: p.stat().st_mtime_ns for p in (out / "tasks").rglob("*") if p.is_file()}
    assert after == before
    assert (out / "results.json").read_bytes() == results


def test_an_edited_file_is_never_restored_from_its_old_revision(tmp_path: Path) -> None:
    data = tmp_path / "pasta.jsonl"
    shutil.copy(EXAMPLES / "pasta.jsonl", data)
    out = tmp_path / "run"
    assert run(str(data), "-o", str(out)).exit_code == 0
    old_name = json.loads((out / "results.json").read_text())["results"][0]["dataset"]["name"]
    rows = data.read_text(encoding="utf-8").splitlines()
    data.write_text("\n".join(rows[:-1]) + "\n", encoding="utf-8")  # one question fewer
    again = run(str(data), "-o", str(out), "--resume")
    assert again.exit_code == 0, again.output
    assert "resuming: 0 of 13 tasks already finished" in again.stderr
    (found,) = json.loads((out / "results.json").read_text())["results"]
    assert found["dataset"]["name"] != old_name
    assert found["counts"]["scored"] == 13


def test_a_result_computed_with_other_settings_is_recomputed(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert run(str(EXAMPLES / "pasta-beir"), "-o", str(out)).exit_code == 0
    (batch,) = (out / "tasks").glob("*/*/batch-*.jsonl")  # retrieval alone: one batch
    lines = [json.loads(line) for line in batch.read_text().splitlines()]
    victim, error = (line["record"] for line in lines[:2])
    victim["fingerprint"] = "0" * 64  # as if written by other settings or an old revision
    victim["retrieval"]["metrics"]["ndcg@10"] = 0.123
    error["error"] = "RuntimeError: boom"
    batch.write_text("".join(json.dumps(line) + "\n" for line in lines))
    (out / "tasks" / ".lasagna-tmp-leftover").write_text("half a file")  # a killed writer's
    again = run(str(EXAMPLES / "pasta-beir"), "-o", str(out), "--resume")
    assert again.exit_code == 0, again.output
    assert "resuming: 5 of 7 tasks already finished" in again.stderr
    assert "removed 1 partial file(s)" in again.stderr
    found = records(out)
    assert found[victim["task"]["item"]]["fingerprint"] != "0" * 64
    assert found[error["task"]["item"]]["error"] is None
    assert not list(out.rglob(".lasagna-tmp-*"))


def test_a_run_killed_with_sigkill_loses_at_most_the_tasks_in_flight(
    tmp_path: Path, sigkill_when: Any
) -> None:
    out = tmp_path / "run"
    concurrency = 2
    env = dict(os.environ)
    env.pop("MODEL_NAME", None)
    with FakeLLMServer(reply="Not mentioned", latency=0.25) as server:
        env.update(
            OPENAI_BASE_URL=server.base_url,
            OPENAI_API_KEY="test",
            LASAGNA_CACHE_DIR=str(tmp_path / "cache"),
        )
        command = [
            str(LASAGNA),
            "benchmark",
            "run",
            str(EXAMPLES / "pasta.jsonl"),
            "--generator",
            "openai/fake",
            "--concurrency",
            str(concurrency),
            "-o",
            str(out),
        ]
        returncode = sigkill_when(command, lambda: len(task_files(out)) >= 4, env=env)
        assert returncode == -signal.SIGKILL
        survivors = task_files(out)
        assert 4 <= len(survivors) < 14
        for path in survivors:  # whole or absent: never half a result
            record = json.loads(path.read_text(encoding="utf-8"))
            assert record["error"] is None and record["generation"]["prediction"]
        calls_at_kill = server.calls

        resumed = subprocess.run(
            [*command, "--resume"], env=env, capture_output=True, text=True, timeout=120
        )
        assert resumed.returncode == 0, resumed.stderr
        assert f"resuming: {len(survivors)} of 14 tasks already finished" in resumed.stderr
        # Only unfinished tasks ask again; a call that finished before the kill is cached.
        assert server.calls - calls_at_kill <= 14 - len(survivors)
        assert server.calls <= 14 + concurrency
    assert len(task_files(out)) == 14
    assert not list(out.rglob(".lasagna-tmp-*"))
    (found,) = json.loads((out / "results.json").read_text())["results"]
    assert found["counts"]["scored"] == 14


def test_ctrl_c_stops_with_whole_files_and_says_how_to_resume(tmp_path: Path, spawn: Any) -> None:
    out = tmp_path / "run"
    env = dict(os.environ)
    env.pop("MODEL_NAME", None)
    with FakeLLMServer(reply="Not mentioned", latency=0.25) as server:
        env.update(
            OPENAI_BASE_URL=server.base_url,
            OPENAI_API_KEY="test",
            LASAGNA_CACHE_DIR=str(tmp_path / "cache"),
        )
        command = [
            str(LASAGNA), "benchmark", "run", str(EXAMPLES / "pasta.jsonl"),
            "--generator", "openai/fake", "--concurrency", "2", "-o", str(out),
        ]  # fmt: skip
        with spawn(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as child:
            deadline = time.monotonic() + 60
            while len(task_files(out)) < 4 and time.monotonic() < deadline:
                time.sleep(0.02)
            child.send_signal(signal.SIGINT)
            _, stderr = child.communicate(timeout=60)
        assert child.returncode == 130, stderr
        assert "Traceback" not in stderr
        assert f"interrupted: finished tasks are kept in {out / 'tasks'}" in stderr
        assert stderr.count("interrupted") == 1  # the command's line, not main()'s as well
        assert f"--resume -o {out}" in stderr
        survivors = task_files(out)
        assert 4 <= len(survivors) < 14
        for path in survivors:
            assert json.loads(path.read_text(encoding="utf-8"))["error"] is None
        assert not list(out.rglob(".lasagna-tmp-*"))
        assert not (out / "results.json").exists()
        resumed = subprocess.run(
            [*command, "--resume"], env=env, capture_output=True, text=True, timeout=120
        )
        assert resumed.returncode == 0, resumed.stderr
        assert f"resuming: {len(survivors)} of 14 tasks already finished" in resumed.stderr
    assert len(task_files(out)) == 14
