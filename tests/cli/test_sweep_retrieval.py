"""Retrieval setups: document folders and BEIR corpora, indexed once, passages in the prompt."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_cli.engine.kag import load_config, load_databases
from lasagna_cli.engine.retrieval._bm25 import BM25Index
from lasagna_judge.testing import FakeLLMServer

WORDS = " ".join(f"filler{i}" for i in range(30))
DOCS = {
    "harbour.md": (
        f"# Harbour\n\nThe lighthouse of Port Elvar was built in 1852 by the harbour board. {WORDS}"
    ),
    "ferry.txt": f"The Skerra ferry sails twice a day from the north quay in summer. {WORDS}",
    "notes/food.md": f"Herring is smoked in the old sheds behind the fish market. {WORDS}",
}
CORPUS = [
    {"_id": "d1", "title": "Ragù", "text": "Ragù simmers for at least two hours."},
    {"_id": "d2", "title": "", "text": "Pesto is basil, pine nuts, garlic and cheese."},
]

CONFIG = """\
[providers.fake]
api = "openai"
base_url = "{base_url}"

[databases.town]
documents = "docs"
chunk_words = 50

[databases.kitchen]
beir = "beir"

[retrievers.top1]
type = "bm25"
top_k = 1
"""

SETUPS = """\
[rag-town]
provider = "fake"
model = "m"
system_prompt = "Use only these passages:\\n{{RETRIEVAL}}\\nQuestion: {{INPUT}}"
retriever = "top1"
database = "town"
datasets = ["town"]

[rag-kitchen]
provider = "fake"
model = "m"
prompt = "{{RETRIEVAL}}\\n\\nQuestion: {{INPUT}}"
retriever = "top1"
database = "kitchen"
datasets = ["kitchen"]

