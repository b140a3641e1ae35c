"""`lasagna benchmark run --system http://...` against a real, slow and flaky HTTP system on
127.0.0.1: injected latency, 500s, 429s with Retry-After, timeouts, bad replies."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_synth import load_data

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "data"
PASTA = load_data(EXAMPLES / "pasta.jsonl")
ROWS = {row.id: row for row in PASTA.rows()}

# What the system does for one request: (status, body or None, seconds to wait, headers).
Behaviour = Callable[[str, int], tuple[int, Any, float, dict[str, str]]]


def right(row_id: str) -> dict[str, Any]:
    row = ROWS[row_id]
    return {
        "answer": row.answers[0] if row.answers else "Not mentioned",
        "retrieved": [*row.contexts, "An unrelated passage."],
    }


class FlakySystem:
    """A threaded HTTP server whose replies per question id are scripted by `behaviour`
    (given the id and the attempt number, from 1). Records every request."""

    def __init__(self, behaviour: Behaviour) -> None:
        self.behaviour = behaviour
        self.attempts: dict[str, list[float]] = defaultdict(list)
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        system = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                row_id = body["id"]
                with system.lock:
                    system.bodies.append(body)
                    system.headers.append(dict(self.headers))
                    system.attempts[row_id].append(time.monotonic())
                    attempt = len(system.attempts[row_id])
                    system.in_flight += 1
                    system.max_in_flight = max(system.max_in_flight, system.in_flight)
                try:
                    status, reply, delay, headers = system.behaviour(row_id, attempt)
                    system.stopping.wait(delay)
                    data = reply if isinstance(reply, bytes) else json.dumps(reply).encode()
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                finally:
                    with system.lock:
                        system.in_flight -= 1

            def log_message(self, format: str, *args: Any) -> None:
                return

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                return  # the client gave up (a timeout): nothing to report

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/answer"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FlakySystem:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


def ok(row_id: str, latency: float = 0.0) -> tuple[int, Any, float, dict[str, str]]:
    return 200, right(row_id), latency, {}


def flaky(row_id: str, attempt: int) -> tuple[int, Any, float, dict[str, str]]:
    if row_id == "q04":
        return 500, {"error": "index shard lost"}, 0.0, {}
    if row_id == "q06" and attempt == 1:
        return 503, {"error": "warming up"}, 0.0, {}
    if row_id == "q08" and attempt == 1:
        return 429, {"error": "slow down"}, 0.0, {"Retry-After": "0.3"}
    if row_id == "q09":
        return 200, right(row_id), 3.0, {}  # past every attempt's timeout
    if row_id == "q10" and attempt == 1:
        return 200, right(row_id), 3.0, {}  # one timeout, then fine
    return ok(row_id, latency=0.15)


def run(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(app, ["benchmark", "run", *args], env=env)


def results_of(out: Path) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads((out / "results.json").read_text())["results"]
    return found


@pytest.fixture
def flaky_system() -> Iterator[FlakySystem]:
    with FlakySystem(flaky) as system:
        yield system


def test_a_slow_flaky_system_fails_per_item_and_is_never_scored_as_wrong(
    flaky_system: FlakySystem, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    started = time.monotonic()
    result = run(
        str(EXAMPLES / "pasta.jsonl"),
        "--system",
        flaky_system.url,
        "--system-timeout",
        "0.5",
        "--system-retries",
        "2",
        "--concurrency",
        "6",
        "-o",
        str(out),
    )
    elapsed = time.monotonic() - started
    assert result.exit_code == 1, result.output  # two questions failed: the run says so
    assert "2 task(s) failed and are not scored" in result.stderr
    (found,) = results_of(out)
    assert found["counts"] == {
        "questions": 14,
        "scored": 12,
        "failed": 2,
        "not_run": 0,
        "missing": 0,
    }
    by_id = {q["id"]: q for q in found["per_query"]}
    assert by_id["q04"]["status"] == "failed"
    assert by_id["q04"]["error"] == (
        f'SystemFailure: {flaky_system.url}: HTTP 500: {{"error": "index shard lost"}} '
        "(after 3 attempts)"
    )
    assert by_id["q09"]["error"] == (
        f"SystemFailure: {flaky_system.url}: no reply within 0.5 s (after 3 attempts)"
    )
    for recovered in ("q06", "q08", "q10"):
        assert by_id[recovered]["status"] == "scored"
    # Retries: 3 attempts for the lost causes, 2 for those that recovered.
    attempts = {row_id: len(times) for row_id, times in flaky_system.attempts.items()}
    assert attempts["q04"] == attempts["q09"] == 3
    assert attempts["q06"] == attempts["q08"] == attempts["q10"] == 2
    assert attempts["q01"] == attempts["q14"] == 1
    first, second = flaky_system.attempts["q08"]
    assert second - first >= 0.3  # Retry-After honoured
    # Every scored answer and ranking is right, so the failures were left out, not zeroed.
    metrics = found["metrics"]
    assert metrics["generation"]["exact_match"]["mean"] == 1.0
    assert metrics["generation"]["exact_match"]["count"] == 12
    assert metrics["retrieval"]["ndcg@10"]["mean"] == 1.0
    assert metrics["retrieval"]["ndcg@10"]["count"] == 10  # less the two unanswerable rows
    # Concurrency: requests overlapped, never more than asked.
    assert 2 <= flaky_system.max_in_flight <= 6
    assert elapsed < 14 * 0.15 + 2 * 1.5 + 1.5  # far from one question at a time
    # The contract: what was posted, and how.
    assert flaky_system.bodies[0] == {"question": ROWS["q01"].question, "id": "q01", "top_k": 5}
    assert all(h["Content-Type"] == "application/json" for h in flaky_system.headers)
    assert found["setup"]["system"] == {
        "kind": "http",
        "url": flaky_system.url,
        "timeout_s": 0.5,
        "retries": 2,
        "headers": [],
        "adapter": "http",
    }
    # The leaderboard shows the failures.
    assert "failed" in result.stdout


def test_resume_asks_again_only_what_failed(flaky_system: FlakySystem, tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = [str(EXAMPLES / "pasta.jsonl"), "--system", flaky_system.url, "-o", str(out)]
    timing = ["--system-timeout", "0.5", "--system-retries", "0"]
    assert run(*args, *timing).exit_code == 1
    before = {k: len(v) for k, v in flaky_system.attempts.items()}
    flaky_system.behaviour = lambda row_id, attempt: ok(row_id)  # fixed
    again = run(*args, *timing, "--resume")
    assert again.exit_code == 0, again.output
    after = {k: len(v) for k, v in flaky_system.attempts.items()}
    asked_again = sorted(k for k in after if after[k] > before.get(k, 0))
    # Without retries, five failed the first time; the probe asks q01 once more.
    assert asked_again == ["q01", "q04", "q06", "q08", "q09", "q10"]
    (found,) = results_of(out)
    assert found["counts"]["scored"] == 14
    assert found["metrics"]["generation"]["exact_match"]["mean"] == 1.0


def test_client_errors_are_not_retried_and_bad_bodies_are_recorded(tmp_path: Path) -> None:
    def behaviour(row_id: str, attempt: int) -> tuple[int, Any, float, dict[str, str]]:
        if row_id == "q05":
            return 422, {"detail": "question too long"}, 0.0, {}
        if row_id == "q07":
            return 200, b"<html>oops</html>", 0.0, {}
        if row_id == "q11":
            return 200, {"anwser": "x"}, 0.0, {}
        return ok(row_id)

    with FlakySystem(behaviour) as system:
        out = tmp_path / "run"
        result = run(str(EXAMPLES / "pasta.jsonl"), "--system", system.url, "-o", str(out))
        assert result.exit_code == 1
        assert len(system.attempts["q05"]) == 1 and len(system.attempts["q07"]) == 1
    (found,) = results_of(out)
    by_id = {q["id"]: q for q in found["per_query"]}
    assert by_id["q05"]["error"] == (
        f'SystemFailure: HTTP 422 from {system.url}: {{"detail": "question too long"}}'
    )
    assert "replied 200 with a body that is not JSON: '<html>oops</html>'" in by_id["q07"]["error"]
    assert 'without "answer" or "retrieved" (keys: "anwser")' in by_id["q11"]["error"]
    assert found["counts"]["failed"] == 3 and found["counts"]["scored"] == 11


def test_headers_are_sent_and_never_recorded(tmp_path: Path) -> None:
    token = "tok-very-secret-42"
    with FlakySystem(lambda row_id, attempt: ok(row_id)) as system:
        out = tmp_path / "run"
        result = run(
            str(EXAMPLES / "pasta.jsonl"),
            "--system",
            system.url + "?api_key=" + token,
            "--system-header",
            "Authorization: Bearer ${RAG_TOKEN}",
            "-o",
            str(out),
            env={"RAG_TOKEN": token},
        )
        assert result.exit_code == 0, result.output
        assert {h["Authorization"] for h in system.headers} == {f"Bearer {token}"}
    for path in out.rglob("*"):
        if path.is_file():
            assert token not in path.read_text(encoding="utf-8"), path
    assert token not in result.output
    (found,) = results_of(out)
    assert found["setup"]["system"]["url"] == system.url + "?api_key=***"
    assert found["setup"]["system"]["headers"] == ["Authorization"]


def test_header_values_a_server_quotes_back_are_redacted_in_every_error(
    tmp_path: Path,
) -> None:
    token = "tok-very-secret-42"

    def echo(row_id: str, attempt: int) -> tuple[int, Any, float, dict[str, str]]:
        if row_id == "q02":  # a 5xx after every retry, quoting the token alone
            return 500, {"error": f"upstream refused token {token}"}, 0.0, {}
        if row_id == "q05":  # a reply that is not JSON, quoting the whole header
            return 200, f"<html>Bearer {token} X-Team: pasta-lab</html>".encode(), 0.0, {}
        if row_id == "q01":
            return 401, {"error": f"invalid credentials: Bearer {token}"}, 0.0, {}
        return ok(row_id)

    with FlakySystem(echo) as system:
        out = tmp_path / "run"
        result = run(
            str(EXAMPLES / "pasta.jsonl"),
            "--system", system.url, "--system-retries", "0",
            "--system-header", "Authorization: Bearer ${RAG_TOKEN}",
            "--system-header", "X-Team: pasta-lab",
            "-o", str(out),
            env={"RAG_TOKEN": token},
        )  # fmt: skip
    assert result.exit_code == 1, result.output
    assert token not in result.output and "pasta-lab" not in result.output
    written = [p.read_text(encoding="utf-8") for p in out.rglob("*") if p.is_file()]
    assert not any(token in text or "pasta-lab" in text for text in written)
    (found,) = results_of(out)
    errors = {q["id"]: q["error"] for q in found["per_query"] if q.get("error")}
    assert "invalid credentials: ***" in errors["q01"]  # the whole value hidden
    assert "upstream refused token ***" in errors["q02"]
    assert "<html>*** X-Team: ***</html>" in errors["q05"]


def test_a_system_that_is_not_running_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    out = tmp_path / "run"
    result = run(
        str(EXAMPLES / "pasta.jsonl"),
        "--system",
        f"http://127.0.0.1:{port}/answer",
        "--system-retries",
        "0",
        "-o",
        str(out),
    )
    assert result.exit_code == 1
    assert "failed on each of the first 3 questions" in result.stderr
    assert "cannot reach the endpoint" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_the_example_server_serves_the_contract(tmp_path: Path, spawn: Any) -> None:
    """examples/systems/http_server.py, started as docs/how-to/own-system.md says, benchmarked."""
    import subprocess
    import sys

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = spawn(
        [
            sys.executable,
            str(ROOT / "examples" / "systems" / "http_server.py"),
            "--port",
            str(port),
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert server.stdout is not None
        assert "serving on" in server.stdout.readline()
        out = tmp_path / "run"
        result = run(
            str(EXAMPLES / "pasta.jsonl"),
            "--system",
            f"http://127.0.0.1:{port}/answer",
            "-o",
            str(out),
        )
        assert result.exit_code == 0, result.output
    finally:
        server.terminate()
        server.wait(timeout=10)
        if server.stdout is not None:
            server.stdout.close()
    (found,) = results_of(out)
    assert found["setup"]["tracks"] == ["retrieval", "generation"]
    assert found["metrics"]["retrieval"]["hit_rate@5"]["mean"] == 1.0  # texts matched to ids
