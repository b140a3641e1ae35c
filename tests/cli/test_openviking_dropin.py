"""OpenViking's RAG benchmark configs and command lines, unchanged, against the fake
OpenAI-compatible server: `lasagna benchmark openviking config/X.yaml` (OpenViking's
`python run.py --config config/X.yaml`) and `lasagna benchmark run --config ...`, from a
folder laid out as OpenViking's benchmark/RAG/. `--base-url` is the one addition: the
configs name Volcengine's server, and tests never leave 127.0.0.1."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_judge.testing import FakeLLMServer, RateLimits

HERE = Path(__file__).parent
OPENVIKING = HERE / "fixtures" / "openviking"
ADAPTER_FIXTURES = HERE.parent / "synth" / "fixtures"
CONFIGS = {
    "locomo_config.yaml": "Locomo",
    "syllabusqa_config.yaml": "SyllabusQA",
    "qasper_config.yaml": "Qasper",
    "financebench_config.yaml": "FinanceBench",
    "config.yaml": "Locomo",
}
SECRET = "sk-openviking-secret-0042"


def reply(request: dict[str, Any]) -> str:
    if "tools" in request or "response_format" in request:
        return json.dumps({"reasoning": "matches the gold answer", "score": 4})
    return "Not mentioned"


@pytest.fixture
def server() -> Any:
    with FakeLLMServer(reply=reply) as fake:
        yield fake


@pytest.fixture
def rag(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """OpenViking's benchmark/RAG/: config/, datasets/{dataset_name}/; the working folder."""
    folder = tmp_path / "RAG"
    shutil.copytree(OPENVIKING / "RAG", folder)
    datasets = folder / "datasets"
    shutil.copytree(ADAPTER_FIXTURES / "locomo", datasets / "Locomo")
    shutil.copytree(ADAPTER_FIXTURES / "syllabusqa", datasets / "SyllabusQA")
    shutil.copytree(ADAPTER_FIXTURES / "qasper", datasets / "Qasper")
    shutil.copytree(ADAPTER_FIXTURES / "financebench", datasets / "FinanceBench")
    monkeypatch.chdir(folder)
    monkeypatch.setenv("LASAGNA_CACHE_DIR", str(tmp_path / "cache"))
    return folder


def invoke(*args: str, env: dict[str, str] | None = None) -> Any:
    environment = {"OPENAI_API_KEY": "", "OPENAI_BASE_URL": "", **(env or {})}
    return CliRunner().invoke(app, ["benchmark", *args], env=environment)


def shape(value: Any) -> Any:
    """A JSON value's key sets and types; int and float are both numbers."""
    if isinstance(value, dict):
        return {key: shape(v) for key, v in value.items()}
    if isinstance(value, list):
        return ["list", shape(value[0]) if value else None]
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


def assert_has_shape(found: Any, documented: Any, where: str = "") -> None:
    """Every documented key is there with the documented type (lasagna adds keys)."""
    if isinstance(documented, dict):
        assert isinstance(found, dict), where
        for key, value in documented.items():
            assert key in found, f"{where}.{key} is missing"
            assert_has_shape(found[key], value, f"{where}.{key}")
    elif isinstance(documented, list) and documented[0] == "list":
        assert isinstance(found, list) and found, where
        for item in found:
            assert_has_shape(shape(item), documented[1], f"{where}[]")
    else:  # `found` is a value, or already a shape
        assert documented in (found, shape(found)), f"{where}: {found} is not {documented}"


