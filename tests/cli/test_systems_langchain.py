"""LangChain retrievers and runnables as the system under test."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_synth import load_data

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "data"
EXAMPLE_SYSTEM = ROOT / "examples" / "systems" / "langchain_retriever.py"


def run(*args: str) -> Any:
    return CliRunner().invoke(app, ["benchmark", "run", *args])


def results_of(out: Path) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads((out / "results.json").read_text())["results"]
    return found


def example_retriever() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("_example_langchain_retriever", EXAMPLE_SYSTEM)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # pydantic resolves the model's annotations there
    spec.loader.exec_module(module)
    return module.make_retriever()


def queries_of(data: Path) -> dict[str, str]:
    return {row.id: row.question for row in load_data(data).rows()}


# The example retriever holds the BEIR corpus: on pasta.jsonl (a pool of the rows' passages,
# named by hash) its ids mean nothing, and its texts are what lets the runner find them.
@pytest.mark.parametrize(
    ("data", "form"),
    [
        ("pasta-beir", "ids"),
        ("pasta-beir", "texts"),
        ("pasta-beir", "documents"),
        ("pasta.jsonl", "texts"),
        ("pasta.jsonl", "documents"),
    ],
)
def test_retriever_metrics_equal_those_of_a_predictions_file_of_the_same_rankings(
    tmp_path: Path, data: str, form: str
) -> None:
    path = EXAMPLES / data
    through_langchain = tmp_path / "langchain"
    result = run(
        str(path),
        "--system",
        f"{EXAMPLE_SYSTEM}:make_retriever",
        "--top-k",
        "3",
        "-o",
        str(through_langchain),
    )
    assert result.exit_code == 0, result.output
    (found,) = results_of(through_langchain)
    assert found["setup"]["system"]["adapter"] == "langchain retriever"
    assert found["setup"]["tracks"] == ["retrieval"]  # a retriever gives no answer

    # The same rankings, asked of the retriever here and written down.
    retriever = example_retriever()
    rows = []
    for row_id, question in queries_of(path).items():
        documents = retriever.invoke(question)
        if form == "ids":
            retrieved: list[Any] = [d.id for d in documents]
        elif form == "texts":  # BEIR texts carry their title: "Lasagna\n\nLasagna is ..."
            retrieved = [d.page_content for d in documents]
        else:
            retrieved = [{"id": d.id, "text": d.page_content} for d in documents]
        rows.append({"id": row_id, "retrieved": retrieved})
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    from_file = tmp_path / "file"
    result = run(str(path), "--predictions", str(preds), "--top-k", "3", "-o", str(from_file))
    assert result.exit_code == 0, result.output
    (reference,) = results_of(from_file)

    assert found["metrics"]["retrieval"] == reference["metrics"]["retrieval"]
    assert found["comparability_key"] == reference["comparability_key"]
    for a, b in zip(found["per_query"], reference["per_query"], strict=True):
        assert (a["id"], a["ranking"], a["metrics"]) == (b["id"], b["ranking"], b["metrics"])
    assert found["metrics"]["retrieval"]["ndcg@10"]["count"] == (7 if data == "pasta-beir" else 12)


def test_the_readme_commands_import_the_examples_from_the_repository_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    out = tmp_path / "chain"
    result = run(
        "examples/data/pasta.jsonl",
        "--system",
        "examples.systems.langchain_retriever:make_chain",
        "-o",
        str(out),
    )
    assert result.exit_code == 0, result.output
    (found,) = results_of(out)
    assert found["setup"]["system"]["adapter"] == "langchain runnable"
    assert found["setup"]["tracks"] == ["retrieval", "generation"]
    per_query = {q["id"]: q for q in found["per_query"]}
    assert per_query["q07"]["generation"]["prediction"] == "Pesto alla genovese comes from Liguria."
    assert per_query["q07"]["metrics"]["mrr"] == 1.0


RUNNABLES = """
from langchain_core.documents import Document
from langchain_core.language_models import FakeListChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableLambda

def make_string_chain():
    prompt = ChatPromptTemplate.from_messages([("user", "{question}")])
    model = FakeListChatModel(responses=["Liguria"])
    return {"question": lambda q: q} | prompt | model | StrOutputParser()

