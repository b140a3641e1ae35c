"""One benchmark, three doors, the same figures per question.

LoCoMo through the staged pipeline (`run locomo --data-dir ... --step gen`), through a sweep
file entry (`name: locomo`) and through a kag-style sweep over the same questions (its
conversations as a database of documents): the same top-k passages with the same BM25
scores for every question, the same evidence recall where the door records evidence, and,
with a scripted generator, the same answers and the same EM/F1.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_cli.engine.benchmarks import MISSING_ANSWER, load_benchmark
from lasagna_judge.testing import FakeLLMServer

ROOT = Path(__file__).resolve().parents[2]
REAL_LOCOMO = ROOT.parent / "shared" / "data" / "datasets" / "locomo"
MINI_LOCOMO = ROOT / "examples" / "data" / "locomo-mini"


def invoke(args: list[str], env: dict[str, str]) -> Any:
    result = CliRunner().invoke(app, args, env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def read(path: Path) -> Any:
    """A JSON file; of OpenViking's two per-question files, their "results"."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if path.name in ("generated_answers.json", "qa_eval_detailed_results.json"):
        return data["results"]
    return data


def _question_of(request: dict[str, Any]) -> str:
    text = str(request["messages"][-1]["content"])
    return text.rsplit("Question: ", 1)[1].split("\n", 1)[0]


def scripted(references: dict[str, list[str]]) -> Any:
    """A generator that answers by question: the reference, a part of it, or nothing."""

    def reply(request: dict[str, Any]) -> str:
        if "tools" in request or "response_format" in request:  # the judge
            return json.dumps({"reasoning": "scripted", "score": 4})
        question = _question_of(request)
        refs = references.get(question) or [MISSING_ANSWER]
        pick = int(hashlib.sha256(question.encode()).hexdigest(), 16) % 3
        return [refs[0], " ".join(refs[0].split()[:2]) or "x", MISSING_ANSWER][pick]

    return reply


@pytest.fixture
def env(tmp_path: Path) -> Iterator[dict[str, str]]:
    yield {"LASAGNA_CACHE_DIR": str(tmp_path / "cache"), "OPENAI_API_KEY": "test"}


def component(text: str) -> str:
    return re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")


def three_doors(
    data: Path, tmp_path: Path, env: dict[str, str], server: FakeLLMServer, generate: bool
) -> dict[str, dict[str, Any]]:
    """Per question id: {door: (top-k passage texts, rounded scores, evidence recall,
    answer)}."""
    bench = load_benchmark("locomo", data)
    texts: dict[str, str] = {}
    env = {**env, "OPENAI_BASE_URL": server.base_url}
    generator = ["--generator", "openai/gen"] if generate else []

    # 1. The staged pipeline.
    staged = tmp_path / "staged"
    invoke(["benchmark", "run", "locomo", "--data-dir", str(data), "--step", "gen",
            *generator, "-o", str(staged)], env)  # fmt: skip
    for line in (staged / "index" / "passages.jsonl").read_text(encoding="utf-8").splitlines():
        passage = json.loads(line)
        texts[passage["id"]] = passage["text"]
    figures: dict[str, dict[str, Any]] = {}
    for item in read(staged / "generated_answers.json"):
        figures[item["question_id"]] = {
            "staged": (
                [texts[uri] for uri in item["retrieval"]["uris"]],
                [round(s, 6) for s in item["retrieval"]["scores"]],
                item["metrics"]["Recall (lasagna)"],  # the engine's rule; "Recall" is OpenViking's
                item["llm"]["final_answer"],
            )
        }

    # 2. A sweep file entry `name: locomo`.
    sweep_file = tmp_path / "sweep.yaml"
    tracks = "[retrieval, generation]" if generate else "[retrieval]"
    sweep_file.write_text(
        f"benchmarks:\n  - name: locomo\n    data_dir: {data}\n"
        f"setups:\n  - name: bm25\n    generator: {'openai/gen' if generate else 'null'}\n"
        f"tracks: {tracks}\n",
        encoding="utf-8",
    )
    named = tmp_path / "named"
    invoke(["benchmark", "run", str(sweep_file), "-o", str(named)], env)
    (result,) = read(named / "results.json")["results"]
    for query in result["per_query"]:
        top = query["ranking"][:5]
        figures[query["id"]]["named"] = (
            [texts[doc] for doc, _ in top],
            [round(score, 6) for _, score in top],
            (query["metrics"] or {}).get("evidence_recall"),
            query.get("generation", {}).get("prediction"),
        )

    # 3. kag's sweep: DATASETS.json of the same questions, the conversations as documents.
    root = tmp_path / "kag"
    docs = root / "docs"
    docs.mkdir(parents=True)
    for i, doc in enumerate(bench.documents):  # names that sort in the benchmark's order
        (docs / f"{i:03d}-{doc.id}.md").write_text(doc.text, encoding="utf-8")
    questions: dict[str, Any] = {}
    for q in bench.questions:
        refs = [r for r in q.references if r != MISSING_ANSWER]
        questions[component(q.id)] = {"input": q.question, **({"output": refs} if refs else {})}
    (root / "datasets.json").write_text(json.dumps({"locomo": questions}), encoding="utf-8")
    (root / "config.toml").write_text(
        f'[providers.fake]\napi = "openai"\nbase_url = "{server.base_url}"\n'
        '[databases.conversations]\ndocuments = "docs"\n[retrievers.bm25]\ntype = "bm25"\n',
        encoding="utf-8",
    )
    (root / "setups.toml").write_text(
        '[bm25]\nprovider = "fake"\nmodel = "gen"\nretriever = "bm25"\n'
        'database = "conversations"\nprompt = "{{RETRIEVAL}}\\n\\nQuestion: {{INPUT}}"\n',
        encoding="utf-8",
    )
    out = root / "out"
    invoke(["benchmark", "sweep", "-d", str(root / "datasets.json"), "-b",
            str(root / "setups.toml"), "-o", str(out), "-p", "16"], env)  # fmt: skip
    kag_texts: dict[str, str] = {}
    for i, doc in enumerate(bench.documents):
        from lasagna_cli.engine.datasets import cut_documents

        ids, _, chunks = cut_documents([(f"{i:03d}-{doc.id}.md", doc.text)])
        kag_texts.update(zip(ids, chunks, strict=True))
    for q in bench.questions:
        found = read(out / "locomo" / component(q.id) / "bm25.json")["ok"]
        passages = found["stats"]["passages"]
        figures[q.id]["kag"] = (
            [kag_texts[p["id"]] for p in passages],
            [round(p["score"], 6) for p in passages],
            None,  # DATASETS.json has no evidence
            found["result"],
        )
    return figures