def documented(name: str) -> Any:
    return shape(json.loads((OPENVIKING / "shapes" / name).read_text(encoding="utf-8")))


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_openvikings_configs_run_unchanged(rag: Path, server: Any, config: str) -> None:
    result = invoke("openviking", f"config/{config}", "--base-url", server.base_url)
    assert result.exit_code == 0, result.output
    assert "warning" not in result.stderr  # every key of OpenViking's configs is used
    assert "llm.base_url https://ark.cn-beijing.volces.com/api/v3 replaced" in result.stderr
    dataset = CONFIGS[config]
    out = rag / "Output" / dataset / "experiment_test_top_5"
    generated_file = json.loads((out / "generated_answers.json").read_text())
    evaluated_file = json.loads((out / "qa_eval_detailed_results.json").read_text())
    report = json.loads((out / "benchmark_metrics_report.json").read_text())
    assert set(generated_file) == {"summary", "results"} and set(evaluated_file) == {"results"}
    generated, evaluated = generated_file["results"], evaluated_file["results"]
    assert generated_file["summary"] == {"dataset": dataset, "total_queries": len(generated)}
    for r in evaluated:  # OpenViking's ints 0-4, never null
        assert type(r["metrics"]["Accuracy"]) is int and 0 <= r["metrics"]["Accuracy"] <= 4
        assert r["llm_evaluation"]["normalized_score"] == r["metrics"]["Accuracy"]
    assert 0 < len(generated) <= 20  # max_queries: 20
    assert report["Dataset"] == dataset
    assert report["lasagna"]["top_k"] == 5 and report["lasagna"]["project_name"] == "RAG_Benchmark"
    prompt = "Locomo_0or4" if dataset == "Locomo" else "Generic_0-4"
    judged = [
        r for r in evaluated if r["llm_evaluation"]["prompt_used"] != "Heuristic_Refusal_Check"
    ]
    assert all(r["llm_evaluation"]["prompt_used"] == prompt for r in judged)
    log = (out / "benchmark.log").read_text()
    assert "gen:" in log and "eval:" in log
    first = generated[0]
    assert f"[{first['_global_index']}] " in log and "| Recall: " in log  # a line per query
    assert log.count("Reasoning: ") == len(evaluated)  # an eval block per question
    docs = sorted((out / "docs").glob("*.md"))
    assert docs and docs[0].read_text().strip()
    stored = rag / "ov_storage" / dataset / f"{dataset}_processed_docs"
    assert sorted(p.name for p in stored.glob("*.md")) == [p.name for p in docs]


def test_output_files_have_the_documented_key_sets_and_types(rag: Path, server: Any) -> None:
    result = invoke("openviking", "config/locomo_config.yaml", "--base-url", server.base_url)
    assert result.exit_code == 0, result.output
    out = rag / "Output" / "Locomo" / "experiment_test_top_5"
    generated = json.loads((out / "generated_answers.json").read_text())
    generated["results"] = [r for r in generated["results"] if r["evidence"]]
    assert_has_shape(generated, documented("generated_answers.json"), "generated_answers")
    evaluated = json.loads((out / "qa_eval_detailed_results.json").read_text())
    evaluated["results"] = [
        r for r in evaluated["results"] if r["llm_evaluation"]["prompt_used"] == "Locomo_0or4"
    ]
    assert evaluated["results"]
    assert_has_shape(evaluated, documented("qa_eval_detailed_results.json"), "qa_eval")
    report = json.loads((out / "benchmark_metrics_report.json").read_text())
    assert_has_shape(shape(report), documented("benchmark_metrics_report.json"), "report")


def test_the_config_reads_every_split_file_and_writes_upstreams_golds(
    rag: Path, server: Any
) -> None:
    """dataset_path a folder: every Qasper *.json of it, as OpenViking's adapter reads it;
    gold answers as the adapter writes them ("Not mentioned" kept) and Qasper's category
    as pipeline.py writes it (str(None)), lasagna's beside."""
    folder = rag / "datasets" / "Qasper"
    papers = json.loads((folder / "qasper-dev-v0.3.json").read_text())
    paper = papers["2001.00002"]
    qas = [{**qa, "question_id": f"{qa['question_id']}-2"} for qa in paper["qas"]]
    copy = {"2001.00009": {**paper, "qas": qas}}
    (folder / "qasper-train-v0.3.json").write_text(json.dumps(copy))
    result = invoke("openviking", "config/qasper_config.yaml", "--step", "gen", "--base-url",
                    server.base_url)  # fmt: skip
    assert result.exit_code == 0, result.output
    out = rag / "Output" / "Qasper" / "experiment_test_top_5" / "generated_answers.json"
    results = json.loads(out.read_text())["results"]
    assert {r["sample_id"] for r in results} == {"2001.00001", "2001.00002", "2001.00009"}
    ports = next(r for r in results if r["question_id"] == "q-ports")
    assert ports["gold_answers"] == ["Elvar; Skerra; Garrow", "Not mentioned"]
    assert ports["category"] == "None" and ports["category (lasagna)"] == "extractive"