[closed-book]
provider = "fake"
model = "m"
"""

DATASETS = {
    "town": {
        "lighthouse": {"input": "When was the lighthouse built?", "output": "1852"},
        "ferry": {"input": "How often does the ferry sail?"},
    },
    "kitchen": {"ragu": {"input": "How long does ragù simmer?"}},
}


def make_folder(root: Path, base_url: str) -> Path:
    for name, text in DOCS.items():
        (root / "docs" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "docs" / name).write_text(text)
    beir = root / "beir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in CORPUS) + "\n")
    (beir / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "ragù time"}) + "\n")
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    (root / "config.toml").write_text(CONFIG.format(base_url=base_url))
    (root / "setups.toml").write_text(SETUPS)
    (root / "datasets.json").write_text(json.dumps(DATASETS))
    return root


def run(root: Path) -> Any:
    return CliRunner().invoke(
        app,
        ["benchmark", "sweep", "--datasets", str(root / "datasets.json"), "--benchmark",
         str(root / "setups.toml"), "--output", str(root / "out")],
    )  # fmt: skip


def test_retrieved_passages_reach_the_prompt_and_the_stats(tmp_path: Path) -> None:
    with FakeLLMServer(reply="an answer") as server:
        root = make_folder(tmp_path, server.base_url)
        result = run(root)
        assert result.exit_code == 0, result.output
        assert "indexing 2 database(s)" in result.output
        requests = server.requests
    assert len(requests) == 3 + 3  # 3 retrieval tasks, 3 closed-book ones
    record = json.loads((root / "out" / "town" / "lighthouse" / "rag-town.json").read_text())
    stats = record["ok"]["stats"]
    assert [p["id"] for p in stats["passages"]] == ["harbour.md#0"]
    assert stats["passages"][0]["score"] > 0
    assert stats["retrieval_time_s"] >= 0
    assert stats["setup"]["retriever"] == {"name": "top1", "type": "bm25", "top_k": 1}
    assert stats["setup"]["database"]["kind"] == "documents"
    assert stats["setup"]["database"]["chunk_words"] == 50
    lighthouse = next(r for r in requests if "lighthouse built" in json.dumps(r)
                      and "passages" in json.dumps(r))  # fmt: skip
    assert [m["role"] for m in lighthouse["messages"]] == ["user"]  # kag's one prompt
    system = lighthouse["messages"][0]["content"]
    assert system.startswith("Use only these passages:\n# Harbour\n\nThe lighthouse of Port Elvar")
    kitchen = json.loads((root / "out" / "kitchen" / "ragu" / "rag-kitchen.json").read_text())
    assert [p["id"] for p in kitchen["ok"]["stats"]["passages"]] == ["d1"]
    ragu = next(r for r in requests if "Question: How long" in json.dumps(r))
    assert ragu["messages"][-1]["content"] == (
        "Ragù\n\nRagù simmers for at least two hours.\n\nQuestion: How long does ragù simmer?"
    )
    closed = json.loads((root / "out" / "town" / "ferry" / "closed-book.json").read_text())
    assert closed["ok"]["stats"]["passages"] is None

    report = CliRunner().invoke(
        app,
        ["benchmark", "stats", "--datasets", str(root / "datasets.json"), "--results",
         str(root / "out"), "--format", "json"],
    )  # fmt: skip
    assert report.exit_code == 0, report.output
    rows = json.loads(report.stdout)["lasagna"]["setups"]  # no MCQ: nothing kag grades
    assert rows["rag-town"]["overall"]["mean_retrieval_time_s"] is not None
    assert rows["closed-book"]["overall"]["mean_retrieval_time_s"] is None
    assert set(rows["rag-town"]["per_dataset"]) == {"town"}


def test_each_database_is_indexed_once_however_many_setups_name_it(tmp_path: Path) -> None:
    root = make_folder(tmp_path, "http://127.0.0.1:9/v1")
    config = load_config(root / "config.toml")
    town, kitchen = config.databases["town"], config.databases["kitchen"]
    corpora = load_databases([town, kitchen, town, town])
    assert list(corpora) == ["town", "kitchen"]
    texts = corpora["town"].texts
    assert sorted(texts) == ["ferry.txt#0", "harbour.md#0", "notes/food.md#0"]
    index = BM25Index.build(list(texts), list(texts.values()))
    assert index.search("smoked herring", 1)[0][0] == "notes/food.md#0"


def test_a_database_without_passages_is_refused_before_any_call(tmp_path: Path) -> None:
    with FakeLLMServer(reply="x") as server:
        root = make_folder(tmp_path, server.base_url)
        # A document too short for a window is searched whole; one with no text is nothing.
        for path in (root / "docs").rglob("*.*"):
            path.write_text("")
        result = run(root)
        assert result.exit_code == 1
        assert "database 'town': no passage in" in result.output
        assert server.calls == 0


def test_the_example_files_are_valid_and_index() -> None:
    """examples/sweep, which the sweeps page runs against local/smollm2, parses and indexes."""
    from lasagna_cli.engine.kag import load_datasets, load_setups, load_sweep, sweep_tasks

    folder = Path(__file__).resolve().parents[2] / "examples" / "sweep"
    datasets = load_datasets(folder / "datasets.json")
    config = load_config(folder / "config.toml")
    setups = load_setups(folder / "setups.toml", config, datasets, {})
    assert {s.generator.name for s in setups.values() if s.generator} == {"local/smollm2"}
    assert any(q.is_mcq for d in datasets.values() for q in d.values())
    assert any(q.references for d in datasets.values() for q in d.values())
    assert "{{RETRIEVAL}}" in setups["rag-harbour"].prompt.system
    harbour = setups["rag-harbour"]  # kag's augmented_generation table
    assert harbour.retriever_name == "bm25-top3" and harbour.database is not None
    assert harbour.database.name == "harbour-docs"
    sweep = load_sweep(folder / "datasets.json", folder / "setups.toml", None, [], {})
    assert len(sweep_tasks(sweep.plan)) == 18
    corpora = load_databases(s.database for s in setups.values() if s.database is not None)

    def search(name: str, query: str) -> str:
        texts = corpora[name].texts
        return BM25Index.build(list(texts), list(texts.values())).search(query, 1)[0][0]

    assert search("harbour-docs", "ferry crossing Skerra").startswith("skerra-ferry.txt#")
    assert search("pasta-corpus", "pesto") == "pesto"


def test_a_beir_database_is_its_corpus_whatever_its_qrels_name(tmp_path: Path) -> None:
    """Judgments naming ids the folder lacks (as in BEIR's arcd subset) do not stop a sweep:
    only the corpus is searched. A folder with no corpus is refused naming the database."""
    root = make_folder(tmp_path, "http://127.0.0.1:9/v1")
    (root / "beir" / "qrels" / "test.tsv").write_text("q1\td1\t1\nq9\td1\t1\nq1\tgone\t1\n")
    config = load_config(root / "config.toml")
    corpus = load_databases([config.databases["kitchen"]])["kitchen"]
    assert sorted(corpus.texts) == ["d1", "d2"]
    index = BM25Index.build(list(corpus.texts), list(corpus.texts.values()))
    assert index.search("pesto basil", 1)[0][0] == "d2"
    (root / "beir" / "corpus.jsonl").unlink()
    with FakeLLMServer(reply="x") as server:
        (root / "config.toml").write_text(CONFIG.format(base_url=server.base_url))
        result = run(root)
        assert result.exit_code == 1
        assert "database 'kitchen': " in result.output
        assert "a BEIR folder needs" in result.output and "missing corpus.jsonl" in result.output
        assert server.calls == 0
