"""`--batch` at the wire: the fake server's OpenAI Batch API answers `judge grade`, a kill
while it polls resumes the same batch, failed items are called directly, and a model
without a batch API is refused in one line."""

from __future__ import annotations

import hashlib
import json
import math
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_cli.engine.reports import read_run
from lasagna_judge.testing import FakeLLMServer

LASAGNA = Path(sys.executable).with_name("lasagna")
ROWS = [
    {"id": i, "question": f"Capital number {i}?", "answers": "Paris", "prediction": f"City {i}"}
    for i in range(5)
]
REPLY = json.dumps({"reasoning": "fine", "score": 4})


def setup(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    env = {
        "OPENAI_API_KEY": "test",
        "LASAGNA_CACHE_DIR": str(tmp_path / "cache"),
        "MODEL_NAME": "",
        "OPENAI_BASE_URL": "",
        "LASAGNA_BATCH_POLL": "0.05",
    }
    return source, env


def grade(server: FakeLLMServer, source: Path, *extra: str) -> list[str]:
    model = ["--model", "openai/judge", "--base-url", server.base_url]
    return ["judge", "grade", str(source), *model, *extra]


def invoke(args: list[str], env: dict[str, str]) -> Any:
    return CliRunner().invoke(app, args, env=env, catch_exceptions=False)


def test_judge_grade_batch_prices_at_half_and_a_rerun_is_free(tmp_path: Path) -> None:
    source, env = setup(tmp_path)
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"openai/judge": [2.0, 8.0]}))
    out = tmp_path / "graded.jsonl"
    with FakeLLMServer(reply=REPLY) as server:
        server.batches.delay = 0.1
        args = grade(server, source, "--batch", "--out", str(out), "--prices", str(prices))
        result = invoke(args, env)
        assert result.exit_code == 0, result.output
        assert server.batches.created == 1 and server.calls == 0
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        assert [r["score"] for r in rows] == [4] * 5
        assert "batch: 5 requests, 0 from the cache, 5 through OpenAI's Batch API" in result.stdout
        price = next(line for line in result.stdout.splitlines() if line.startswith("batch price"))
        assert "(50% of the per-token price, $" in price
        spent = float(price.split("$", 1)[1].split(" ", 1)[0])
        full = float(price.rsplit("$", 1)[1].rstrip(")"))
        assert spent > 0 and abs(spent - full / 2) < 1e-4
        cost = next(line for line in result.stdout.splitlines() if line.startswith("cost:"))
        # The run paid the batch price, and every graded answer's tokens cost that much.
        assert cost == f"cost: ${spent:.4f} this run; ${spent:.4f} for all the tokens above"
        # Read back from the cache, the batch's answers are this run's, not the cache's.
        assert "(5 answers from the batch, 0 from the cache; this run: " in result.stdout
        assert all(r["batch"] is True and r["cached"] is False for r in rows)
        assert not list(tmp_path.glob("*.batch.json"))

        rerun = grade(server, source, "--out", str(out), "--prices", str(prices))
        again = invoke(rerun, env)  # no --batch: all cached
        assert again.exit_code == 0, again.output
        assert server.calls == 0 and server.batches.created == 1
        assert "(5 answers from the cache; this run: 0 calls, 0 in, 0 out)" in again.stdout
        assert f"cost: $0.0000 this run; ${spent:.4f} for all the tokens above" in again.stdout
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        assert all(r["batch"] is True and r["cached"] is True for r in rows)


def test_items_the_batch_could_not_answer_are_called_directly(tmp_path: Path) -> None:
    source, env = setup(tmp_path)
    with FakeLLMServer(reply=REPLY) as server:
        server.batches.fail = lambda body: "expired" if "number 2?" in json.dumps(body) else None
        result = invoke(grade(server, source, "--batch"), env)
        assert result.exit_code == 0, result.output
        assert server.batches.created == 1 and server.calls == 1
        assert "4 answered, 1 called directly (1 failed in the batch; first: batch_expired)" in (
            result.stderr
        )
        assert "(4 answers from the batch, 0 from the cache; this run: " in result.stderr
        rows = [json.loads(line) for line in result.stdout.splitlines()]
        assert [r["score"] for r in rows] == [4] * 5
        assert [r["batch"] for r in rows] == [True, True, False, True, True]


