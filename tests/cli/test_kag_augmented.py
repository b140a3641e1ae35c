"""kag's Knowledge-Augmented setups: `augmented_generation = { retriever, database }`, as
kag's `Generation` (src/cli/generation.rs, flattened into a setup) reads it and writes it
back as each result file's `config`. A Neo4j retrieval is recorded per task as kag's error;
a retriever lasagna runs retrieves; the top-level `retriever` and `database` of kag's
README retrieve too (kag drops them). Checked at the wire against the fake server, through
kag's own `type = "Ollama"` provider (Ollama's /api/chat).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import tomli
from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_judge.testing import FakeLLMServer

WORDS = " ".join(f"filler{i}" for i in range(30))
DOCS = {
    "harbour.md": f"The lighthouse of Port Elvar was built in 1852 by the harbour board. {WORDS}",
    "ferry.md": f"The Skerra ferry sails twice a day from the north quay in summer. {WORDS}",
}
CONFIG = """\
[providers.ollama]
type = "Ollama"
url = "{url}"

[databases.graph]
type = "Neo4j"
password = "reader"

[databases.town]
documents = "docs"
chunk_words = 50

[retrievers.graph-formal]
type = "Embedder"
provider = "ollama"
model = "nomic-embed-text"
extra.graph = {{ type = "Neo4j", index = "CONCEPTS" }}

[retrievers.bm25-top1]
type = "bm25"
top_k = 1
"""
MODEL = 'provider = "ollama"\nmodel = "qwen3.5:9b"\ntemperature = 0.0\n'
PROMPT = "system_prompt = \"Passages: {{ RETRIEVAL | default('(none)') }}\\nQ: {{INPUT}}\"\n"
SETUPS = f"""\
[kag-graph]
{MODEL}{PROMPT}augmented_generation = {{ retriever = "graph-formal", database = "graph" }}

[kag-rag]
{MODEL}tokens = 512
{PROMPT}augmented_generation = {{ retriever = "bm25-top1", database = "town" }}

[readme-rag]
{MODEL}tokens = 512
{PROMPT}retriever = "bm25-top1"
database = "town"