def test_relative_paths_are_read_as_run_py_reads_them(
    rag: Path, server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """run.py reads them from its own folder (benchmark/RAG/), wherever it is started: here
    the folder above config/, or the folder holding run.py."""
    monkeypatch.chdir(rag.parent)
    result = invoke("openviking", "RAG/config/locomo_config.yaml", "--step", "gen",
                    "--base-url", server.base_url)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert (
        rag / "Output" / "Locomo" / "experiment_test_top_5" / "generated_answers.json"
    ).is_file()
    assert not (rag.parent / "Output").exists()
    (rag / "run.py").write_text("# OpenViking's run.py\n")
    mine = rag / "mine.yaml"
    mine.write_text((rag / "config" / "locomo_config.yaml").read_text().replace(
        "experiment_test_top_", "mine_top_"))  # fmt: skip
    result = invoke("openviking", str(mine), "--step", "gen", "--base-url", server.base_url)
    assert result.exit_code == 0, result.output
    assert (rag / "Output" / "Locomo" / "mine_top_5" / "generated_answers.json").is_file()


def test_where_only_lasagnas_refusal_rule_fires_the_judge_is_asked_as_run_py_asks(
    rag: Path,
) -> None:
    """run.py asks its judge about every answer; its refusal rule ("not mentioned", "none",
    ...) does not see "I cannot answer that." as one, lasagna's does. For an unanswerable
    question "Accuracy" is then the judge's grade (here 1, 0 on LoCoMo's 0-or-4), asked
    once; "Accuracy (lasagna)" the top score, with no call."""
    sent: list[dict[str, Any]] = []

    def replies(request: dict[str, Any]) -> str:
        sent.append(request)
        if "tools" in request or "response_format" in request:
            return json.dumps({"reasoning": "says nothing of it", "score": 1})
        return "I cannot answer that."

    with FakeLLMServer(reply=replies) as fake:
        result = invoke("openviking", "config/locomo_config.yaml", "--base-url", fake.base_url)
        assert result.exit_code == 0, result.output
        judged = sum(1 for r in sent if "tools" in r or "response_format" in r)
        out = rag / "Output" / "Locomo" / "experiment_test_top_5"
        records = json.loads((out / "qa_eval_detailed_results.json").read_text())["results"]
        spared = [r for r in records if r["llm_evaluation"].get("lasagna_prompt_used")]
        assert spared, "no answer where only lasagna's rule fires"
        for r in spared:
            assert r["metrics"]["Accuracy"] == 0 and r["metrics"]["Accuracy (lasagna)"] == 4
            assert r["llm_evaluation"]["prompt_used"] == "Locomo_0or4"
        assert f"{len(spared)} answers judged for OpenViking's Accuracy alone" in result.output
        assert judged == len(records)  # every answer judged once, as run.py does
        again = invoke("openviking", "config/locomo_config.yaml", "--step", "eval",
                       "--base-url", fake.base_url)  # fmt: skip
        assert again.exit_code == 0, again.output
        assert "for OpenViking's Accuracy alone" not in again.output  # kept in eval/


def test_rpm_paces_the_llm_calls_and_a_bad_one_is_one_line(rag: Path) -> None:
    # The server admits 7 requests in any second; --rpm 150 sends one every 0.4 s (the
    # first may wait for its connection: it comes later than its slot).
    limits = RateLimits(requests_per_minute=7, minute=1.0)
    with FakeLLMServer(reply=reply, limits=limits) as fake:
        result = invoke("openviking", "config/qasper_config.yaml", "--base-url", fake.base_url,
                        "--rpm", "150")  # fmt: skip
        arrivals = sorted(fake.times)
    assert result.exit_code == 0, result.output
    assert limits.rejected == 0 and len(arrivals) >= 6
    assert arrivals[-1] - arrivals[1] >= (len(arrivals) - 2) * 0.35, arrivals
    for door in (["openviking", "config/qasper_config.yaml"], ["run", "--config", "config/qasper_config.yaml"]):  # fmt: skip  # noqa: E501
        bad = invoke(*door, "--tpm", "lots")
        assert bad.exit_code == 2, bad.output
        assert bad.stderr.startswith("error: --tpm: expected a number a minute > 0")
        assert len(bad.stderr.strip().splitlines()) == 1


def test_run_dash_dash_config_is_the_same_door(rag: Path, server: Any) -> None:
    result = invoke("run", "--config", "config/qasper_config.yaml", "--base-url", server.base_url)
    assert result.exit_code == 0, result.output
    assert (
        rag / "Output" / "Qasper" / "experiment_test_top_5" / "generated_answers.json"
    ).is_file()
    both = invoke("run", "data.jsonl", "--config", "config/qasper_config.yaml")
    assert both.exit_code == 2 and "not both" in both.stderr
    flag = invoke("run", "--config", "config/qasper_config.yaml", "--top-k", "3")
    assert flag.exit_code == 2 and "--top-k does not apply with --config" in flag.stderr
    neither = invoke("run")
    assert neither.exit_code == 2 and "--config" in neither.stderr
    as_path = invoke("run", "config/qasper_config.yaml")
    assert as_path.exit_code == 2 and "--config config/qasper_config.yaml" in as_path.stderr


def test_a_top_k_sweep_keeps_its_folders_side_by_side(rag: Path, server: Any) -> None:
    config = rag / "config" / "locomo_config.yaml"
    for k in (1, 2):
        text = config.read_text().replace("retrieval_topk: 5", f"retrieval_topk: {k}")
        (rag / "config" / f"top{k}.yaml").write_text(text)
        result = invoke("openviking", f"config/top{k}.yaml", "--step", "gen", "--base-url",
                        server.base_url)  # fmt: skip
        assert result.exit_code == 0, result.output
    for k in (1, 2):
        answers = json.loads(
            (
                rag / "Output" / "Locomo" / f"experiment_test_top_{k}" / "generated_answers.json"
            ).read_text()
        )["results"]
        assert all(len(a["retrieval"]["uris"]) <= k for a in answers)
        assert any(len(a["retrieval"]["uris"]) == k for a in answers)


def test_keys_it_does_not_use_are_warnings_naming_them(rag: Path, server: Any) -> None:
    config = rag / "config" / "locomo_config.yaml"
    text = config.read_text().replace("  max_workers: 8", "  max_worker: 8\n  batch: 2")
    (rag / "config" / "typo.yaml").write_text(text + "vector_db: milvus\n")
    result = invoke("openviking", "config/typo.yaml", "--step", "gen", "--base-url",
                    server.base_url)  # fmt: skip
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 3
    assert any("execution.max_worker" in w and "max_workers" in w for w in warnings)
    assert any("execution.batch" in w for w in warnings)
    assert any("vector_db" in w and "not used" in w for w in warnings)


def test_the_key_comes_from_api_key_env_var_and_is_never_written(rag: Path, server: Any) -> None:
    config = rag / "config" / "locomo_config.yaml"
    text = config.read_text().replace('api_key: "your_api_key_here"', 'api_key_env_var: "ARK_KEY"')
    (rag / "config" / "env.yaml").write_text(text)
    unset = invoke("openviking", "config/env.yaml", "--base-url", server.base_url)
    assert unset.exit_code == 2 and "$ARK_KEY" in unset.stderr and "\n" not in unset.stderr.strip()
    result = invoke(
        "openviking", "config/env.yaml", "--base-url", server.base_url, env={"ARK_KEY": SECRET}
    )
    assert result.exit_code == 0, result.output
    for path in (rag / "Output").rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_text(errors="replace"), path


def test_skip_ingestion_writes_no_docs(rag: Path, server: Any) -> None:
    config = rag / "config" / "locomo_config.yaml"
    text = config.read_text().replace("skip_ingestion: false", "skip_ingestion: true")
    (rag / "config" / "skip.yaml").write_text(text)
    result = invoke("openviking", "config/skip.yaml", "--step", "gen", "--base-url",
                    server.base_url)  # fmt: skip
    assert result.exit_code == 0, result.output
    out = rag / "Output" / "Locomo" / "experiment_test_top_5"
    assert (out / "generated_answers.json").is_file() and not (out / "docs").exists()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("LocomoAdapter", "LocomAdapter"), 'did you mean "LocomoAdapter"'),
        (("retrieval_topk: 5", "retrieval_topk: 0"), "execution.retrieval_topk"),
        (('ingest_mode: "directory"', 'ingest_mode: "files"'), "execution.ingest_mode"),
    ],
)
def test_a_bad_config_is_one_line_naming_the_key(
    rag: Path, change: tuple[str, str], message: str
) -> None:
    config = rag / "config" / "locomo_config.yaml"
    (rag / "config" / "bad.yaml").write_text(config.read_text().replace(*change))
    result = invoke("openviking", "config/bad.yaml")
    assert result.exit_code == 1, result.output
    assert message in result.stderr and "\n" not in result.stderr.strip()
    assert "Traceback" not in result.output


