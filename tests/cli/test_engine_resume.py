"""The one resume rule, through the doors: changed settings redo exactly what they affect.

- A changed judge regrades the answers a run has; no answer is asked for again.
- A kag sweep resumed with --continue redoes the tasks of a setup whose settings changed and
  keeps the others' result files as they are; a result file kag itself wrote (no
  fingerprint) is kept as kag keeps it.
- `stats` reads a run folder of `benchmark run` (no DATASETS.json needed).
- An HTTP system's 409 is retried, as every model call's is (one retry helper).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_judge.testing import FakeLLMServer

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "data"


def invoke(args: list[str], env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(app, args, env=env or {}, catch_exceptions=False)


def judged(request: dict[str, Any]) -> bool:
    return "Answer to grade:" in json.dumps(request["messages"])


def reply(request: dict[str, Any]) -> str:
    if judged(request):
        return json.dumps({"reasoning": "compared", "score": 4})
    return "Not mentioned"


def test_a_changed_judge_regrades_without_asking_for_the_answers_again(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeLLMServer(reply=reply) as server:
        env = {
            "OPENAI_API_KEY": "k",
            "OPENAI_BASE_URL": server.base_url,
            "LASAGNA_CACHE_DIR": str(tmp_path / "cache"),
        }
        args = ["benchmark", "run", str(EXAMPLES / "pasta.jsonl"), "--generator", "openai/gen",
                "-o", str(out)]  # fmt: skip
        first = invoke([*args, "--judge", "openai/judge-a"], env)
        assert first.exit_code == 0, first.output
        asked = [r for r in server.requests if not judged(r)]
        assert len(asked) == 14
        server.requests.clear()
        second = invoke([*args, "--judge", "openai/judge-b", "--resume"], env)
        assert second.exit_code == 0, second.output
        assert [r for r in server.requests if not judged(r)] == []  # no answer asked again
        grades = [r for r in server.requests if judged(r)]
        assert grades and all(r["model"] == "judge-b" for r in grades)
    (result,) = json.loads((out / "results.json").read_text())["results"]
    assert result["held_fixed"]["judge"]["model"] == "openai/judge-b"
    assert result["counts"]["scored"] == 14
    assert result["metrics"]["generation"]["judge_status"]["ok"] > 0


KAG_SETUPS = """\
[short]
provider = "fake"
model = "m"
prompt = "{prompt}"

[long]
provider = "fake"
model = "m"
tokens = 64
"""


def test_kag_continue_redoes_only_the_setup_whose_settings_changed(tmp_path: Path) -> None:
    datasets = {"facts": {"q1": {"input": "Who?", "output": "Ada"}, "q2": {"input": "When?"}}}
    (tmp_path / "datasets.json").write_text(json.dumps(datasets))
    with FakeLLMServer(reply="Ada") as server:
        (tmp_path / "config.toml").write_text(
            f'[providers.fake]\napi = "openai"\nbase_url = "{server.base_url}"\n'
        )
        setups = tmp_path / "setups.toml"
        setups.write_text(KAG_SETUPS.format(prompt="{{INPUT}}"))
        out = tmp_path / "out"
        args = ["benchmark", "sweep", "-d", str(tmp_path / "datasets.json"), "-b", str(setups),
                "-o", str(out)]  # fmt: skip
        assert invoke(args).exit_code == 0
        assert server.calls == 4
        kept = out / "facts" / "q1" / "long.json"
        before = kept.stat().st_mtime_ns
        # kag's own file (no fingerprint) for a question: kept as kag keeps it.
        legacy = out / "facts" / "q2" / "long.json"
        legacy.write_text('{"ok": {"result": "from kag", "stats": {}}}')
        setups.write_text(KAG_SETUPS.format(prompt="Answer: {{INPUT}}"))
        resumed = invoke([*args, "--continue"])
        assert resumed.exit_code == 0, resumed.output
        assert server.calls == 6  # the two tasks of `short`, whose prompt changed
        assert "2 done, 0 failed, 2 skipped of 4 tasks" in resumed.output
        assert kept.stat().st_mtime_ns == before
        assert json.loads(legacy.read_text())["ok"]["result"] == "from kag"
        short = json.loads((out / "facts" / "q1" / "short.json").read_text())
        assert short["ok"]["stats"]["setup"]["prompt"] == "Answer: {{INPUT}}"
        assert len(short["ok"]["stats"]["fingerprint"]) == 64
        # The same with --parallel and --resume, kag's and lasagna's names for them.
        again = invoke([*args, "--resume", "--parallel", "2"])
        assert again.exit_code == 0 and server.calls == 6
        assert "nothing to do: all 4 results exist" in again.output


def test_stats_reads_a_run_folder(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeLLMServer(reply="Not mentioned") as server:
        env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.base_url,
               "LASAGNA_CACHE_DIR": str(tmp_path / "cache")}  # fmt: skip
        ran = invoke(["benchmark", "run", str(EXAMPLES / "pasta.jsonl"), "--generator",
                      "openai/gen", "-o", str(out)], env)  # fmt: skip
        assert ran.exit_code == 0, ran.output
    report = invoke(["benchmark", "stats", "--results", str(out), "--format", "json"])
    assert report.exit_code == 0, report.output
    payload = json.loads(report.stdout)
    assert payload["setups"] == []  # no MCQ question: nothing kag grades
    ((setup, row),) = payload["lasagna"]["setups"].items()
    assert setup == "bm25-k5+openai-gen"
    overall = row["overall"]
    assert overall["missing"] == 0 and overall["free_form"]["errors"] == 0
    # Two unanswerable rows refused (right), twelve answerable ones refused (wrong): EM 2/14.
    assert overall["free_form"]["scored"] == 14
    assert overall["free_form"]["em"] == 2 / 14
    text = invoke(["benchmark", "stats", "--results", str(out)])
    assert text.exit_code == 0 and "bm25-k5+openai-gen" in text.stdout
    empty = invoke(["benchmark", "stats", "--results", str(tmp_path)])
    assert empty.exit_code == 2 and "run folder" in empty.output


def test_an_http_system_retries_a_409(tmp_path: Path) -> None:
    import http.server
    import threading

    seen: dict[str, int] = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen[body["id"]] = seen.get(body["id"], 0) + 1
            status, reply = 200, {"answer": "Not mentioned"}
            if body["id"] == "q02" and seen[body["id"]] == 1:
                status, reply = 409, {"error": "conflict"}
            data = json.dumps(reply).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            return None

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/answer"
        result = invoke(["benchmark", "run", str(EXAMPLES / "pasta.jsonl"), "--system", url,
                         "-o", str(tmp_path / "run")])  # fmt: skip
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert result.exit_code == 0, result.output
    assert seen["q02"] == 2  # the 409, then the answer
    (found,) = json.loads((tmp_path / "run" / "results.json").read_text())["results"]
    assert found["counts"]["failed"] == 0
