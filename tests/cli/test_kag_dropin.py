"""kag's `benchmark` command lines, example files and defaults, unchanged, on `lasagna
benchmark sweep` against the fake OpenAI-compatible server (the example's `ollama`
provider is pointed at it by OLLAMA_BASE_URL, as a user points it at their own Ollama)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_judge.testing import FakeLLMServer
from lasagna_synth import TEMP_PREFIX

KAG = Path(__file__).parent / "fixtures" / "kag"
SETUP = "qwen35-9b-ollama-native"

# The two command lines of kag's document, with `kag benchmark` spelled `lasagna benchmark
# sweep`.
FIRST = [
    "--datasets", "examples/dataset/dataset.sample.json",
    "--benchmark", "examples/config/benchmark.sample.toml",
    "--parallel", "4",
    "--output", "./results",
]  # fmt: skip
RESUMED = [
    "--datasets", "examples/dataset/dataset.sample.json",
    "--benchmark", "examples/config/benchmark.sample.toml",
    "--output", "./results",
    "--prefix", "run1-",
    "--continue",
]  # fmt: skip


@pytest.fixture
def requests() -> list[dict[str, Any]]:
    return []


@pytest.fixture
def server(requests: list[dict[str, Any]]) -> Any:
    def reply(request: dict[str, Any]) -> str:
        requests.append(request)
        return "b" if "scurvy" in str(request["messages"]) else "By ACR/EULAR criteria; joints."

    with FakeLLMServer(reply=reply) as fake:
        yield fake


@pytest.fixture
def kag_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory laid out as kag's repository: examples/{dataset,config,prompt}."""
    folder = tmp_path / "kag"
    shutil.copytree(KAG / "examples", folder / "examples")
    monkeypatch.chdir(folder)
    return folder


def sweep(server: Any, *args: str) -> Any:
    env = {"OLLAMA_BASE_URL": server.base_url}
    return CliRunner().invoke(app, ["benchmark", "sweep", *args], env=env)


def shape(value: Any) -> Any:
    """The key sets and types of a JSON value (a dict's values by their own shape)."""
    if isinstance(value, dict):
        return {key: shape(v) for key, v in value.items()}
    return type(value).__name__


def test_kags_example_command_lines_run_unchanged(
    kag_folder: Path, server: Any, requests: list[dict[str, Any]]
) -> None:
    result = sweep(server, *FIRST)
    assert result.exit_code == 0, result.output
    assert "note:" not in result.stderr  # file() found the prompt from the working directory
    results = kag_folder / "results"
    files = sorted(p.relative_to(results).as_posix() for p in results.rglob("*.json"))
    assert files == [f"free-form/0/{SETUP}.json", f"mcq-form/0/{SETUP}.json"]
    assert requests[0]["model"] == "qwen3.5:9b" and requests[0]["temperature"] == 0.0
    system = requests[0]["messages"][0]["content"]
    assert system.startswith("You are a clinical terminology assistant.")
    mcq = next(r for r in requests if "scurvy" in str(r["messages"]))
    assert "b: Vitamin C" in mcq["messages"][0]["content"]  # {{CHOICE}} of the prompt file

    documented = json.loads((KAG / "shapes.json").read_text(encoding="utf-8"))
    ok = json.loads((results / "mcq-form" / "0" / f"{SETUP}.json").read_text(encoding="utf-8"))
    assert ok["ok"]["result"] == "b"
    assert set(ok) == set(documented["ok"])
    assert set(ok["ok"]) == set(documented["ok"]["ok"])
    assert shape(ok)["ok"]["result"] == shape(documented["ok"])["ok"]["result"] == "str"
    assert isinstance(ok["ok"]["stats"], dict)

    calls = server.calls
    resumed = sweep(server, *RESUMED)
    assert resumed.exit_code == 0, resumed.output
    assert server.calls == calls + 2  # new file names: run1-<setup>.json
    assert (results / "free-form" / "0" / f"run1-{SETUP}.json").is_file()
    again = sweep(server, *RESUMED)
    assert again.exit_code == 0 and server.calls == calls + 2
    assert "nothing to do" in again.stderr