PROMPTS = """\
instructions:
  "2": "Give the date as written in the DATE tag, nothing else."
judge_rubric: "strict.toml"
"""


def test_prompt_overrides_are_used_recorded_and_part_of_the_comparability_key(rag: Path) -> None:
    sent: list[dict[str, Any]] = []

    def recording(request: dict[str, Any]) -> str:
        sent.append(request)
        if "tools" in request or "response_format" in request:
            return json.dumps({"reasoning": "exact", "score": 1})
        return "Not mentioned"

    config = rag / "config" / "locomo_config.yaml"
    text = config.read_text().replace('output_dir: "Output', 'output_dir: "Custom/Output')
    text = text.replace('log_file: "Output', 'log_file: "Custom/Output')
    (rag / "config" / "custom.yaml").write_text(text + 'prompts: "prompts/{dataset_name}.yaml"\n')
    (rag / "prompts").mkdir()
    (rag / "prompts" / "Locomo.yaml").write_text(PROMPTS)
    shutil.copy(HERE.parents[1] / "examples" / "judge" / "strict.toml", rag / "prompts")
    with FakeLLMServer(reply=recording) as fake:
        plain = invoke("openviking", "config/locomo_config.yaml", "--base-url", fake.base_url)
        assert plain.exit_code == 0, plain.output
        custom = invoke("openviking", "config/custom.yaml", "--base-url", fake.base_url)
        assert custom.exit_code == 0, custom.output
    assert "warning" not in custom.stderr
    prompts = [str(r["messages"][-1]["content"]) for r in sent if "tools" not in r]
    assert any("Give the date as written in the DATE tag" in p for p in prompts)
    judge = [str(r["messages"]) for r in sent if "tools" in r or "response_format" in r]
    assert any("Score 1 only when the answer states exactly" in j for j in judge)

    out = rag / "Custom" / "Output" / "Locomo" / "experiment_test_top_5"
    report = json.loads((out / "benchmark_metrics_report.json").read_text())
    recorded = report["lasagna"]["prompts"]
    assert recorded["file"] == "prompts/Locomo.yaml" and len(recorded["sha256"]) == 64
    assert recorded["instructions"] == {
        "2": "Give the date as written in the DATE tag, nothing else."
    }
    assert report["lasagna"]["rubric"] == ["strict", "1"]
    evaluated = json.loads((out / "qa_eval_detailed_results.json").read_text())["results"]
    assert {r["llm_evaluation"]["prompt_used"] for r in evaluated} <= {
        "strict",
        "Heuristic_Refusal_Check",
    }
    # strict grades 0-1; OpenViking's Accuracy stays on its 0-4 (1 of 1 is 4 of 4)
    judged = [r for r in evaluated if r["llm_evaluation"]["prompt_used"] == "strict"]
    assert judged and all(r["metrics"]["Accuracy (lasagna)"] == 1 for r in judged)
    assert all(r["metrics"]["Accuracy"] == 4 for r in judged)
    assert report["Performance Metrics"]["Average Accuracy (Hit 0-4)"] == 4

    from lasagna_cli.engine.reports import read_run

    keys = [
        read_run(folder).results[0]["comparability_key"]
        for folder in (rag / "Output" / "Locomo" / "experiment_test_top_5", out)
    ]
    assert keys[0] != keys[1]


