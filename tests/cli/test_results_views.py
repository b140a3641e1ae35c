"""The views over a run's results: `benchmark compare`, `benchmark export`, `--prices` on
run and sweep, `Results.to_pandas()`; each checked against results.json and against the
references (pytrec_eval for the TREC run file)."""

from __future__ import annotations

import csv
import io
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from tests._fake_env import fake_env
from typer.testing import CliRunner

from lasagna_cli import load_results
from lasagna_cli._app import app
from lasagna_judge.testing import FakeLLMServer

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DATA = EXAMPLES / "data"
PRICES = {"openai/fake": [1.0, 2.0], "judge-model": [0.5, 0.5]}


def invoke(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(app, list(args), env=env, catch_exceptions=False)


def results_of(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "results.json").read_text(encoding="utf-8"))
    return data


def reply(request: dict[str, Any]) -> str:
    everything = json.dumps(request["messages"], ensure_ascii=False)
    if "Answer to grade:" in everything:
        return json.dumps({"reasoning": "the answer <b>matches</b>", "score": 4})
    question = re.search(r"Question: (.*)", request["messages"][-1]["content"])
    assert question is not None
    if "carbonara" in question.group(1):
        return "<script>window.pwned = 1</script>No"
    if "first lasagna recipe" in question.group(1):
        return "Not mentioned"
    return "wide, flat pasta sheets"


