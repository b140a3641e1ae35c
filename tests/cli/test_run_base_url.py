"""`benchmark run --base-url`: the server of --generator and --judge, as `judge grade` and
`synthesize` take it, recorded in the results; refused where no model calls a server."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_judge.testing import FakeLLMServer

PASTA = Path(__file__).resolve().parents[2] / "examples" / "data" / "pasta.jsonl"
GRADE = json.dumps({"reasoning": "compared", "score": 1})


def _env(tmp_path: Path) -> dict[str, str]:
    # No OPENAI_BASE_URL and no key: the flag alone names the server.
    return {
        "OPENAI_BASE_URL": "",
        "OPENAI_API_KEY": "",
        "LASAGNA_CACHE_DIR": str(tmp_path / "cache"),
        "MODEL_NAME": "",
    }


def _run(tmp_path: Path, *args: str) -> object:
    return CliRunner().invoke(app, ["benchmark", "run", str(PASTA), *args], env=_env(tmp_path))


def test_generator_and_judge_go_to_the_server_the_flag_names(tmp_path: Path) -> None:
    def reply(request: dict[str, object]) -> str:
        return GRADE if "Answer to grade:" in json.dumps(request) else "Not mentioned"

    out = tmp_path / "run"
    with FakeLLMServer(reply=reply) as server:
        result = _run(
            tmp_path,
            "--generator", "openai/served", "--judge", "openai/served-judge",
            "--base-url", server.base_url, "-n", "3", "-o", str(out),
        )  # fmt: skip
        assert result.exit_code == 0, result.output  # type: ignore[attr-defined]
        models = {r["model"] for r in server.requests}
    assert models == {"served", "served-judge"}
    text = (out / "results.json").read_text(encoding="utf-8")
    assert f"127.0.0.1:{server.port}" in text  # the server is recorded, so runs stay apart


def test_a_base_url_no_model_uses_is_refused(tmp_path: Path) -> None:
    result = _run(tmp_path, "--generator", "local/smollm2", "--base-url", "http://127.0.0.1:9/v1")
    assert result.exit_code == 2  # type: ignore[attr-defined]
    said = result.output  # type: ignore[attr-defined]
    assert "--base-url is the server of --generator or --judge" in said
    assert "local/smollm2" in said and "Traceback" not in said
    result = _run(tmp_path, "--base-url", "http://127.0.0.1:9/v1")
    assert result.exit_code == 2 and "neither is given" in result.output  # type: ignore[attr-defined]