def test_a_prompts_file_with_an_unknown_category_is_refused(rag: Path) -> None:
    config = rag / "config" / "locomo_config.yaml"
    (rag / "config" / "bad.yaml").write_text(config.read_text() + 'prompts: "p.yaml"\n')
    (rag / "p.yaml").write_text('instructions:\n  "9": "x"\n')
    result = invoke("openviking", "config/bad.yaml")
    assert result.exit_code == 1 and "no category '9'" in result.stderr
    (rag / "p.yaml").write_text('instruction:\n  "1": "x"\n')
    typo = invoke("openviking", "config/bad.yaml")
    assert typo.exit_code == 1 and 'did you mean "instructions"' in typo.stderr


def test_eval_grades_with_the_configs_llm_whoever_generated(rag: Path, server: Any) -> None:
    gen = invoke("openviking", "config/locomo_config.yaml", "--step", "gen", "--base-url",
                 server.base_url)  # fmt: skip
    assert gen.exit_code == 0, gen.output
    config = rag / "config" / "locomo_config.yaml"
    (rag / "config" / "other.yaml").write_text(
        config.read_text().replace("doubao-seed-2-0-pro-260215", "another-model")
    )
    result = invoke("openviking", "config/other.yaml", "--step", "eval", "--base-url",
                    server.base_url)  # fmt: skip
    assert result.exit_code == 0, result.output
    out = rag / "Output" / "Locomo" / "experiment_test_top_5"
    report = json.loads((out / "benchmark_metrics_report.json").read_text())
    assert report["lasagna"]["judge"] == "openai/another-model"  # run.py: llm.model judges


