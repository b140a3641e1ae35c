"""kag's config.toml as kag loads it (MiniJinja, then TOML 1.1; providers, databases,
retrievers with `extra`), and its setups run as kag sends them: one user prompt rendered
whole by MiniJinja, Ollama providers through /api/chat with `num_ctx`, OpenAI ones through
the Responses API. Checked at the wire against the fake server.

Two trees: kag's own example files, read from the mirror of c2fc2f/kag at commit 12389ee
when it is on this machine (KAG_MIRROR; skipped otherwise: its files are not copied into
this repository), and a tree of our own in the same shapes, so CI checks every behaviour.
"""

from __future__ import annotations

import json
import os
import subprocess
import tarfile
import tomllib
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_cli.engine._errors import EngineError
from lasagna_cli.engine.kag._config import load_config
from lasagna_judge.testing import FakeLLMServer
from lasagna_judge.testing._native_routes import prompt_text

MIRROR = Path(os.environ.get("KAG_MIRROR", "/work/.mirror/c2fc2f+kag/repo"))
COMMIT = "12389ee57133a0f8bece2cf9c9c216f15e649e21"
KEY = "sk-kag-test-0123456789"


@dataclass
class Tree:
    """A working directory laid out as kag's repository, and what the test needs to know
    of its files."""

    folder: Path
    config: Path
    refused_table: str  # the header of the retriever table kag refuses (it has no `type`)
    renamed_table: str  # the same table under the retriever it belongs to
    urls: tuple[str, str]  # the Ollama and OpenAI provider URLs as the file writes them
    key_variable: str  # what the OpenAI provider's key reads
    graph_retriever: str
    graph_database: str
    prompt_file: Path
    no_retrieval: str  # the prompt's expression for RETRIEVAL, and what it gives without
    no_retrieval_text: str
    setup: str  # the example setup of benchmark.sample.toml
    tokens: int  # its `tokens`