def test_defaults_are_kags_parallel_1_output_here_config_toml_here(
    kag_folder: Path, server: Any
) -> None:
    help_text = CliRunner().invoke(app, ["benchmark", "sweep", "--help"]).output
    flat = " ".join(help_text.split())
    assert "./config.toml" in flat and "beside SETUPS.toml" in flat
    for short in ("-c", "-d", "-b", "-p", "-o"):
        assert f"{short}," in help_text or f"{short} " in help_text
    (kag_folder / "config.toml").write_text(
        f'[providers.ollama]\napi = "ollama"\nbase_url = "{server.base_url}"\n'
    )
    result = CliRunner().invoke(
        app,
        [
            "benchmark",
            "sweep",
            "-d",
            "examples/dataset/dataset.sample.json",
            "-b",
            "examples/config/benchmark.sample.toml",
        ],
        env={"OLLAMA_BASE_URL": "http://127.0.0.1:9/v1"},  # ./config.toml's server is used
    )
    assert result.exit_code == 0, result.output
    assert (kag_folder / "free-form" / "0" / f"{SETUP}.json").is_file()  # --output .
    assert server.max_in_flight == 1  # --parallel 1


def test_config_beside_the_setups_file_is_the_fallback(
    tmp_path: Path, server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "sweep"
    shutil.copytree(KAG / "examples", folder)
    monkeypatch.chdir(folder)  # no ./config.toml here; file() reads the prompt from here
    (folder / "config" / "config.toml").write_text(
        f'[providers.mine]\napi = "openai"\nbase_url = "{server.base_url}"\n'
    )
    toml = folder / "config" / "benchmark.sample.toml"
    toml.write_text(
        toml.read_text().replace('"ollama"', '"mine"').replace("examples/prompt", "prompt")
    )
    out = tmp_path / "out"
    result = sweep(
        server,
        "-d",
        str(folder / "dataset" / "dataset.sample.json"),
        "-b",
        str(toml),
        "-o",
        str(out),
    )
    assert result.exit_code == 0, result.output
    assert (out / "mcq-form" / "0" / f"{SETUP}.json").is_file()


def test_file_reads_the_working_directory_first_then_beside_the_toml_with_a_note(
    kag_folder: Path, server: Any, requests: list[dict[str, Any]], tmp_path: Path
) -> None:
    toml = kag_folder / "examples" / "config" / "benchmark.sample.toml"
    beside = toml.parent / "examples" / "prompt"
    beside.mkdir(parents=True)
    (beside / "umls_prompt.md").write_text("BESIDE {{INPUT}}")
    result = sweep(server, *FIRST)
    assert result.exit_code == 0, result.output
    assert requests[0]["messages"][0]["content"].startswith("You are a clinical")
    assert "note:" not in result.stderr

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    requests.clear()
    args = [
        "-d", str(kag_folder / "examples/dataset/dataset.sample.json"), "-b", str(toml),
        "-o", str(elsewhere / "out"),
    ]  # fmt: skip
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(elsewhere)
        moved = sweep(server, *args)
    assert moved.exit_code == 0, moved.output
    assert requests[0]["messages"][0]["content"].startswith("BESIDE")
    notes = [line for line in moved.stderr.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and "working directory" in notes[0] and "umls_prompt.md" in notes[0]

    shutil.rmtree(toml.parent / "examples")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(elsewhere)
        missing = sweep(server, *args)
    assert missing.exit_code == 1
    assert "working directory" in missing.stderr and "Traceback" not in missing.output


def test_an_existing_result_is_refused_naming_overwrite_which_gives_kags_behaviour(
    kag_folder: Path, server: Any
) -> None:
    assert sweep(server, *FIRST).exit_code == 0
    refused = sweep(server, *FIRST)
    assert refused.exit_code == 2
    line = refused.stderr.strip()
    assert "\n" not in line and "--overwrite" in line and "kag" in line and "--continue" in line
    calls = server.calls
    overwritten = sweep(server, *FIRST, "--overwrite")
    assert overwritten.exit_code == 0, overwritten.output
    assert server.calls == calls + 2
    both = sweep(server, *FIRST, "--overwrite", "--continue")
    assert both.exit_code == 2 and "choose one" in both.stderr


MISSING = """
[rag-neo4j]
provider = "ollama"
model = "qwen3.5:9b"
system_prompt = "{{RETRIEVAL}}"
retriever = "neo4j-umls"
database = "umls"
datasets = ["free-form"]
"""


def test_a_missing_retriever_is_refused_or_recorded_as_kag_does(
    kag_folder: Path, server: Any
) -> None:
    toml = kag_folder / "examples" / "config" / "benchmark.sample.toml"
    toml.write_text(toml.read_text() + MISSING)
    refused = sweep(server, *FIRST)
    assert refused.exit_code == 1 and server.calls == 0
    assert "'neo4j-umls'" in refused.stderr and "--missing-as-errors" in refused.stderr

    result = sweep(server, *FIRST, "--missing-as-errors")
    assert result.exit_code == 1, result.output  # a task failed: recorded, counted
    assert server.calls == 2  # the other setup ran every task
    results = kag_folder / "results"
    recorded = json.loads((results / "free-form" / "0" / "rag-neo4j.json").read_text())
    documented = json.loads((KAG / "shapes.json").read_text(encoding="utf-8"))["error"]
    assert shape(recorded) == shape(documented)
    assert recorded == {
        "error": "The requested retriever 'neo4j-umls' is missing from the configuration."
    }
    assert not (results / "mcq-form" / "0" / "rag-neo4j.json").exists()  # datasets filter
    assert "1 failed" in result.stderr and "2 done" in result.stderr

    resumed = sweep(server, *FIRST, "--missing-as-errors", "--continue")
    assert server.calls == 2 and resumed.exit_code == 0, resumed.output


def test_output_here_clears_temporary_files_only_in_the_sweeps_folders(
    kag_folder: Path, server: Any
) -> None:
    mine = kag_folder / "notes" / f"{TEMP_PREFIX}draft"
    mine.parent.mkdir()
    mine.write_text("a file of the user's, under the working directory")
    stale = kag_folder / "free-form" / "0" / f"{TEMP_PREFIX}{SETUP}.json"
    stale.parent.mkdir(parents=True)
    stale.write_text("{")
    result = sweep(
        server,
        "-d",
        "examples/dataset/dataset.sample.json",
        "-b",
        "examples/config/benchmark.sample.toml",
    )
    assert result.exit_code == 0, result.output
    assert mine.is_file() and not stale.exists()


@pytest.mark.parametrize(
    ("setup", "error"),
    [
        (
            '[no-provider]\nprovider = "vllm-gpu"\nmodel = "m"\n',
            "The requested provider 'vllm-gpu' is missing from the configuration.",
        ),
        (
            '[no-database]\nprovider = "ollama"\nmodel = "m"\nsystem_prompt = "{{RETRIEVAL}}"\n'
            'retriever = "bm25"\ndatabase = "umls"\n',
            "The requested database 'umls' is missing from the configuration.",
        ),
    ],
)
def test_a_missing_provider_or_database_is_recorded_too(
    kag_folder: Path, server: Any, setup: str, error: str
) -> None:
    (kag_folder / "config.toml").write_text('[retrievers.bm25]\ntype = "bm25"\n')
    toml = kag_folder / "examples" / "config" / "benchmark.sample.toml"
    toml.write_text(toml.read_text() + "\n" + setup)
    result = sweep(server, *FIRST, "--missing-as-errors")
    assert result.exit_code == 1, result.output
    name = setup.split("]")[0][1:]
    for dataset in ("free-form", "mcq-form"):
        recorded = json.loads((kag_folder / "results" / dataset / "0" / f"{name}.json").read_text())
        assert recorded == {"error": error}
    assert server.calls == 2