def openviking_item(index: int, question: str, golds: list[str], answer: str) -> dict[str, Any]:
    """One result as OpenViking's pipeline.py writes it, and nothing else."""
    return {
        "_global_index": index,
        "sample_id": "conv-1",
        "question": question,
        "gold_answers": golds,
        "category": "1",
        "evidence": ["D1:3"],
        "retrieval": {"latency_sec": 0.2, "uris": ["viking://resources/conv-1_doc.md"]},
        "llm": {"final_answer": answer},
        "metrics": {"Recall": 1.0},
        "token_usage": {"total_input_tokens": 100, "llm_output_tokens": 3},
    }


def test_eval_grades_a_generated_answers_file_openviking_wrote(rag: Path) -> None:
    """No gen/ records, no report: the file alone is graded, with OpenViking's F1 and ints."""
    judged: list[str] = []

    def judge(request: dict[str, Any]) -> str:
        judged.append(str(request["messages"]))
        return json.dumps({"reasoning": "compared", "score": 4 if "Paris" in judged[-1] else 0})

    out = rag / "Output" / "Locomo" / "experiment_test_top_5"
    out.mkdir(parents=True)
    items = [
        openviking_item(0, "Where did Ann move, and when?", ["Paris, in May"], "Paris and May"),
        openviking_item(1, "What is Bo's dog called?", ["Rex"], "Max"),
        openviking_item(2, "What did Cy eat?", ["Not mentioned"], "No information given."),
    ]
    saved = {"summary": {"dataset": "Locomo", "total_queries": 3}, "results": items}
    (out / "generated_answers.json").write_text(json.dumps(saved))
    with FakeLLMServer(reply=judge) as fake:
        result = invoke("openviking", "config/locomo_config.yaml", "--step", "eval",
                        "--base-url", fake.base_url)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "3 of 3 answers graded as" in result.output
    records = json.loads((out / "qa_eval_detailed_results.json").read_text())["results"]
    metrics = [r["metrics"] for r in records]
    # OpenViking's F1 drops commas and "and": "paris may" against "paris in may".
    assert metrics[0]["F1"] == pytest.approx(0.8) and metrics[0]["Accuracy"] == 4
    assert metrics[1]["F1"] == 0.0 and metrics[1]["Accuracy"] == 0
    assert metrics[2]["F1"] == 1.0 and metrics[2]["Accuracy"] == 4  # both refuse
    assert records[2]["llm_evaluation"]["prompt_used"] == "Heuristic_Refusal_Check"
    assert len(judged) == 2  # the refusal pair is not sent
    report = json.loads((out / "benchmark_metrics_report.json").read_text())
    performance = report["Performance Metrics"]
    assert performance["Average Accuracy (Hit 0-4)"] == pytest.approx(8 / 3)
    assert performance["Average F1 Score"] == pytest.approx(1.8 / 3)
    assert report["Total Queries Evaluated"] == 3