def _upstream(root: Path) -> Tree:
    if not (MIRROR / "HEAD").is_file():
        pytest.skip(f"no mirror of c2fc2f/kag at {MIRROR}")
    archive = subprocess.run(
        ["git", "-C", str(MIRROR), "archive", "--format=tar", COMMIT, "examples"],
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(root, filter="data")
    return Tree(
        folder=root,
        config=root / "examples/config/config.sample.toml",
        refused_table="[retrievers.embeddingemma-triplet-text.extra.neo4j]",
        renamed_table="[retrievers.neo4j-embedding-triplet-text.extra.neo4j]",
        urls=("https://ollama.example.com", "https://openai.example.com/api/v1"),
        key_variable="OPEN_AI_KEY",
        graph_retriever="neo4j-embedding-triplet-formal",
        graph_database="neo4j",
        prompt_file=root / "examples/prompt/umls_prompt.md",
        no_retrieval="{{ RETRIEVAL | default('<empty>') }}",
        no_retrieval_text="<empty>",
        setup="qwen35-9b-ollama-native",
        tokens=10000,
    )


# Our own files in the shapes of kag's examples (kag's README and src/config.rs): TOML 1.1
# multi-line inline tables, MiniJinja's `or`, a retriever table without `type`.
OWN_CONFIG = """\
[providers.ollama]
type = "Ollama"
url = "http://ollama.invalid:11434"

[providers.openai]
type = "OpenAI"
url = "https://llm.invalid/v1"
key = "{{ env('TEST_LLM_KEY') or file('.llm-key') }}"

[databases.graph]
type = "Neo4j"
user = "reader"
password = "{{ env('GRAPH_PASSWORD') or 'reader' }}"

[retrievers.graph-formal]
type = "Embedder"
provider = "ollama"
model = "nomic-embed-text"
extra.graph = {
  type = "Neo4j",
  index = "CONCEPTS",
  translation = { type = "FormalTriplet", property_filters = { "Drug" = ["name"] } },
}

[retrievers.graph-text]
type = "Embedder"
provider = "ollama"
model = "nomic-embed-text"
top_k = 2

[retrievers.graph-txt.extra.graph]
type = "Neo4j"
neighborhood = 2
index = "CONCEPTS"
translation = {
  type = "TextualTriplet",
  node_formats = { "Drug" = "the drug {name}", "Drug:Generic" = "the generic {name}" },
  property_formats = { "Drug" = ["{FROM} is taken {dose}."] },
  relation_formats = { "TREATS" = "{FROM} treats {TO}." },
}
"""
OWN_PROMPT = """\
Answer from the graph facts only.
Question: {{INPUT}}
Facts: {{ RETRIEVAL | default('(none)') }}
"""
OWN_SETUPS = """\
[qwen-native]
provider = "ollama"
model = "qwen3.5:9b"
temperature = 0.0
tokens = 8192
system_prompt = '''{{ file('examples/prompt/graph.md') }}'''
"""
OWN_DATASETS = {
    "free-form": {"0": {"input": "Which drug treats scurvy?"}},
    "mcq-form": {
        "0": {
            "input": "Which vitamin prevents scurvy?",
            "output": {"type": "MCQ", "options": {"b": "Vitamin C", "a": "Vitamin A"}},
        }
    },
}


def _own(root: Path) -> Tree:
    for name, text in (
        ("config/config.sample.toml", OWN_CONFIG),
        ("config/benchmark.sample.toml", OWN_SETUPS),
        ("prompt/graph.md", OWN_PROMPT),
        ("dataset/dataset.sample.json", json.dumps(OWN_DATASETS)),
    ):
        (root / "examples" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "examples" / name).write_text(text, encoding="utf-8")
    return Tree(
        folder=root,
        config=root / "examples/config/config.sample.toml",
        refused_table="[retrievers.graph-txt.extra.graph]",
        renamed_table="[retrievers.graph-text.extra.graph]",
        urls=("http://ollama.invalid:11434", "https://llm.invalid/v1"),
        key_variable="TEST_LLM_KEY",
        graph_retriever="graph-formal",
        graph_database="graph",
        prompt_file=root / "examples/prompt/graph.md",
        no_retrieval="{{ RETRIEVAL | default('(none)') }}",
        no_retrieval_text="(none)",
        setup="qwen-native",
        tokens=8192,
    )


@pytest.fixture(params=["kag", "ours"])
def tree(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Tree:
    root = tmp_path / "kag"
    root.mkdir()
    monkeypatch.chdir(root)
    return _upstream(root) if request.param == "kag" else _own(root)


def renamed(tree: Tree, server: FakeLLMServer | None = None) -> Path:
    """The config with the refused table under its retriever's name (and the providers
    pointed at the fake server): nothing else changed."""
    text = tree.config.read_text(encoding="utf-8")
    assert text.count(tree.refused_table) == 1
    text = text.replace(tree.refused_table, tree.renamed_table)
    if server is not None:
        ollama, openai = tree.urls
        text = text.replace(f'"{ollama}"', f'"{server.url}"')
        text = text.replace(f'"{openai}"', f'"{server.base_url}"')
    path = tree.config.with_name("config.toml")
    path.write_text(text, encoding="utf-8")
    return path


def test_kags_files_need_toml_1_1_which_tomli_reads(tree: Tree) -> None:
    import tomli

    text = tree.config.read_text(encoding="utf-8")
    with pytest.raises(tomllib.TOMLDecodeError):
        tomllib.loads(text)  # Python's own parser is TOML 1.0: no multi-line inline tables
    data = tomli.loads(text)
    extra = next(iter(data["retrievers"][tree.graph_retriever]["extra"].values()))
    assert extra["type"] == "Neo4j" and extra["index"]


def test_the_retriever_table_kag_refuses_is_refused_naming_it(tree: Tree) -> None:
    environ = {tree.key_variable: KEY}
    with pytest.raises(EngineError) as refused:
        load_config(tree.config, environ)
    message = str(refused.value)
    assert tree.refused_table in message and "without `type`" in message
    assert "\n" not in message
    assert tree.renamed_table.split(".")[1] in message  # the retriever it likely belongs to


def test_renamed_the_file_loads_as_kag_loads_it(tree: Tree) -> None:
    config = load_config(renamed(tree), {tree.key_variable: KEY})
    ollama, openai = config.providers["ollama"], config.providers["openai"]
    assert (ollama.api, ollama.base_url, ollama.wire) == ("ollama", tree.urls[0], "ollama-chat")
    assert (openai.api, openai.base_url, openai.wire) == ("openai", tree.urls[1], "responses")
    assert openai.api_key == KEY and KEY not in json.dumps(openai.describe())
    graph = config.graphs[tree.graph_database]
    assert graph.database == "neo4j" and graph.uri == "127.0.0.1:7687"  # kag's defaults
    assert not config.databases
    retrievers = config.retrievers
    assert {r.type for r in retrievers.values()} == {"Embedder"}
    assert all(tree.graph_database in r.extra for r in retrievers.values())
    assert retrievers[tree.graph_retriever].top_k == (7 if "neo4j" in tree.graph_retriever else 5)


def test_the_key_comes_from_env_or_from_file_as_kag_reads_it(tree: Tree) -> None:
    path = renamed(tree)
    with pytest.raises(EngineError) as missing:
        load_config(path, {})  # env('...') is "", so file('...') is read: it is absent
    assert "not found" in str(missing.value) and "working directory" in str(missing.value)
    key_file = ".openai" if tree.key_variable == "OPEN_AI_KEY" else ".llm-key"
    (tree.folder / key_file).write_text("sk-from-a-file-42", encoding="utf-8")
    assert load_config(path, {}).providers["openai"].api_key == "sk-from-a-file-42"


def test_a_secret_outside_a_key_or_password_is_refused(tree: Tree) -> None:
    path = renamed(tree)
    text = path.read_text(encoding="utf-8").replace(
        f'"{tree.urls[0]}"', f"\"{tree.urls[0]}/{{{{ env('{tree.key_variable}') }}}}\"", 1
    )
    path.write_text(text, encoding="utf-8")
    with pytest.raises(EngineError) as refused:
        load_config(path, {tree.key_variable: KEY})
    message = str(refused.value)
    assert "providers.ollama.url" in message and tree.key_variable in message
    assert KEY not in message


def test_file_reads_nothing_outside_the_working_directory_and_the_files_folders(
    tree: Tree, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("sk-outside", encoding="utf-8")
    path = renamed(tree)
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace(f'"{tree.urls[0]}"', f"\"{{{{ file('{outside}') }}}}\""))
    with pytest.raises(EngineError) as refused:
        load_config(path, {tree.key_variable: KEY})
    assert "outside the working directory" in str(refused.value)
    assert "sk-outside" not in str(refused.value)


def _expected_prompt(tree: Tree, question: str) -> str:
    """The prompt file as kag renders it, worked out by hand: INPUT filled, RETRIEVAL's
    default shown, the template's one trailing newline dropped (MiniJinja's default)."""
    text = tree.prompt_file.read_text(encoding="utf-8")
    assert "CHOICE" not in text
    text = text.replace("{{INPUT}}", question).replace(tree.no_retrieval, tree.no_retrieval_text)
    return text.removesuffix("\n")


GRAPH_AND_OPENAI = """
[graph-rag]
provider = "ollama"
model = "qwen3.5:9b"
system_prompt = "{{{{RETRIEVAL}}}} {{{{INPUT}}}}"
augmented_generation = {{ retriever = "{retriever}", database = "{database}" }}

[gpt-plain]
provider = "openai"
model = "gpt-5-mini"
temperature = 0.5
tokens = 300
system_prompt = "Q: {{{{INPUT}}}}\\n{{{{ CHOICE | default('') }}}}"
datasets = ["mcq-form"]
"""


def test_kags_examples_run_as_kag_sends_them(tree: Tree) -> None:
    with FakeLLMServer(reply=lambda request: "b") as server:
        config = renamed(tree, server)
        setups = tree.folder / "examples/config/benchmark.sample.toml"
        setups.write_text(
            setups.read_text(encoding="utf-8")
            + GRAPH_AND_OPENAI.format(retriever=tree.graph_retriever, database=tree.graph_database),
            encoding="utf-8",
        )
        dataset_file = "examples/dataset/dataset.sample.json"
        args = ["benchmark", "sweep", "-c", str(config), "-d", dataset_file, "-b", str(setups),
                "-o", "results"]  # fmt: skip
        result = CliRunner().invoke(app, args, env={tree.key_variable: KEY})
        requests = list(zip(server.paths, server.headers, server.requests, strict=True))
    assert result.exit_code == 1, result.output  # the graph setup's tasks are recorded failed
    datasets = json.loads((tree.folder / "examples/dataset/dataset.sample.json").read_text())
    questions = [(d, q, e) for d, qs in datasets.items() for q, e in qs.items()]
    results = tree.folder / "results"

    native = [(h, r) for p, h, r in requests if p == "/api/chat"]
    assert len(native) == len(questions)  # the example setup, once per question
    for headers, request in native:
        assert "authorization" not in headers  # kag's Ollama client sends no key
        assert request["model"] == "qwen3.5:9b" and request["stream"] is False
        assert request["options"] == {"temperature": 0.0, "num_ctx": tree.tokens}
        assert [m["role"] for m in request["messages"]] == ["user"]
    for dataset, question, entry in questions:
        sent = next(r for _, r in native if entry["input"] in prompt_text(r))
        assert sent["messages"][0]["content"] == _expected_prompt(tree, entry["input"])
        ok = json.loads((results / dataset / question / f"{tree.setup}.json").read_text())
        assert ok["ok"]["result"] == "b"
        assert ok["ok"]["stats"]["prompt"] == _expected_prompt(tree, entry["input"])
        graph = json.loads((results / dataset / question / "graph-rag.json").read_text())
        assert list(graph) == ["error"]
        assert graph["error"].startswith(
            "Failed during the knowledge retrieval phase (KAG) on database "
            f"'{tree.graph_database}': "
        )
        assert "Neo4j" in graph["error"] and "--system" in graph["error"]

    responses = [(h, r) for p, h, r in requests if p == "/v1/responses"]
    mcqs = [e for _, _, e in questions if "output" in e]
    assert len(responses) == len(mcqs) and len(requests) == len(native) + len(responses)
    headers, request = responses[0]
    assert headers["authorization"] == f"Bearer {KEY}"
    options = "\n".join(f"{k}: {v}" for k, v in sorted(mcqs[0]["output"]["options"].items()))
    assert request == {
        "model": "gpt-5-mini",
        "input": [
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": f"Q: {mcqs[0]['input']}\n{options}"}],
            }
        ],
        "temperature": 0.5,
        "max_output_tokens": 300,
    }
    for path in results.rglob("*.json"):
        assert KEY not in path.read_text(encoding="utf-8")


def test_a_prompt_without_retrieval_default_fails_the_task_with_kags_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kag defines RETRIEVAL only when the retrieval found something: a template that shows
    it bare fails that task, the other tasks run."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("Scurvy is prevented by vitamin C. " * 5)
    (tmp_path / "datasets.json").write_text(json.dumps({
        "d": {"hit": {"input": "What prevents scurvy?"}, "miss": {"input": "Zzz qqq?"}}
    }))  # fmt: skip
    with FakeLLMServer(reply="C") as server:
        (tmp_path / "config.toml").write_text(
            f'[providers.ollama]\ntype = "Ollama"\nurl = "{server.url}"\n'
            '[databases.docs]\ndocuments = "docs"\n[retrievers.bm25]\ntype = "bm25"\n'
        )
        (tmp_path / "setups.toml").write_text(
            '[rag]\nprovider = "ollama"\nmodel = "m"\n'
            'system_prompt = "{{RETRIEVAL}}\\n{{INPUT}}"\nretriever = "bm25"\ndatabase = "docs"\n'
        )
        result = CliRunner().invoke(
            app, ["benchmark", "sweep", "-d", "datasets.json", "-b", "setups.toml", "-o", "out"]
        )
        assert server.paths == ["/api/chat"]
    assert result.exit_code == 1, result.output
    hit = json.loads((tmp_path / "out/d/hit/rag.json").read_text())
    assert hit["ok"]["stats"]["prompt"].startswith("Scurvy is prevented")
    miss = json.loads((tmp_path / "out/d/miss/rag.json").read_text())
    assert miss["error"].startswith(
        "Failed to render the prompt template: ensure all variables used in the template are "
        "provided"
    )
    assert "RETRIEVAL" in miss["error"]


def test_a_key_like_variable_never_reaches_the_setups(tree: Tree) -> None:
    setups = tree.folder / "examples/config/benchmark.sample.toml"
    leak = f'\n[leak]\nprovider = "ollama"\nmodel = "{{{{ env(\'{tree.key_variable}\') }}}}"\n'
    setups.write_text(setups.read_text(encoding="utf-8") + leak, encoding="utf-8")
    result = CliRunner().invoke(
        app,
        ["benchmark", "sweep", "-c", str(renamed(tree)), "-d",
         "examples/dataset/dataset.sample.json", "-b", str(setups), "-o", "out"],
        env={tree.key_variable: KEY},
    )  # fmt: skip
    assert result.exit_code == 1
    assert tree.key_variable in result.output and "secret" in result.output
    assert KEY not in result.output and not (tree.folder / "out").exists()


ENDPOINTS_CONFIG = """\
[providers.kag-openai]
type = "OpenAI"
url = "{base_url}"
key = "{key}"

[providers.kag-ollama]
type = "Ollama"
url = "{url}"

[providers.mine]
api = "openai"
base_url = "{base_url}"

[providers.lan]
api = "ollama"
base_url = "{base_url}"
"""


def test_each_provider_speaks_the_endpoint_docs_sweeps_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/how-to/sweeps.md's table: kag's `type` entries speak kag's endpoints, the
    built-in providers and lasagna's `api` entries speak chat completions."""
    monkeypatch.chdir(tmp_path)
    providers = {"kag-openai": "/v1/responses", "kag-ollama": "/api/chat",
                 "openai": "/v1/chat/completions", "ollama": "/v1/chat/completions",
                 "mine": "/v1/chat/completions", "lan": "/v1/chat/completions"}  # fmt: skip
    (tmp_path / "datasets.json").write_text(json.dumps({"d": {"q": {"input": "Hi?"}}}))
    (tmp_path / "setups.toml").write_text(
        "".join(
            f'[via-{name}]\nprovider = "{name}"\nmodel = "m-{name}"\n'
            'system_prompt = "{{INPUT}}"\n'
            for name in providers
        )
    )
    with FakeLLMServer(reply="hello") as server:
        (tmp_path / "config.toml").write_text(
            ENDPOINTS_CONFIG.format(base_url=server.base_url, url=server.url, key=KEY)
        )
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": KEY,
               "OLLAMA_BASE_URL": server.base_url, "OLLAMA_HOST": "", "MODEL_NAME": ""}  # fmt: skip
        result = CliRunner().invoke(
            app, ["benchmark", "sweep", "-d", "datasets.json", "-b", "setups.toml", "-o", "out"],
            env=env,
        )  # fmt: skip
        sent = {r["model"]: path for path, r in zip(server.paths, server.requests, strict=True)}
    assert result.exit_code == 0, result.output
    assert sent == {f"m-{name}": path for name, path in providers.items()}
