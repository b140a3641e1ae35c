"""`lasagna benchmark run` on retrieval: metrics equal trec_eval's, results.json, refusals,
exit codes."""

from __future__ import annotations

import hashlib
import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_cli.engine.records._store import RunStore, iter_records

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "data"
SHARED = ROOT.parent / "shared" / "data" / "datasets"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data is not present")


def run(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(app, ["benchmark", "run", *args], env=env)


def results_of(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "results.json").read_text(encoding="utf-8"))
    return data


def trec_eval(per_query: list[dict[str, Any]], k: int) -> dict[str, dict[str, float]]:
    """pytrec_eval (trec_eval itself) on the run's own rankings and judgments.

    Scores are given from the rank (depth, depth - 1, ...), so trec_eval sees each ranking in
    exactly the recorded order, ties included.
    """
    import pytrec_eval

    judged = [q for q in per_query if q.get("metrics")]
    qrels = {q["id"]: {d: int(g) for d, g in q["judgments"].items()} for q in judged}
    runs = {
        q["id"]: {doc: float(len(q["ranking"]) - i) for i, (doc, _) in enumerate(q["ranking"])}
        for q in judged
    }
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", f"recall.{k}", "recip_rank"})
    found = evaluator.evaluate(runs)
    # trec_eval leaves out a query with an empty ranking; every measure is 0 for it.
    return {
        q["id"]: {
            "ndcg@10": found.get(q["id"], {}).get("ndcg_cut_10", 0.0),
            f"recall@{k}": found.get(q["id"], {}).get(f"recall_{k}", 0.0),
            "mrr": found.get(q["id"], {}).get("recip_rank", 0.0),
        }
        for q in judged
    }


def assert_equal_to_trec_eval(result: dict[str, Any], k: int) -> None:
    reference = trec_eval(result["per_query"], k)
    assert reference, "no judged query"
    for query in result["per_query"]:
        if query["id"] in reference:
            for metric, value in reference[query["id"]].items():
                assert query["metrics"][metric] == pytest.approx(value, abs=1e-12), (
                    query["id"],
                    metric,
                )
    for metric in ("ndcg@10", f"recall@{k}", "mrr"):
        expected = sum(r[metric] for r in reference.values()) / len(reference)
        summary = result["metrics"]["retrieval"][metric]
        assert summary["mean"] == pytest.approx(expected, abs=1e-12)
        assert summary["count"] == len(reference) and summary["missing"] == 0
        assert summary["ci95_low"] <= summary["mean"] <= summary["ci95_high"]


@pytest.mark.parametrize(("data", "k"), [("pasta-beir", 3), ("pasta.jsonl", 2), ("pasta.csv", 10)])
def test_ranking_metrics_equal_trec_eval_on_the_runs_own_rankings(
    tmp_path: Path, data: str, k: int
) -> None:
    out = tmp_path / "run"
    result = run(str(EXAMPLES / data), "--top-k", str(k), "-o", str(out))
    assert result.exit_code == 0, result.output
    (found,) = results_of(out)["results"]
    assert_equal_to_trec_eval(found, k)
    for query in found["per_query"]:
        if "ranking" in query:
            assert len(query["ranking"]) <= max(k, 10)