def test_a_batch_killed_while_polling_resumes_and_is_paid_once(
    tmp_path: Path, sigkill_when: Any
) -> None:
    source, env = setup(tmp_path)
    out = tmp_path / "graded.jsonl"
    state = tmp_path / "graded.jsonl.batch.json"
    full_env = {**os.environ, **env}
    with FakeLLMServer(reply=REPLY) as server:
        server.batches.delay = 3600.0  # still running when the kill comes
        command = [str(LASAGNA), *grade(server, source, "--batch", "--out", str(out))]
        code = sigkill_when(command, lambda: state.exists() and server.batches.polls >= 3,
                            env=full_env)  # fmt: skip
        assert code == -signal.SIGKILL
        batch_id = json.loads(state.read_text())["parts"][0]["batch_id"]
        assert server.batches.created == 1 and not out.exists()

        server.batches.delay = 0.0
        resumed = subprocess.run(command, env=full_env, capture_output=True, text=True, timeout=120)
        assert resumed.returncode == 0, resumed.stderr
        assert server.batches.created == 1 and server.calls == 0  # nothing new submitted
        assert f"through OpenAI's Batch API ({batch_id}, resumed): 5 answered" in resumed.stdout
        assert not state.exists()
        assert [json.loads(line)["score"] for line in out.read_text().splitlines()] == [4] * 5


def test_a_model_without_a_batch_api_is_refused_in_one_line(tmp_path: Path) -> None:
    source, env = setup(tmp_path)
    args = ["judge", "grade", str(source), "--model", "ollama/llama3.2", "--batch"]
    result = invoke(args, env)
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "error: --batch: ollama/llama3.2 has no batch API: batches go through OpenAI's Batch "
        "API (openai/ models) or Anthropic's Message Batches (anthropic/ models); run it "
        "without a batch; see 'lasagna judge grade --help'"
    ]
    no_cache = invoke(
        ["judge", "grade", str(source), "--model", "openai/judge", "--batch", "--no-cache"], env
    )
    assert no_cache.exit_code == 2 and "leave out --no-cache" in no_cache.stderr


# -- synthesize -----------------------------------------------------------------------------


def synth_reply(request: dict[str, Any]) -> str:
    user = request["messages"][-1]["content"]
    if "Write one" in user:  # a question of each prompt's own: a repeated one is dropped
        topic = hashlib.sha256(user.encode()).hexdigest()[:8]
        question = f"What does the harbour say about topic {topic}?"
        if "on the subject" in user:
            return json.dumps({"question": question})
        return json.dumps({"question": question, "answer": "a fact"})
    if "Reference answer:" in user:
        return json.dumps({"reason": "stated", "supported": "yes"})
    return json.dumps({"reason": "not stated", "answered": "no"})


def test_synthesize_batch_writes_then_checks_in_two_batches(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for i, topic in enumerate(["harbour", "lighthouse", "ferry"]):
        body = " ".join(f"{topic}{j}" for j in range(60))
        (docs / f"{topic}.md").write_text(f"The {topic} fact {i}. {body}", encoding="utf-8")
    _, env = setup(tmp_path)
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"openai/gen": [1.0, 4.0]}))
    out = tmp_path / "qa.jsonl"
    base = ["benchmark", "synthesize", str(docs), "--n", "6", "--model", "openai/gen",
            "--prices", str(prices), "--out", str(out)]  # fmt: skip
    dry = invoke([*base, "--dry-run", "--batch"], env)
    assert dry.exit_code == 0, dry.output
    cost = float(dry.stdout.split("Cost:       at most $", 1)[1].split(" ", 1)[0])
    batch = float(dry.stdout.split("Batch:      at most $", 1)[1].split(" ", 1)[0])
    assert abs(batch - cost / 2) < 1e-4 and "50% of the per-token price" in dry.stdout
    with FakeLLMServer(reply=synth_reply) as server:
        server.batches.fail = lambda body: "errored" if "ferry" in json.dumps(body) else None
        result = invoke([*base, "--base-url", server.base_url, "--batch"], env)
        assert result.exit_code == 0, result.output
        assert server.batches.created == 2  # the writes, then the checks of what they wrote
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        assert len(rows) == 6
        failed = sum("ferry" in json.dumps(body) for body in server.batches.requests)
        assert failed and server.calls == failed  # each failed item once, directly
        assert result.stdout.count("through OpenAI's Batch API") == 2
        assert "batch price: $" in result.stdout


# -- benchmark run ---------------------------------------------------------------------------

