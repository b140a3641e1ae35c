"""Dense and hybrid retrieval through `benchmark run`: WordLlama offline, an OpenAI-compatible
embedder through the fake server, one leaderboard for bm25 / dense / hybrid, vectors kept
between runs, and every bad component refused in one line before any question."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_cli.engine.records._store import RunStore, iter_records
from lasagna_judge.testing import FakeLLMServer

np = pytest.importorskip("numpy")

ROOT = Path(__file__).resolve().parents[2]
BEIR = ROOT / "examples" / "data" / "pasta-beir"


def run(*args: str, env: dict[str, str]) -> Any:
    return CliRunner().invoke(app, ["benchmark", "run", *args], env=env)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"LASAGNA_CACHE_DIR": str(tmp_path / "cache"), "OPENAI_API_KEY": "", "MODEL_NAME": ""}


def records(out: Path) -> list[dict[str, Any]]:
    return [record for _, record in iter_records(RunStore(out))]


def test_dense_with_the_default_embedder_needs_nothing(tmp_path: Path, env: dict[str, str]) -> None:
    out = tmp_path / "run"
    first = run(str(BEIR), "--retriever", "dense", "-o", str(out), env=env)
    assert first.exit_code == 0, first.output
    assert "local/wordllama, 256 dimensions, exact; vectors embedded" in first.stderr
    (result,) = json.loads((out / "results.json").read_text())["results"]
    assert result["setup"]["name"] == "dense-k5"
    assert result["setup"]["retriever"]["method"] == "dense"
    assert result["setup"]["retriever"]["embedder"] == "local/wordllama"
    assert result["setup"]["retrieval_index"] == {
        "embedder": "local/wordllama",
        "endpoint": None,
        "dimension": 256,
        "index": "exact",
    }
    assert result["metrics"]["retrieval"]["ndcg@10"]["mean"] > 0.8  # a real ranking
    for record in records(out):
        scores = [score for _, score in record["retrieval"]["ranking"]]
        assert scores == sorted(scores, reverse=True) and -1.0 <= scores[-1] <= scores[0] <= 1.0
    again = run(str(BEIR), "--retriever", "dense", "-o", str(tmp_path / "again"), env=env)
    assert again.exit_code == 0 and "vectors read" in again.stderr  # nothing embedded twice
    for section in ("ranking", "index", "metrics"):
        assert (
            records(tmp_path / "again")[0]["retrieval"][section]
            == records(out)[0]["retrieval"][section]
        )


def test_bm25_dense_and_hybrid_share_one_leaderboard(tmp_path: Path, env: dict[str, str]) -> None:
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(
        f"benchmarks:\n  - path: {BEIR}\nsetups:\n"
        "  - {name: bm25, retriever: {kind: bm25}}\n"
        "  - {name: dense, retriever: {kind: dense}}\n"
        "  - {name: hybrid, retriever: {kind: hybrid, rrf_k: 60, weights: [1, 1]}}\n"
    )
    out = tmp_path / "run"
    result = run(str(sweep), "-o", str(out), "--format", "json", env=env)
    assert result.exit_code == 0, result.output
    results = json.loads((out / "results.json").read_text())["results"]
    assert {r["comparability_key"] for r in results} == {results[0]["comparability_key"]}
    assert all(r["varied"] == ["retriever"] for r in results)
    by_name = {r["setup"]["name"]: r for r in results}
    assert by_name["hybrid"]["setup"]["retriever"]["fusion"] == "reciprocal rank"
    # The hybrid ranking is the fusion of the other two, recomputed here from their records.
    tasks = {(r["setup"], r["item"]): r for r in (t | t["task"] for t in records(out))}
    for (setup, item), record in tasks.items():
        if setup != "hybrid":
            continue
        bm25 = tasks[("bm25", item)]["retrieval"]["ranking"]
        dense = tasks[("dense", item)]["retrieval"]["ranking"]
        totals: dict[str, float] = {}
        for ranking in (bm25, dense):
            for rank, (doc, _) in enumerate(ranking, start=1):
                totals[doc] = totals.get(doc, 0.0) + 1 / (60 + rank)
        best = max(totals, key=lambda doc: totals[doc])
        assert record["retrieval"]["ranking"][0][0] == best


def test_an_openai_compatible_embedder_is_recorded_with_its_server(
    tmp_path: Path, env: dict[str, str]
) -> None:
    out = tmp_path / "run"
    with FakeLLMServer(embedding_dimension=24) as server:
        env = {**env, "LASAGNA_EMBEDDER_BASE_URL": server.base_url}
        result = run(
            str(BEIR), "--retriever", "dense", "--embedder", "openai/emb", "-o", str(out), env=env
        )
        assert result.exit_code == 0, result.output
        assert all(path == "/v1/embeddings" for path in server.paths)
        sent = sum(len(r["input"]) for r in server.requests)
    assert sent == 14 + 7  # every passage and every question, once
    (found,) = json.loads((out / "results.json").read_text())["results"]
    assert found["setup"]["retriever"]["embedder_endpoint"] == server.base_url
    assert found["setup"]["retrieval_index"]["dimension"] == 24
    assert found["held_fixed"]["retriever"]["embedder_endpoint"] == server.base_url


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--retriever", "sparse"], 'unknown retriever "sparse"'),
        (["--embedder", "local/wordllama"], "embedder: is a setting of a dense or hybrid"),
        (["--retriever", "dense", "--embedder", "wordllama"], "expected an embedder named"),
        (["--retriever", "dense", "--collection", "c"], "give --vector-store too"),
        (["--retriever", "dense", "--vector-store", "chroma:8000"], "expected the vector"),
        (["--retriever", "dense", "--embedder", "openai/e"], "needs OPENAI_API_KEY"),
    ],
)
def test_bad_retriever_settings_are_one_usage_line(
    tmp_path: Path, env: dict[str, str], args: list[str], expected: str
) -> None:
    result = run(str(BEIR), *args, "-o", str(tmp_path / "run"), env=env)
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.strip().splitlines()
    assert expected in line and "Traceback" not in result.output


def test_an_unreachable_embedder_is_one_line_before_any_question(
    tmp_path: Path, env: dict[str, str]
) -> None:
    env = {**env, "LASAGNA_EMBEDDER_BASE_URL": "http://127.0.0.1:9/v1"}
    result = run(
        str(BEIR), "--retriever", "dense", "--embedder", "openai/e", "-o", str(tmp_path / "r"),
        env=env,
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    lines = [line for line in result.stderr.splitlines() if "embedder" in line]
    assert lines and "cannot connect to http://127.0.0.1:9" in lines[0]
    assert not list((tmp_path / "r").glob("tasks/*/*/*"))  # no question was asked


def test_fusion_and_the_exact_and_hnsw_indexes_agree_with_brute_force(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from lasagna_cli.engine.retrieval import _vectors
    from lasagna_cli.engine.retrieval._rankings import fuse

    assert fuse([[("a", 9.0), ("b", 8.0)], [("b", 0.9), ("c", 0.8)]], [1.0, 1.0], 60) == [
        ("b", 1 / 62 + 1 / 61),
        ("a", 1 / 61),
        ("c", 1 / 62),
    ]
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(500, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    queries = vectors[:20] + 0.1 * rng.normal(size=(20, 16)).astype(np.float32)
    ids = [f"d{i}" for i in range(500)]
    truth = [[ids[j] for j in np.argsort(-(vectors @ q), kind="stable")[:10]] for q in queries]
    exact = _vectors.VectorIndex(ids, vectors).search_many(queries, 10)
    assert [[doc for doc, _ in r] for r in exact] == truth
    pytest.importorskip("usearch", reason="the HNSW graph is the extra `hnsw`")
    monkeypatch.setattr(_vectors, "EXACT_LIMIT", 100)
    hnsw = _vectors.VectorIndex(ids, vectors)
    assert hnsw.kind == "hnsw"
    found = hnsw.search_many(queries, 10)
    agree = np.mean(
        [len({d for d, _ in f} & set(t)) / 10 for f, t in zip(found, truth, strict=True)]
    )
    assert agree >= 0.95  # an approximate graph; at this size it finds nearly all


def test_a_kag_sweep_searches_a_vector_database(tmp_path: Path, env: dict[str, str]) -> None:
    datasets = {"pasta": {"q1": {"input": "What is béchamel made of?", "output": "butter"}}}
    (tmp_path / "datasets.json").write_text(json.dumps(datasets))
    with FakeLLMServer(reply="butter, flour and milk") as server:
        (tmp_path / "config.toml").write_text(
            f'[providers.fake]\napi = "openai"\nbase_url = "{server.base_url}"\n'
            f'[databases.pasta]\nbeir = "{BEIR}"\ntype = "vector"\n'
            '[retrievers.dense-top3]\ntype = "dense"\ntop_k = 3\n'
            '[retrievers.hybrid-top3]\ntype = "hybrid"\ntop_k = 3\nrrf_k = 10\n'
        )
        setups = "".join(
            f'[{name}]\nprovider = "fake"\nmodel = "m"\nretriever = "{name}-top3"\n'
            'database = "pasta"\nprompt = "{{RETRIEVAL}}\\n{{INPUT}}"\n'
            for name in ("dense", "hybrid")
        )
        (tmp_path / "setups.toml").write_text(setups)
        swept = CliRunner().invoke(
            app,
            ["benchmark", "sweep", "-d", str(tmp_path / "datasets.json"), "-b",
             str(tmp_path / "setups.toml"), "-o", str(tmp_path / "out")],
            env=env,
        )  # fmt: skip
        assert swept.exit_code == 0, swept.output
        prompt = server.requests[0]["messages"][-1]["content"]
    assert "Béchamel is a white sauce" in prompt  # the nearest passage, shown to the model
    setups = {
        p.stem: json.loads(p.read_text())["ok"]["stats"]["setup"]
        for p in (tmp_path / "out").rglob("*.json")
    }
    assert setups["dense"]["retriever"]["type"] == "dense"
    assert setups["dense"]["retriever"]["embedder"] == "local/wordllama"
    assert setups["hybrid"]["retriever"]["rrf_k"] == 10
    assert setups["dense"]["database"]["type"] == "vector"


def test_the_python_api_takes_the_embedders_it_uses(tmp_path: Path) -> None:
    from lasagna_cli import run_benchmark
    from lasagna_cli.engine._errors import EngineUsageError
    from lasagna_judge import make_embedder

    sweep = ROOT / "examples" / "data" / "sweep-retrievers.yaml"
    with pytest.raises(EngineUsageError, match=r"pass embedders=\{'local/wordllama'"):
        run_benchmark(sweep, tmp_path / "none")
    embedder = make_embedder("local/wordllama")
    results = run_benchmark(
        sweep,
        tmp_path / "api",
        embedders={"local/wordllama": embedder},
        vector_folder=tmp_path / "vectors",
    )
    assert results.get(setup="dense").metric("retrieval", "ndcg@10").mean > 0.8
    assert list((tmp_path / "vectors").glob("*.npy"))  # kept for the next run