def test_eval_grades_the_files_answer_where_it_differs_from_the_record(rag: Path) -> None:
    seen: list[str] = []

    def reply(request: dict[str, Any]) -> str:
        if "tools" in request or "response_format" in request:
            seen.append(str(request["messages"]))
            return json.dumps({"reasoning": "ok", "score": 0})
        return "an answer lasagna generated"

    with FakeLLMServer(reply=reply) as fake:
        gen = invoke("openviking", "config/locomo_config.yaml", "--step", "gen", "--base-url",
                     fake.base_url)  # fmt: skip
        assert gen.exit_code == 0, gen.output
        path = rag / "Output" / "Locomo" / "experiment_test_top_5" / "generated_answers.json"
        saved = json.loads(path.read_text())
        saved["results"][0]["llm"]["final_answer"] = "an answer edited by hand"
        path.write_text(json.dumps(saved))
        result = invoke("openviking", "config/locomo_config.yaml", "--step", "eval",
                        "--base-url", fake.base_url)  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "eval: 1 of" in result.output
    assert sum("an answer edited by hand" in s for s in seen) == 1
    assert sum("an answer lasagna generated" in s for s in seen) == len(saved["results"]) - 1
    evaluated = json.loads((path.parent / "qa_eval_detailed_results.json").read_text())
    assert evaluated["results"][0]["llm"]["final_answer"] == "an answer edited by hand"


def test_openai_api_key_never_goes_to_the_configs_server(rag: Path, server: Any) -> None:
    config = rag / "config" / "locomo_config.yaml"
    text = config.read_text().replace('  api_key: "your_api_key_here"\n', "")
    (rag / "config" / "nokey.yaml").write_text(text)
    result = invoke("openviking", "config/nokey.yaml", "--step", "gen", "--base-url",
                    server.base_url, env={"OPENAI_API_KEY": SECRET})  # fmt: skip
    assert result.exit_code == 0, result.output
    assert server.headers and all(SECRET not in str(h) for h in server.headers)
