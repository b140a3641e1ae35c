"""The Python API of lasagna-cli: what `__all__` says, light to import, and a run from a
script or a notebook gives what `lasagna benchmark run` gives."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import lasagna_cli
from lasagna_cli._app import app
from lasagna_judge.testing import FakeLLMServer

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "data"

PUBLIC = sorted(
    [
        "__version__",
        # running
        "run_benchmark",
        "arun_benchmark",
        "Executor",
        "LocalExecutor",
        "RayExecutor",
        "Outcome",
        # the configuration
        "RunConfig",
        "BenchmarkEntry",
        "Setup",
        "RetrieverSpec",
        "ModelSpec",
        "ProviderSpec",
        "PromptSpec",
        "DatabaseSpec",
        # results
        "load_results",
        "Results",
        "BenchmarkResult",
        "MetricSummary",
        "QueryResult",
        # the user's system
        "System",
        "SystemReply",
        "SystemResult",
        "SystemSpec",
        "Row",
        "RetrievedItem",
        # public benchmarks
        "BenchmarkAdapter",
        "register_benchmark",
        # errors
        "EngineError",
        "EngineUsageError",
    ]
)


def test_all_is_pinned_and_every_name_exists() -> None:
    assert sorted(lasagna_cli.__all__) == PUBLIC
    for name in lasagna_cli.__all__:
        assert getattr(lasagna_cli, name) is not None, name
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        lasagna_cli.nope  # noqa: B018


def test_importing_the_package_loads_no_engine_or_model_stack() -> None:
    code = (
        "import sys, lasagna_cli; "
        "print(sorted(m for m in sys.modules if m.startswith(('lasagna_cli.engine', "
        "'lasagna_judge', 'numpy', 'typer'))))"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert found.stdout.strip() == "[]", found.stderr


def test_the_command_line_starts_without_asyncio_ssl_or_package_metadata() -> None:
    # 10 MB and 25 ms of every command's start (a dry run's memory goal): loaded when used.
    code = (
        "import sys, lasagna_cli._app, lasagna_synth; "
        "print(sorted(m for m in ('asyncio', 'ssl', 'importlib.metadata') if m in sys.modules))"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert found.stdout.strip() == "[]", found.stderr
    from importlib.metadata import version

    assert lasagna_cli.__version__ == version("lasagna-cli")


def test_a_run_from_python_equals_the_command_and_loads_back(tmp_path: Path) -> None:
    from lasagna_cli import load_results, run_benchmark

    results = run_benchmark(EXAMPLES / "pasta.jsonl", tmp_path / "api")
    command = CliRunner().invoke(
        app, ["benchmark", "run", str(EXAMPLES / "pasta.jsonl"), "-o", str(tmp_path / "cli")]
    )
    assert command.exit_code == 0, command.output
    assert (tmp_path / "api" / "results.json").read_bytes() == (
        tmp_path / "cli" / "results.json"
    ).read_bytes()
    (only,) = results
    assert only.setup == "bm25-k5" and only.dataset.startswith("local/pasta@")
    assert only.metric("retrieval", "ndcg@10").mean == 1.0
    assert only.counts["scored"] == 14 and len(only.per_query) == 14
    assert results.get(setup="bm25-k5") is only
    loaded = load_results(tmp_path / "cli")
    assert loaded.get(dataset="local/pasta").metric("retrieval", "mrr") == only.metric(
        "retrieval", "mrr"
    )
    with pytest.raises(KeyError, match="retrieval/ndcg@10"):
        only.metric("generation", "f1")


def test_a_run_inside_a_running_event_loop(tmp_path: Path) -> None:
    from lasagna_cli import run_benchmark

    async def notebook_cell() -> Any:
        return run_benchmark(EXAMPLES / "sweep.yaml", tmp_path / "run")

    results = asyncio.run(notebook_cell())
    assert {r.setup for r in results} == {"bm25-k1", "bm25-k5", "bm25-k5-no-stemming"}


def test_llm_objects_answer_and_are_left_open(tmp_path: Path) -> None:
    from lasagna_cli import arun_benchmark
    from lasagna_judge import make_llm

    with FakeLLMServer(reply="Not mentioned") as server:

        async def main() -> Any:
            llm = make_llm("openai/gen", base_url=server.base_url, api_key="k", cache=False)
            try:
                found = await arun_benchmark(
                    EXAMPLES / "pasta.jsonl",
                    tmp_path / "run",
                    llms={"openai/gen": llm},
                    generator="openai/gen",
                )
                await llm.complete([{"role": "user", "content": "still open?"}])
                return found
            finally:
                await llm.aclose()

        results = asyncio.run(main())
    generation = results.get().metric("generation", "no_answer_accuracy")
    assert generation.mean == 1.0  # the unanswerable rows were refused: right answers
    assert server.calls == 14 + 1


def test_a_model_without_an_llm_object_is_one_clear_error(tmp_path: Path) -> None:
    from lasagna_cli import EngineUsageError, RunConfig, run_benchmark
    from lasagna_cli.engine.config._flags import Flags, config_from_path

    config = config_from_path(str(EXAMPLES / "pasta.jsonl"), Flags(generator="openai/gen"))
    assert isinstance(config, RunConfig)
    with pytest.raises(EngineUsageError, match=r"pass llms=\{'openai/gen'"):
        run_benchmark(config, tmp_path / "run")
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["config"]["setups"][0]["generator"] == "openai/gen"