def check(figures: dict[str, dict[str, Any]], generate: bool) -> None:
    assert figures
    for question, doors in figures.items():
        assert set(doors) == {"staged", "named", "kag"}, question
        staged, named, kag = doors["staged"], doors["named"], doors["kag"]
        assert staged[0] == named[0] == kag[0], question  # the same passages, in order
        assert staged[1] == named[1] == kag[1], question  # with the same BM25 scores
        assert staged[2] == named[2], question  # evidence recall in the question's documents
        if generate:
            assert staged[3] == named[3] == kag[3], question


def references_of(data: Path) -> dict[str, list[str]]:
    return {q.question: list(q.references) for q in load_benchmark("locomo", data).questions}


def test_the_example_locomo_gives_the_same_figures_through_every_door(
    tmp_path: Path, env: dict[str, str]
) -> None:
    with FakeLLMServer(reply=scripted(references_of(MINI_LOCOMO))) as server:
        figures = three_doors(MINI_LOCOMO, tmp_path, env, server, generate=True)
    check(figures, generate=True)
    # And the same EM/F1: the pipeline's eval, the run's results and kag's stats.
    with FakeLLMServer(reply=scripted(references_of(MINI_LOCOMO))) as server:
        judged = {**env, "OPENAI_BASE_URL": server.base_url}
        invoke(["benchmark", "run", "locomo", "--step", "eval", "--judge", "openai/gen",
                "-o", str(tmp_path / "staged")], judged)  # fmt: skip
    staged_f1 = {
        r["question"]: r["metrics"]["F1 (SQuAD)"]  # the engine's rule; "F1" is OpenViking's
        for r in read(tmp_path / "staged" / "qa_eval_detailed_results.json")
    }
    (result,) = read(tmp_path / "named" / "results.json")["results"]
    questions = {q.id: q.question for q in load_benchmark("locomo", MINI_LOCOMO).questions}
    named_f1 = {questions[q["id"]]: q["generation"]["f1"] for q in result["per_query"]}
    assert staged_f1 == named_f1 and len(named_f1) == len(questions)
    kag = tmp_path / "kag"
    stats = invoke(["benchmark", "stats", "-d", str(kag / "datasets.json"), "--results",
                    str(kag / "out"), "--format", "json"], env)  # fmt: skip
    (row,) = json.loads(stats.stdout)["lasagna"]["setups"].values()
    answerable = [q for q, refs in references_of(MINI_LOCOMO).items() if refs != [MISSING_ANSWER]]
    expected = sum(named_f1[q] for q in answerable) / len(answerable)
    assert row["overall"]["free_form"]["f1"] == pytest.approx(expected, abs=1e-12)


@pytest.mark.skipif(not REAL_LOCOMO.is_dir(), reason="needs ../shared/data/datasets/locomo")
def test_the_real_locomo_gives_the_same_retrieval_through_every_door(
    tmp_path: Path, env: dict[str, str]
) -> None:
    with FakeLLMServer(reply="Not mentioned") as server:
        figures = three_doors(REAL_LOCOMO, tmp_path, env, server, generate=False)
    assert len(figures) == 1540
    check(figures, generate=False)
    recall = [doors["named"][2] for doors in figures.values() if doors["named"][2] is not None]
    assert len(recall) == 1536 and round(sum(recall) / len(recall), 3) == 0.700