@needs_shared
def test_msmarco_ndcg_equals_trec_eval(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = run(str(SHARED / "beir" / "msmarco"), "--profile", "speed", "-o", str(out))
    assert result.exit_code == 0, result.output
    (found,) = results_of(out)["results"]
    assert found["dataset"]["name"] == "local/msmarco@19044231c5f4"
    assert found["counts"] == {"questions": 43, "scored": 43, "failed": 0, "not_run": 0}
    assert_equal_to_trec_eval(found, 5)  # the default top-k
    # Graded judgments (1, 2, 3) reach nDCG as gains.
    assert {g for q in found["per_query"] for g in q["judgments"].values()} == {1, 2, 3}


@needs_shared
@pytest.mark.parametrize(
    ("path", "extra"),
    [
        ("beir/dbpedia", []),
        ("beir/arcd", ["--drop-unknown-judgments"]),
        ("squad/haystack_small.json", []),
    ],
)
def test_every_real_set_runs(tmp_path: Path, path: str, extra: list[str]) -> None:
    out = tmp_path / "run"
    result = run(str(SHARED / path), *extra, "-o", str(out))
    assert result.exit_code == 0, result.output
    (found,) = results_of(out)["results"]
    assert found["counts"]["failed"] == 0
    assert_equal_to_trec_eval(found, 5)  # the default top-k


def test_results_json_holds_what_reproduces_and_groups_the_numbers(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    assert run(str(EXAMPLES / "pasta.jsonl"), "-o", str(first)).exit_code == 0
    assert run(str(EXAMPLES / "pasta.jsonl"), "-o", str(second)).exit_code == 0
    # Same inputs and seed: byte-identical results (no timings, no cache flags inside).
    assert (first / "results.json").read_bytes() == (second / "results.json").read_bytes()
    (found,) = results_of(first)["results"]
    fixed = found["held_fixed"]
    assert set(fixed) == {
        "metrics_version",
        "dataset",
        "revision",
        "split",
        "sample_ids_sha256",
        "corpus_provenance",
        "retriever",
        "judge",
    }
    blob = json.dumps(fixed, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert found["comparability_key"] == hashlib.sha256(blob.encode()).hexdigest()
    assert fixed["corpus_provenance"] == "pooled_gold"
    assert fixed["revision"].startswith("sha256:b16e975f7950")
    assert fixed["retriever"]["stemmer"].startswith("snowball-english")
    assert fixed["retriever"]["tokenizer"] == "lowercase, regex \\w\\w+ (unicode)"
    # Unanswerable rows are retrieved for but have nothing relevant: not averaged in.
    assert found["metrics"]["retrieval"]["ndcg@10"]["count"] == 12
    assert found["metrics"]["retrieval"]["evidence_recall"]["count"] == 12
    manifest = json.loads((first / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["versions"]["lasagna-cli"] and manifest["seeds"]["sampling"] == 42
    assert len(manifest["config_hash"]) == 64
    # Task records are one line each (read by tools; retrieval alone: in batch files); the
    # run's summaries are indented.
    assert len(list(iter_records(RunStore(first)))) == 14
    (batch,) = (first / "tasks").glob("*/*/batch-*.jsonl")
    assert batch.read_text(encoding="utf-8").count("\n") == 14
    assert (first / "results.json").read_text(encoding="utf-8").startswith('{\n "bootstrap"')
    assert (first / "manifest.json").read_text(encoding="utf-8").startswith('{\n "config"')


def test_pooled_gold_and_a_real_corpus_never_share_a_group(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep.yaml"
    for name in ("pasta.jsonl", "pasta-beir"):
        source = EXAMPLES / name
        if source.is_dir():
            shutil.copytree(source, tmp_path / name)
        else:
            shutil.copy(source, tmp_path / name)
    sweep.write_text("benchmarks:\n  - path: pasta.jsonl\n  - path: pasta-beir\n", encoding="utf-8")
    assert run(str(sweep), "-o", str(tmp_path / "run")).exit_code == 0
    pooled, native = results_of(tmp_path / "run")["results"]
    assert pooled["dataset"]["corpus_provenance"] == "pooled_gold"
    assert native["dataset"]["corpus_provenance"] == "native"
    assert pooled["comparability_key"] != native["comparability_key"]


def test_filters_and_a_seeded_draw(tmp_path: Path) -> None:
    out = tmp_path / "f"
    assert (
        run(
            str(EXAMPLES / "pasta.jsonl"), "--filter", "question_type=multihop", "-o", str(out)
        ).exit_code
        == 0
    )
    (found,) = results_of(out)["results"]
    assert [q["id"] for q in found["per_query"]] == ["q02", "q10"]

    out = tmp_path / "n"
    assert (
        run(str(EXAMPLES / "pasta.jsonl"), "-n", "5", "--seed", "7", "-o", str(out)).exit_code == 0
    )
    (found,) = results_of(out)["results"]
    ids = [f"q{i:02d}" for i in range(1, 15)]
    # lasagna-rag's draw: random.Random(seed).sample over the rows in file order.
    assert [q["id"] for q in found["per_query"]] == random.Random(7).sample(ids, 5)


# ------------------------------------------------------------------ refusals, exit codes


@pytest.mark.parametrize(
    ("data", "args", "words"),
    [
        (
            "pasta-beir",
            ["--tracks", "generation", "--generator", "openai/x"],
            [
                "cannot run the generation track",
                "a BEIR folder has relevance judgments but no answers",
                'use a JSONL file with "answer" fields',
                "--tracks retrieval",
            ],
        ),
        (
            "pasta-beir",
            ["--tracks", "closed-book", "--generator", "openai/x"],
            ["cannot run the closed-book track"],
        ),
        (
            "pasta.jsonl",
            ["--tracks", "retrieval,generation"],
            ["the generation track needs a model", "--generator MODEL", "local/smollm2"],
        ),
    ],
)
def test_an_unsupported_track_is_refused_before_anything_loads(
    tmp_path: Path, data: str, args: list[str], words: list[str]
) -> None:
    out = tmp_path / "run"
    result = run(str(EXAMPLES / data), *args, "-o", str(out))
    assert result.exit_code == 2
    for word in words:
        assert word in result.stderr
    assert "validate-data" in result.stderr
    assert "indexed" not in result.stderr and "Traceback" not in result.output
    assert not out.exists()  # refused before the run folder, an index or a model


def test_no_contexts_no_retrieval(tmp_path: Path) -> None:
    data = tmp_path / "qa.jsonl"
    data.write_text('{"question": "Q?", "answer": "A"}\n', encoding="utf-8")
    result = run(str(data), "--tracks", "retrieval", "-o", str(tmp_path / "r"))
    assert result.exit_code == 2
    assert "no row has contexts, so there is nothing to retrieve" in result.stderr
    assert 'add "contexts" to the rows, or use a BEIR folder' in result.stderr
    # With no track asked for, it says what is possible: generation, with a model.
    result = run(str(data), "-o", str(tmp_path / "r"))
    assert result.exit_code == 2
    assert "which needs a model: add --generator MODEL" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--profile", "sped"], 'unknown profile "sped" (did you mean "speed"?)'),
        (["--tracks", "retreival"], 'unknown track "retreival" (did you mean "retrieval"?)'),
        (["--filter", "kind=x"], 'cannot filter on "kind"'),
        (["--filter", "question_type=essay"], "no question matches the filters"),
        (["--filter", "nonsense"], "--filter: expected key=value"),
        (["--split", "dev"], 'has no split "dev"; it has test'),
        (["-n", "0"], "-n: expected a whole number >= 1"),
        (["--concurrency", "0"], "--concurrency: expected a whole number >= 1"),
        (["--top-k", "0"], "error: --top-k: expected a whole number >= 1, got 0"),
    ],
)
def test_bad_usage_is_one_line_and_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    result = run(str(EXAMPLES / "pasta.jsonl"), *args, "-o", str(tmp_path / "r"))
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_bad_data_lists_every_problem_and_exits_1(tmp_path: Path) -> None:
    data = tmp_path / "qa.jsonl"
    data.write_text('{"question": "Q?", "anwser": "A"}\n{"qestion": "R?"}\n', encoding="utf-8")
    result = run(str(data), "-o", str(tmp_path / "r"))
    assert result.exit_code == 1
    assert 'row 1: unknown field "anwser" (did you mean "answer"?)' in result.stderr
    assert 'row 2: unknown field "qestion" (did you mean "question"?)' in result.stderr
    assert "Traceback" not in result.output


def test_a_missing_path_exits_2_with_what_to_give(tmp_path: Path) -> None:
    # A file named on the command line that is not there is a usage error, as for every
    # command; a name close to a registered benchmark's is suggested.
    result = run(str(tmp_path / "nope.jsonl"), "-o", str(tmp_path / "r"))
    assert result.exit_code == 2
    assert "no such file or folder" in result.stderr
    assert not (tmp_path / "r").exists()
    typo = run("locomoo")
    assert typo.exit_code == 2
    assert 'did you mean "locomo", a registered benchmark? run it with --data-dir' in typo.stderr


def test_a_run_folder_that_cannot_be_made_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("x")
    result = run(str(EXAMPLES / "pasta.jsonl"), "-o", str(tmp_path / "a-file" / "run"))
    assert result.exit_code == 2, result.output
    assert "cannot create the run folder" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_an_existing_run_folder_needs_resume(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert run(str(EXAMPLES / "pasta.csv"), "-o", str(out)).exit_code == 0
    again = run(str(EXAMPLES / "pasta.csv"), "-o", str(out))
    assert again.exit_code == 2
    assert "already holds a run; add --resume" in again.stderr


def test_without_o_each_run_gets_a_new_folder_and_resume_takes_the_latest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert run("--resume", str(EXAMPLES / "pasta.csv")).exit_code == 2  # nothing to resume
    assert run(str(EXAMPLES / "pasta.csv")).exit_code == 0
    assert run(str(EXAMPLES / "pasta.jsonl")).exit_code == 0
    assert run(str(EXAMPLES / "pasta.csv")).exit_code == 0
    folders = sorted(p.name for p in (tmp_path / "runs").iterdir())
    assert len(folders) == 3
    assert sum(f.startswith("pasta.csv-") for f in folders) == 2
    latest = max(f for f in folders if f.startswith("pasta.csv-"))
    again = run(str(EXAMPLES / "pasta.csv"), "--resume")
    assert again.exit_code == 0
    assert "resuming: 6 of 6 tasks already finished" in again.stderr
    assert f"runs/{latest}/results.json" in again.stdout