PASTA = Path(__file__).resolve().parents[2] / "examples" / "data" / "pasta.jsonl"


def run_reply(request: dict[str, Any]) -> str:
    return REPLY if request.get("tools") else "wide, flat pasta sheets"


def test_benchmark_run_batch_answers_then_grades_in_batches(tmp_path: Path) -> None:
    _, env = setup(tmp_path)
    out = tmp_path / "run"
    with FakeLLMServer(reply=run_reply) as server:
        models = ["--generator", "openai/gen", "--judge", "openai/judge"]
        args = ["benchmark", "run", str(PASTA), *models, "--base-url", server.base_url,
                "--batch", "-o", str(out)]  # fmt: skip
        result = invoke(args, env)
        assert result.exit_code == 0, result.output
        assert server.batches.created == 2  # the answers, then the grades of the answers
        assert server.calls == 0  # nothing failed: every call came from a batch
        assert result.stderr.count("through OpenAI's Batch API") == 2
        (found,) = json.loads((out / "results.json").read_text())["results"]
        assert found["counts"]["scored"] == 14
        assert not list(out.glob(".lasagna-batch-*.json"))
        again = invoke([*args[:-3], "--resume", "-o", str(out)], env)
        assert again.exit_code == 0 and server.batches.created == 2 and server.calls == 0


def test_benchmark_run_batch_costs_half_of_the_same_run_without_it(tmp_path: Path) -> None:
    _, env = setup(tmp_path)
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"openai/gen": [1.0, 4.0], "openai/judge": [2.0, 8.0]}))
    models = ["--generator", "openai/gen", "--judge", "openai/judge", "--prices", str(prices)]
    with FakeLLMServer(reply=run_reply) as server:
        base = ["benchmark", "run", str(PASTA), *models, "--base-url", server.base_url]
        batched = invoke([*base, "--batch", "-o", str(tmp_path / "batched")], env)
        assert batched.exit_code == 0, batched.output
        assert server.batches.created == 2 and server.calls == 0
        direct_env = {**env, "LASAGNA_CACHE_DIR": str(tmp_path / "direct-cache")}
        direct = invoke([*base, "-o", str(tmp_path / "direct")], direct_env)
        assert direct.exit_code == 0, direct.output
        assert server.calls == 28  # 14 answers and their 14 grades, each called directly
    (half,) = json.loads((tmp_path / "batched" / "results.json").read_text())["results"]
    (full,) = json.loads((tmp_path / "direct" / "results.json").read_text())["results"]
    tokens = ("input_tokens", "output_tokens", "judge_input_tokens", "judge_output_tokens")
    assert [half["usage"][k] for k in tokens] == [full["usage"][k] for k in tokens]
    assert full["usage"]["cost_usd"] > 0
    assert half["usage"]["cost_usd"] == full["usage"]["cost_usd"] / 2  # the batch price
    record = json.loads(next((tmp_path / "batched" / "tasks").rglob("q01.json")).read_text())
    assert record["generation"]["batch"] is True and record["generation"]["judge"]["batch"]
    assert f"${half['usage']['cost_usd']:.4f}" in batched.stdout.split("cost (answers", 1)[1]
    # The views reprice from the records: the export's costs are the batch's too.
    for run, usage in (("batched", half["usage"]), ("direct", full["usage"])):
        exported = invoke(["benchmark", "export", str(tmp_path / run), "--format", "jsonl"], env)
        rows = [json.loads(line) for line in exported.stdout.splitlines()]
        assert math.fsum(r["generation.cost_usd"] for r in rows) == pytest.approx(
            usage["cost_usd"], rel=1e-12
        )


def test_benchmark_run_batch_refuses_a_model_without_a_batch_api(tmp_path: Path) -> None:
    _, env = setup(tmp_path)
    args = ["benchmark", "run", str(PASTA), "--generator", "ollama/llama3.2", "--batch",
            "-o", str(tmp_path / "run")]  # fmt: skip
    result = invoke(args, env)
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "error: --batch: ollama/llama3.2 has no batch API: batches go through OpenAI's Batch "
        "API (openai/ models) or Anthropic's Message Batches (anthropic/ models); run it "
        "without --batch; see 'lasagna benchmark run --help'"
    ]


# -- benchmark sweep -------------------------------------------------------------------------


