"""A command under test against the fake server: the environment it runs in, and
`benchmark ...` invoked in it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_judge.testing import FakeLLMServer


def fake_env(
    tmp_path: Path, server: FakeLLMServer, *, key: str = "sk-test", cache: str = "cache"
) -> dict[str, str]:
    """The server as OpenAI's endpoint, with a key; a model cache of the test's own; no
    MODEL_NAME (which would name the model for every role)."""
    return {
        "OPENAI_BASE_URL": server.base_url,
        "OPENAI_API_KEY": key,
        "LASAGNA_CACHE_DIR": str(tmp_path / cache),
        "MODEL_NAME": "",
    }


def run_benchmark(tmp_path: Path, server: FakeLLMServer, *args: str, cache: str = "cache") -> Any:
    """`lasagna benchmark ARGS` in `fake_env`."""
    return CliRunner().invoke(
        app, ["benchmark", *args], env=fake_env(tmp_path, server, cache=cache)
    )