def make_message_chain():
    return FakeListChatModel(responses=["Liguria"])

def make_bad_chain():
    return RunnableLambda(lambda q: {"output": q})

class Picky(BaseRetriever):
    def _get_relevant_documents(self, query, *, run_manager):
        if "simmer" in query:
            raise ConnectionError("index offline")
        return [Document(page_content="x", metadata={"doc_id": "pesto"})]

picky = Picky()

async def _slow_on_pesto(question):
    import asyncio
    if "pesto" in question.lower():
        await asyncio.sleep(3600)
    return "Liguria"

slow_chain = RunnableLambda(_slow_on_pesto)
"""


@pytest.fixture
def runnables(tmp_path: Path) -> Path:
    path = tmp_path / "chains.py"
    path.write_text(textwrap.dedent(RUNNABLES), encoding="utf-8")
    return path


@pytest.mark.parametrize("attr", ["make_string_chain", "make_message_chain"])
def test_a_runnable_that_returns_text_or_a_message_is_on_the_generation_track(
    runnables: Path, tmp_path: Path, attr: str
) -> None:
    out = tmp_path / "run"
    result = run(str(EXAMPLES / "pasta.jsonl"), "--system", f"{runnables}:{attr}", "-o", str(out))
    assert result.exit_code == 0, result.output
    (found,) = results_of(out)
    assert found["setup"]["tracks"] == ["generation"]
    answers = {q["id"]: q["generation"]["prediction"] for q in found["per_query"]}
    assert set(answers.values()) == {"Liguria"}
    assert found["metrics"]["generation"]["exact_match"]["count"] == 14


def test_a_runnable_output_without_answer_or_context_is_refused(
    runnables: Path, tmp_path: Path
) -> None:
    result = run(str(EXAMPLES / "pasta.jsonl"), "--system", f"{runnables}:make_bad_chain")
    assert result.exit_code == 1
    assert 'returned a mapping without "answer" or "retrieved" (keys: "output")' in result.stderr


def test_a_retriever_object_with_metadata_ids_and_per_query_failures(
    runnables: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    result = run(str(EXAMPLES / "pasta-beir"), "--system", f"{runnables}:picky", "-o", str(out))
    assert result.exit_code == 1  # b1 failed: counted, reported, never scored
    (found,) = results_of(out)
    assert found["counts"]["failed"] == 1 and found["counts"]["scored"] == 6
    by_id = {q["id"]: q for q in found["per_query"]}
    assert "ConnectionError: index offline" in by_id["b1"]["error"]
    assert by_id["b2"]["ranking"] == [["pesto", 1.0]]  # metadata["doc_id"] names it
    assert found["metrics"]["retrieval"]["mrr"]["count"] == 6


def test_a_runnable_past_the_system_timeout_fails_that_question_only(
    runnables: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    result = run(
        str(EXAMPLES / "pasta.jsonl"), "--system", f"{runnables}:slow_chain",
        "--system-timeout", "0.5", "-o", str(out),
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    (found,) = results_of(out)
    failed = {q["id"]: q["error"] for q in found["per_query"] if q["status"] == "failed"}
    assert failed and all("no reply within 0.5 s (--system-timeout)" in e for e in failed.values())
    assert found["counts"]["scored"] == 14 - len(failed)


def test_the_example_sweep_puts_every_way_in_beside_bm25(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)  # the callables are imported from the current directory
    out = tmp_path / "run"
    result = run("examples/systems/sweep.yaml", "-o", str(out))
    assert result.exit_code == 0, result.output
    found = {r["setup"]["name"]: r for r in results_of(out)}
    assert list(found) == ["bm25", "keyword-function", "langchain-chain", "made-elsewhere"]
    assert len({r["comparability_key"] for r in found.values()}) == 1
    assert found["bm25"]["varied"] == ["retriever"]
    assert found["bm25"]["setup"]["tracks"] == ["retrieval"]
    assert [found[n]["setup"]["system"]["kind"] for n in list(found)[1:]] == [
        "callable",
        "callable",
        "predictions",
    ]
    # The generation table lists the three systems, not BM25 (which answered nothing).
    generation = result.stdout[result.stdout.index("generation: ") :]
    assert "made-elsewhere" in generation and "bm25" not in generation