def test_benchmark_sweep_batch_answers_every_task_through_batches(tmp_path: Path) -> None:
    from tests.cli.test_sweep import answer, make_files, result_files, sweep

    with FakeLLMServer(reply=answer) as server:
        paths = make_files(tmp_path, server.base_url)
        env = {"LASAGNA_BATCH_POLL": "0.05", "LASAGNA_CACHE_DIR": str(tmp_path / "c")}
        result = sweep(paths, "--batch", env=env)
        assert result.exit_code == 0, result.output
        assert server.batches.created == 2 and server.calls == 0  # one batch per model
        assert len(result_files(paths["out"])) == 7
        assert result.stderr.count("through OpenAI's Batch API") == 2


def test_benchmark_sweep_batch_costs_half_of_the_same_sweep_without_it(tmp_path: Path) -> None:
    from tests.cli.test_sweep import answer, make_files, sweep

    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"model-short": [1.0, 4.0], "model-quiz": [2.0, 8.0]}))
    costs = []
    with FakeLLMServer(reply=answer) as server:
        for name, extra in (("batched", ["--batch"]), ("direct", [])):
            paths = make_files(tmp_path / name, server.base_url)
            env = {"LASAGNA_BATCH_POLL": "0.05", "LASAGNA_CACHE_DIR": str(tmp_path / name / "c")}
            result = sweep(paths, *extra, "--prices", str(prices), env=env)
            assert result.exit_code == 0, result.output
            # The report's reading of the result files, with the table kept beside them.
            found = read_run(paths["out"], datasets=paths["datasets"], texts=False).results
            costs.append({(r["dataset"]["name"], r["setup"]["name"]): r["usage"] for r in found})
        assert server.batches.created == 2 and server.calls == 7  # the direct sweep's calls
    half, full = costs
    assert len(full) == 3 and all(u["cost_usd"] > 0 for u in full.values())
    for key, usage in full.items():
        assert half[key]["input_tokens"] == usage["input_tokens"]
        assert half[key]["cost_usd"] == usage["cost_usd"] / 2  # the batch price


def test_benchmark_run_dry_run_shows_the_batch_price(tmp_path: Path) -> None:
    _, env = setup(tmp_path)
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"openai/gen": [1.0, 4.0], "openai/judge": [2.0, 8.0]}))
    args = ["benchmark", "run", str(PASTA), "--generator", "openai/gen", "--judge",
            "openai/judge", "--dry-run", "--prices", str(prices)]  # fmt: skip
    result = invoke(args, env)
    assert result.exit_code == 0, result.output
    most = float(result.stdout.split("cost at most: $", 1)[1].split()[0])
    batch = float(result.stdout.split("with --batch: at most $", 1)[1].split()[0])
    assert most > 0 and abs(batch - most / 2) < 1e-4
    assert "(the batch price: 50% of the per-token price)" in result.stdout


def test_a_batch_left_running_is_cancelled_from_the_command_line(
    tmp_path: Path, sigkill_when: Any
) -> None:
    source, env = setup(tmp_path)
    out = tmp_path / "graded.jsonl"
    state = tmp_path / "graded.jsonl.batch.json"
    full_env = {**os.environ, **env}
    with FakeLLMServer(reply=REPLY) as server:
        server.batches.delay = 3600.0  # it would run for an hour
        command = [str(LASAGNA), *grade(server, source, "--batch", "--out", str(out))]
        code = sigkill_when(command, lambda: state.exists() and server.batches.polls >= 2,
                            env=full_env)  # fmt: skip
        assert code == -signal.SIGKILL
        env["OPENAI_BASE_URL"] = ""
        result = invoke(["judge", "cancel-batch", str(state)], env)
        assert result.exit_code == 0, result.output
        batch_id = json.loads(state.read_text())["parts"][0]["batch_id"]
        assert result.stdout == f"batch {batch_id} of openai/judge: cancelled\n"
        assert "run the same command again to collect it" in result.stderr
        resumed = subprocess.run(command, env=full_env, capture_output=True, text=True, timeout=120)
        assert resumed.returncode == 0, resumed.stderr
        assert server.batches.created == 1 and server.calls == 5  # the rest, directly
        assert not state.exists()


def test_cancel_batch_without_a_state_file_is_one_usage_line(tmp_path: Path) -> None:
    _, env = setup(tmp_path)
    result = invoke(["judge", "cancel-batch", str(tmp_path / "none.json")], env)
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "expected the state file of a --batch job" in (
        result.stderr
    )