[plain]
{MODEL}{PROMPT}"""
DATASETS = {
    "town": {
        "lighthouse": {"input": "When was the lighthouse built?"},
        "ferry": {"input": "How often does the Skerra ferry sail?"},
    }
}
GRAPH_ERROR = "Failed during the knowledge retrieval phase (KAG) on database 'graph': "


def folder(root: Path, url: str, setups: str = SETUPS) -> Path:
    for name, text in DOCS.items():
        (root / "docs").mkdir(exist_ok=True)
        (root / "docs" / name).write_text(text)
    (root / "config.toml").write_text(CONFIG.format(url=url))
    (root / "setups.toml").write_text(setups)
    (root / "datasets.json").write_text(json.dumps(DATASETS))
    return root


def sweep(root: Path, *extra: str) -> Any:
    return CliRunner().invoke(
        app,
        ["benchmark", "sweep", "-c", str(root / "config.toml"), "-d", str(root / "datasets.json"),
         "-b", str(root / "setups.toml"), "-o", str(root / "out"), *extra],
    )  # fmt: skip


def result(root: Path, question: str, setup: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (root / "out" / "town" / question / f"{setup}.json").read_text()
    )
    return data


def test_augmented_generation_retrieves_or_records_kags_neo4j_error(tmp_path: Path) -> None:
    with FakeLLMServer(reply="1852") as server:
        root = folder(tmp_path, server.url)
        outcome = sweep(root)
        requests = list(zip(server.paths, server.requests, strict=True))
    assert outcome.exit_code == 1, outcome.output  # the graph setup's tasks failed, recorded
    assert {path for path, _ in requests} == {"/api/chat"}
    assert len(requests) == 3 * 2  # kag-rag, readme-rag and plain; kag-graph asks nothing
    sent = [r["messages"][0]["content"] for _, r in requests]
    written = tomli.loads(SETUPS)
    for question in DATASETS["town"]:
        graph = result(root, question, "kag-graph")
        assert list(graph) == ["error"] and graph["error"].startswith(GRAPH_ERROR)
        assert "cannot connect to a Neo4j database" in graph["error"]

        rag = result(root, question, "kag-rag")["ok"]["stats"]
        # kag's `config`: its Generation serialised, the setup's own table in it.
        assert rag["config"] == {
            "augmented_generation": {"retriever": "bm25-top1", "database": "town"},
            "provider": "ollama",
            "model": "qwen3.5:9b",
            "temperature": 0.0,
            "tokens": 512,
        }
        assert rag["config"]["augmented_generation"] == written["kag-rag"]["augmented_generation"]
        assert len(rag["passages"]) == 1 and rag["prompt"] in sent
        assert not rag["prompt"].startswith("Passages: (none)")  # the passage is in the prompt

        readme = result(root, question, "readme-rag")["ok"]["stats"]
        assert readme["prompt"] == rag["prompt"] and readme["passages"] == rag["passages"]
        assert readme["config"] == rag["config"]  # retrieved, so recorded as retrieving

        plain = result(root, question, "plain")["ok"]["stats"]
        assert plain["config"]["augmented_generation"] is None
        assert plain["prompt"].startswith("Passages: (none)\nQ: ")
    lighthouse = result(root, "lighthouse", "kag-rag")["ok"]["stats"]
    assert lighthouse["passages"][0]["id"] == "harbour.md#0"
    assert "built in 1852" in lighthouse["prompt"]
    assert result(root, "ferry", "kag-rag")["ok"]["stats"]["passages"][0]["id"] == "ferry.md#0"


def test_either_spelling_is_the_same_task_to_continue(tmp_path: Path) -> None:
    """Moving a setup from the README's top-level keys to kag's table changes nothing it
    sends: --continue keeps its results."""
    with FakeLLMServer(reply="1852") as server:
        root = folder(tmp_path, server.url)
        assert sweep(root, "--skip", "kag-graph").exit_code == 0
        calls = server.calls
        setups = root / "setups.toml"
        setups.write_text(
            setups.read_text().replace(
                'retriever = "bm25-top1"\ndatabase = "town"\n',
                'augmented_generation = { retriever = "bm25-top1", database = "town" }\n',
            )
        )
        assert tomli.loads(setups.read_text())["readme-rag"]["augmented_generation"]
        resumed = sweep(root, "--skip", "kag-graph", "--continue")
        assert resumed.exit_code == 0, resumed.output
        assert server.calls == calls


REFUSED = [
    (
        'augmented_generation = { retriever = "bm25-top1", database = "town" }\n'
        'retriever = "bm25-top1"\n',
        "gives both `augmented_generation` and a top-level `retriever`",
    ),
    (
        'augmented_generation = { retriever = "bm25-top1" }\n',
        "augmented_generation: missing `database`",
    ),
    (
        'augmented_generation = { retriever = "bm25-top1", database = "town", top_k = 3 }\n',
        "augmented_generation: unknown key 'top_k'",
    ),
    ('augmented_generation = "bm25-top1"\n', "expected `augmented_generation` to be a table"),
    (
        'augmented_generation = { retriever = "bm25-top5", database = "town" }\n',
        "augmented_generation.retriever 'bm25-top5' is not a retriever of the config (did you "
        'mean "bm25-top1"?)',
    ),
    (
        'augmented_generation = { retriever = "bm25-top1", database = "towns" }\n',
        "augmented_generation.database 'towns' is not a database of the config",
    ),
]


@pytest.mark.parametrize(("line", "message"), REFUSED, ids=range(len(REFUSED)))
def test_a_wrong_augmented_generation_is_one_line_before_any_call(
    tmp_path: Path, line: str, message: str
) -> None:
    root = folder(tmp_path, "http://127.0.0.1:9", f"[bad]\n{MODEL}{PROMPT}{line}")
    outcome = sweep(root)
    assert outcome.exit_code == 1, outcome.output
    error = outcome.stderr.strip()
    assert "\n" not in error and "setup 'bad'" in error and message in error, error
    assert not (root / "out").exists()


@pytest.mark.parametrize(
    ("setup", "config", "error"),
    [
        # kag looks the retriever up first, then the database, then the provider.
        (
            'provider = "vllm"\nmodel = "m"\nsystem_prompt = "{{INPUT}}"\n'
            'augmented_generation = { retriever = "neo4j-umls", database = "umls" }\n',
            "",
            "The requested retriever 'neo4j-umls' is missing from the configuration.",
        ),
        (
            'provider = "vllm"\nmodel = "m"\nsystem_prompt = "{{INPUT}}"\n'
            'augmented_generation = { retriever = "bm25-top1", database = "umls" }\n',
            "",
            "The requested database 'umls' is missing from the configuration.",
        ),
        # The Embedder's own provider is looked up when it retrieves.
        (
            f'{MODEL}system_prompt = "{{{{INPUT}}}}"\n'
            'augmented_generation = { retriever = "graph-tei", database = "graph" }\n',
            '[retrievers.graph-tei]\ntype = "Embedder"\nprovider = "tei"\nmodel = "e"\n'
            'extra.graph = { type = "Neo4j", index = "I" }\n',
            f"{GRAPH_ERROR}The requested provider 'tei' is missing from the configuration.",
        ),
        # Neo4j's settings for the database are looked up in `extra` when it searches.
        (
            f'{MODEL}system_prompt = "{{{{INPUT}}}}"\n'
            'augmented_generation = { retriever = "graph-formal", database = "graph2" }\n',
            '[databases.graph2]\ntype = "Neo4j"\npassword = "p"\ndatabase = "umls"\n',
            "Failed during the knowledge retrieval phase (KAG) on database 'graph2': Failed to "
            "execute vector retrieval for database 'graph2': Missing configuration parameters "
            "for Neo4j database 'umls'. Ensure that 'extra' contains a valid 'Neo4j' "
            "configuration block matching this retriever.",
        ),
    ],
    ids=["retriever-first", "database-next", "embedder-provider", "no-extra"],
)
def test_each_task_records_the_error_kag_writes(
    tmp_path: Path, setup: str, config: str, error: str
) -> None:
    with FakeLLMServer(reply="1852") as server:
        root = folder(tmp_path, server.url, f"[broken]\n{setup}\n[plain]\n{MODEL}{PROMPT}")
        (root / "config.toml").write_text((root / "config.toml").read_text() + config)
        outcome = sweep(root, "--missing-as-errors")
        assert server.calls == 2  # the plain setup's tasks ran
    assert outcome.exit_code == 1, outcome.output
    for question in DATASETS["town"]:
        assert result(root, question, "broken") == {"error": error}