@pytest.fixture(scope="module")
def sweep_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("views") / "sweep"
    result = invoke("benchmark", "run", str(DATA / "sweep.yaml"), "-o", str(out))
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def generated_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """pasta.jsonl answered and judged by the fake server, priced."""
    tmp = tmp_path_factory.mktemp("generated")
    prices = tmp / "prices.json"
    prices.write_text(json.dumps(PRICES), encoding="utf-8")
    out = tmp / "run"
    with FakeLLMServer(reply=reply) as server:
        env = fake_env(tmp, server)
        result = invoke(
            "benchmark", "run", str(DATA / "pasta.jsonl"), "--tracks", "retrieval,generation",
            "--generator", "openai/fake", "--judge", "openai/judge-model", "--prices",
            str(prices), "-o", str(out), env=env,
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "cost (answers and grades, cached calls included): bm25-k5" in result.output
    return out


def test_compare_between_setups_of_one_run(sweep_run: Path) -> None:
    result = invoke(
        "benchmark", "compare", str(sweep_run), "--setup", "bm25-k1", "--setup", "bm25-k5",
        "--format", "json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)["comparisons"]
    assert {c["a"]["dataset"] for c in found} == {
        r["dataset"]["name"] for r in results_of(sweep_run)["results"]
    }
    for comparison in found:
        assert comparison["comparable"] and not comparison["differs"]
        assert comparison["compared_settings"] == []  # top_k: varied within the run
        by_metric = {m["metric"]: m for m in comparison["metrics"]}
        ndcg = by_metric["retrieval/ndcg@10"]
        # The means are results.json's over the questions both scored.
        results = {
            r["setup"]["name"]: r
            for r in results_of(sweep_run)["results"]
            if r["dataset"]["name"] == comparison["a"]["dataset"]
        }
        assert ndcg["mean_a"] == pytest.approx(
            results["bm25-k1"]["metrics"]["retrieval"]["ndcg@10"]["mean"], abs=1e-12
        )
        assert 0.0 <= ndcg["p_value"] <= 1.0
        if ndcg["n"] >= 6:
            assert ndcg["ci95_low"] <= ndcg["difference"] <= ndcg["ci95_high"]
        else:  # 2 multihop questions: no test at 5% is possible, so no interval
            assert ndcg["ci95_low"] is None and ndcg["ci95_high"] is None
            assert ndcg["smallest_p"] >= 0.05


def test_identical_setups_compare_as_p_1(sweep_run: Path, tmp_path: Path) -> None:
    """The same run against itself: every difference 0, p = 1, intervals [0, 0] (none
    with fewer than 6 questions: no test is possible), and a sentence that says so."""
    result = invoke("benchmark", "compare", str(sweep_run), str(sweep_run), "--format", "json")
    assert result.exit_code == 0, result.output
    for comparison in json.loads(result.output)["comparisons"]:
        for row in comparison["metrics"]:
            assert row["difference"] == 0.0 and row["p_value"] == 1.0
            interval = [row["ci95_low"], row["ci95_high"]]
            assert interval == ([0.0, 0.0] if row["n"] >= 6 else [None, None])
            assert row["detectable"] is None  # no spread: never "detectable 0.000"
            assert f"score the same on {row['metric']} " in row["verdict"]


def test_compare_refuses_other_questions_unless_forced(sweep_run: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    result = invoke(
        "benchmark", "run", str(DATA / "pasta.jsonl"), "--filter", "question_type=factoid",
        "-o", str(other),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    refused = CliRunner().invoke(
        app, ["benchmark", "compare", str(sweep_run), str(other), "--setup", "bm25-k5"]
    )
    assert refused.exit_code == 2
    message = refused.output.strip()
    assert message.count("\n") == 0 and "sample_ids_sha256" in message and "--force" in message
    forced = invoke("benchmark", "compare", str(sweep_run), str(other), "--setup", "bm25-k5",
                    "--force", "--format", "json")  # fmt: skip
    assert forced.exit_code == 0
    assert "compared with --force; they differ in sample_ids_sha256" in forced.stderr


def test_csv_jsonl_and_parquet_rows_recompute_the_means(sweep_run: Path, tmp_path: Path) -> None:
    results = results_of(sweep_run)["results"]
    csv_text = invoke("benchmark", "export", str(sweep_run), "--format", "csv").stdout
    rows = list(csv.DictReader(io.StringIO(csv_text)))
    jsonl = invoke("benchmark", "export", str(sweep_run), "--format", "jsonl").stdout
    json_rows = [json.loads(line) for line in jsonl.splitlines()]
    target = tmp_path / "rows.parquet"
    assert invoke("benchmark", "export", str(sweep_run), "--format", "parquet", "-o",
                  str(target)).exit_code == 0  # fmt: skip
    import pyarrow.parquet as pq

    parquet_rows = pq.read_table(target).to_pylist()
    assert (
        len(rows)
        == len(json_rows)
        == len(parquet_rows)
        == sum(len(r["per_query"]) for r in results)
    )
    for result in results:
        key = (result["dataset"]["name"], result["setup"]["name"])
        for name, summary in result["metrics"]["retrieval"].items():
            column = f"retrieval/{name}"
            for found in (rows, json_rows, parquet_rows):
                values = [
                    float(r[column])
                    for r in found
                    if (r["dataset"], r["setup"]) == key and r.get(column) not in (None, "")
                ]
                assert len(values) == summary["count"]
                assert math.fsum(values) / len(values) == summary["mean"]  # exactly


def test_trec_run_scored_by_trec_eval_gives_the_runs_ndcg(tmp_path: Path) -> None:
    import pytrec_eval

    out = tmp_path / "beir"
    assert invoke("benchmark", "run", str(DATA / "pasta-beir"), "-o", str(out)).exit_code == 0
    run_file, qrels_file = tmp_path / "run.trec", tmp_path / "qrels.txt"
    assert invoke("benchmark", "export", str(out), "--format", "trec", "-o",
                  str(run_file)).exit_code == 0  # fmt: skip
    assert invoke("benchmark", "export", str(out), "--format", "qrels", "-o",
                  str(qrels_file)).exit_code == 0  # fmt: skip
    run: dict[str, dict[str, float]] = {}
    for line in run_file.read_text().splitlines():
        qid, q0, doc, _rank, score, tag = line.split()
        assert q0 == "Q0" and tag == "bm25-k5"
        run.setdefault(qid, {})[doc] = float(score)
    qrels: dict[str, dict[str, int]] = {}
    for line in qrels_file.read_text().splitlines():
        qid, _, doc, grade = line.split()
        qrels.setdefault(qid, {})[doc] = int(grade)
    scores = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
    ndcg = math.fsum(s["ndcg_cut_10"] for s in scores.values()) / len(scores)
    (result,) = results_of(out)["results"]
    assert ndcg == pytest.approx(result["metrics"]["retrieval"]["ndcg@10"]["mean"], abs=1e-12)

    # ...and the run file read back as --predictions gives the same figures per question.
    again = tmp_path / "again"
    back = invoke("benchmark", "run", str(DATA / "pasta-beir"), "--predictions", str(run_file),
                  "-o", str(again))  # fmt: skip
    assert back.exit_code == 0, back.output
    (replayed,) = results_of(again)["results"]
    assert {q["id"]: q["metrics"] for q in replayed["per_query"]} == {
        q["id"]: q["metrics"] for q in result["per_query"]
    }
    compared = invoke("benchmark", "compare", str(out), str(again), "--format", "json")
    (comparison,) = json.loads(compared.output)["comparisons"]
    assert comparison["compared_settings"]  # BM25 against a system: what is compared
    assert all(m["difference"] == 0.0 and m["p_value"] == 1.0 for m in comparison["metrics"])


def test_trec_needs_one_setup_and_a_bad_run_line_is_named(sweep_run: Path, tmp_path: Path) -> None:
    several = CliRunner().invoke(app, ["benchmark", "export", str(sweep_run), "--format", "trec"])
    assert several.exit_code == 2 and "--setup bm25-k1" in several.output
    bad = tmp_path / "bad.trec"
    bad.write_text("b1 Q0 ragu 1 3.0 run\nb1 Q0 lasagna one 2.0 run\n", encoding="utf-8")
    result = CliRunner().invoke(
        app, ["benchmark", "run", str(DATA / "pasta-beir"), "--predictions", str(bad),
              "-o", str(tmp_path / "x")],
    )  # fmt: skip
    assert result.exit_code == 1 and "line 2: rank and score must be numbers" in result.output


def test_prices_reach_results_the_export_and_the_report(generated_run: Path) -> None:
    (result,) = results_of(generated_run)["results"]
    usage = result["usage"]
    expected = (usage["input_tokens"] * 1.0 + usage["output_tokens"] * 2.0) / 1e6 + (
        usage["judge_input_tokens"] * 0.5 + usage["judge_output_tokens"] * 0.5
    ) / 1e6
    assert usage["cost_usd"] == pytest.approx(expected) and usage["unpriced"] == []
    assert results_of(generated_run)["prices"]["openai/fake"] == [1.0, 2.0]
    exported = invoke("benchmark", "export", str(generated_run), "--format", "jsonl").stdout
    rows = [json.loads(line) for line in exported.splitlines()]
    assert math.fsum(r["generation.cost_usd"] for r in rows) == pytest.approx(expected)
    f1 = [r["generation/f1"] for r in rows if r["generation/f1"] is not None]
    assert math.fsum(f1) / len(f1) == result["metrics"]["generation"]["f1"]["mean"]


def test_to_pandas_is_the_export(sweep_run: Path) -> None:
    frame = load_results(sweep_run).to_pandas()
    results = results_of(sweep_run)["results"]
    assert len(frame) == sum(len(r["per_query"]) for r in results)
    means = frame.groupby(["dataset", "setup"])["retrieval/ndcg@10"].mean()
    for result in results:
        key = (result["dataset"]["name"], result["setup"]["name"])
        expected = result["metrics"]["retrieval"]["ndcg@10"]["mean"]
        assert means[key] == pytest.approx(expected, abs=1e-12)


def test_a_missing_extra_is_one_line_naming_the_install(
    sweep_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import builtins

    real_import = builtins.__import__

    def no_pyarrow(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith(("pyarrow", "pandas")):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    result = CliRunner().invoke(
        app, ["benchmark", "export", str(sweep_run), "--format", "parquet", "-o",
              str(tmp_path / "x.parquet")],
    )  # fmt: skip
    assert result.exit_code == 2
    assert 'pip install "lasagna-cli[parquet]"' in result.output
    assert result.output.strip().count("\n") == 0
    from lasagna_cli.engine._errors import MissingExtraError

    with pytest.raises(MissingExtraError, match=r"lasagna-cli\[pandas\]"):
        load_results(sweep_run).to_pandas()


def test_bad_input_is_one_line(tmp_path: Path, sweep_run: Path) -> None:
    cases = [
        (["benchmark", "report", str(tmp_path / "nothing")], 2, "no such folder"),
        (["benchmark", "export", str(sweep_run), "--format", "xlsx"], 2, "expected one of csv"),
        (["benchmark", "compare", str(sweep_run), "--setup", "nope", "--setup", "bm25-k1"], 2,
         "has no such setup"),
        (["benchmark", "compare", str(sweep_run), "--metric", "retrieval/nope", "--setup",
          "bm25-k1", "--setup", "bm25-k5"], 2, "not a metric both results have"),
    ]  # fmt: skip
    (tmp_path / "empty").mkdir()
    cases.append((["benchmark", "report", str(tmp_path / "empty")], 1, "expected a run folder"))
    for args, code, words in cases:
        result = CliRunner().invoke(app, args)
        assert result.exit_code == code, (args, result.output)
        assert words in result.output and result.output.strip().count("\n") == 0, result.output


SWEEP_DATASETS = {
    "facts": {
        "q1": {"input": "What is the capital of France?", "output": "Paris"},
        "q2": {"input": "Who wrote Hamlet?", "output": ["Shakespeare", "William Shakespeare"]},
    },
    "quiz": {
        "m1": {"input": "Which vitamin do oranges have most of?",
               "output": {"type": "MCQ", "options": {"a": "Vitamin A", "b": "Vitamin C"},
                          "answer": "b"}},
    },
}  # fmt: skip
SWEEP_SETUPS = """\
[alpha]
provider = "fake"
model = "model-alpha"

[beta]
provider = "fake"
model = "model-beta"
"""


def sweep_answer(request: dict[str, Any]) -> str:
    text = request["messages"][-1]["content"]
    if "France" in text:
        return "Paris" if request["model"] == "model-alpha" else "Lyon"
    if "Vitamin" in text:
        return "b"
    return "Shakespeare"


def test_a_sweep_folder_is_reported_exported_and_priced(tmp_path: Path) -> None:
    (tmp_path / "datasets.json").write_text(json.dumps(SWEEP_DATASETS))
    (tmp_path / "setups.toml").write_text(SWEEP_SETUPS)
    prices = tmp_path / "prices.toml"
    prices.write_text('"model-alpha" = [1.0, 1.0]\n"model-beta" = [2.0, 2.0]\n')
    out = tmp_path / "out"
    with FakeLLMServer(reply=sweep_answer) as server:
        (tmp_path / "config.toml").write_text(
            f'[providers.fake]\napi = "openai"\nbase_url = "{server.base_url}"\n'
            'api_key_env = "SWEEP_KEY"\n'
        )
        result = CliRunner().invoke(
            app,
            ["benchmark", "sweep", "-d", str(tmp_path / "datasets.json"), "-b",
             str(tmp_path / "setups.toml"), "-o", str(out), "--prices", str(prices)],
            env={"SWEEP_KEY": "sk-test"},
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "cost (answers and grades, cached calls included): alpha on facts $" in result.output
    assert (out / "lasagna-prices.json").is_file()
    # Without --datasets the folder's questions are unknown: one line, what to give.
    no_data = CliRunner().invoke(app, ["benchmark", "export", str(out)])
    assert no_data.exit_code == 2 and "--datasets FILE" in no_data.output
    exported = invoke("benchmark", "export", str(out), "--datasets",
                      str(tmp_path / "datasets.json"), "--format", "jsonl").stdout  # fmt: skip
    rows = {(r["dataset"], r["setup"], r["question_id"]): r
            for r in map(json.loads, exported.splitlines())}  # fmt: skip
    assert rows[("facts", "alpha", "q1")]["generation/exact_match"] == 1.0
    assert rows[("facts", "beta", "q1")]["generation/exact_match"] == 0.0
    assert rows[("quiz", "beta", "m1")]["generation/accuracy"] == 1.0
    alpha = rows[("facts", "alpha", "q1")]
    tokens = alpha["generation.input_tokens"] + alpha["generation.output_tokens"]
    assert alpha["generation.cost_usd"] == pytest.approx(tokens * 1.0 / 1e6)
    compared = invoke("benchmark", "compare", str(out), "--datasets",
                      str(tmp_path / "datasets.json"), "--format", "json")  # fmt: skip
    facts = next(c for c in json.loads(compared.stdout)["comparisons"]
                 if c["a"]["dataset"] == "facts")  # fmt: skip
    em = next(m for m in facts["metrics"] if m["metric"] == "generation/exact_match")
    assert (em["n"], em["difference"]) == (2, -0.5)
    page = tmp_path / "sweep.html"
    report = invoke("benchmark", "report", str(out), "--datasets",
                    str(tmp_path / "datasets.json"), "-o", str(page))  # fmt: skip
    assert report.exit_code == 0, report.output
    html = page.read_text(encoding="utf-8")
    assert "What is the capital of France?" in html and "Lyon" in html
