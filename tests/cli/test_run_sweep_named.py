"""Registered public benchmarks in sweep files (`name:` + `data_dir:`), on the adapters' own
fixtures: the benchmark's corpus, qrels metrics and evidence recall in the question's own
documents, seeded sampling, the revision over the raw files, the generation track, and the
mistakes refused in one line before anything loads."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_cli.engine.benchmarks import load_benchmark, sample_benchmark
from lasagna_judge.testing import FakeLLMServer

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "data"
FIXTURES = ROOT / "tests" / "synth" / "fixtures"
DATASETS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "datasets"
NAMED = ("locomo", "squad", "beir", "syllabusqa", "qasper", "financebench")


def invoke(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    # PDF texts (FinanceBench) are cached under LASAGNA_CACHE_DIR: keep them in tmp_path.
    return CliRunner().invoke(
        app, list(args), env={"LASAGNA_CACHE_DIR": str(tmp_path / "cache"), **(env or {})}
    )


def run(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    return invoke(tmp_path, "benchmark", "run", *args, env=env)


def sweep(folder: Path, text: str, name: str = "sweep.yaml") -> Path:
    """A sweep file beside a copy of pasta.jsonl and of the adapters' fixtures (in data/)."""
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / "data").exists():
        shutil.copytree(FIXTURES, folder / "data")
        shutil.copy(EXAMPLES / "pasta.jsonl", folder / "pasta.jsonl")
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def results_of(out: Path) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads((out / "results.json").read_text())["results"]
    return found


def by_dataset(out: Path, setup: str) -> dict[str, dict[str, Any]]:
    return {
        r["dataset"]["name"].split("@")[0]: r
        for r in results_of(out)
        if r["setup"]["name"] == setup
    }


def revision_of(*files: Path) -> str:
    """The staged pipeline's revision, computed here independently: sha256 over the JSON
    list of [file name, sha256 of its bytes], in reading order."""
    pairs = [[f.name, hashlib.sha256(f.read_bytes()).hexdigest()] for f in files]
    text = json.dumps(pairs, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


EVERY_BENCHMARK = (
    "benchmarks:\n  - path: pasta.jsonl\n"
    + "".join(f"  - name: {name}\n    data_dir: data/{name}\n" for name in NAMED)
    + """setups:
  - name: k1
    retriever: {top_k: 1}
  - name: k3
    retriever: {top_k: 3}
tracks: [retrieval]
"""
)


def test_every_registered_benchmark_runs_beside_a_data_file(tmp_path: Path) -> None:
    path = sweep(tmp_path / "s", EVERY_BENCHMARK)
    out = tmp_path / "out"
    result = run(tmp_path, str(path), "-o", str(out))
    assert result.exit_code == 0, result.output
    found = by_dataset(out, "k3")
    assert set(found) == {"local/pasta", *NAMED}
    data = tmp_path / "s" / "data"
    locomo = found["locomo"]["dataset"]
    rev = revision_of(data / "locomo" / "locomo10.json")
    assert locomo["name"] == f"locomo@{rev[:12]}"
    assert locomo["revision"] == f"sha256:{rev}"
    assert locomo["kind"] == "benchmark"
    assert locomo["benchmark"]["files"] == [
        {
            "file": "locomo10.json",
            "sha256": hashlib.sha256((data / "locomo" / "locomo10.json").read_bytes()).hexdigest(),
        }
    ]
    assert locomo["benchmark"]["skipped_by_adapter"] == {"category 5 (adversarial)": 2}
    # The benchmark's own corpus, never pooled gold, and held fixed with how it was made.
    for name in NAMED:
        assert found[name]["dataset"]["corpus_provenance"] == "native"
        assert "the benchmark's documents" in found[name]["held_fixed"]["corpus"]
    assert found["local/pasta"]["dataset"]["corpus_provenance"] == "pooled_gold"
    assert "corpus" not in found["local/pasta"]["held_fixed"]
    # One comparability group per benchmark (top_k is what the setups compare).
    groups = {r["comparability_key"] for r in results_of(out)}
    assert len(groups) == 1 + len(NAMED)
    # Qrels where the benchmark has them; evidence recall alone where it does not.
    assert set(found["squad"]["metrics"]["retrieval"]) == {
        "recall@3",
        "ndcg@10",
        "mrr",
        "hit_rate@3",
        "evidence_recall",
        "evidence_recall_strict",
    }
    for name in ("locomo", "syllabusqa", "qasper", "financebench"):
        assert set(found[name]["metrics"]["retrieval"]) == {
            "evidence_recall",
            "evidence_recall_strict",
        }
    # SQuAD's default split is dev; its two unanswerable questions are counted apart.
    assert found["squad"]["dataset"]["split"] == "dev"
    assert found["squad"]["counts"]["without_evidence"] == 2
    assert found["squad"]["metrics"]["retrieval"]["ndcg@10"]["count"] == 3
    assert found["locomo"]["counts"] == {
        "questions": 8,
        "scored": 8,
        "failed": 0,
        "not_run": 0,
        "without_evidence": 1,
    }
    assert "8 questions, 1 without evidence counted apart, native" in result.stdout


def test_beir_by_name_scores_as_the_beir_folder_does(tmp_path: Path) -> None:
    """The qrels feed the same metrics: per question, the same ranking and numbers as
    `lasagna benchmark run FOLDER` on the same files."""
    path = sweep(
        tmp_path / "s",
        "benchmarks:\n  - name: beir\n    data_dir: data/beir\n  - path: data/beir\n"
        "tracks: [retrieval]\n",
    )
    out = tmp_path / "out"
    result = run(tmp_path, str(path), "-o", str(out))
    assert result.exit_code == 0, result.output
    named, folder = results_of(out)
    assert named["dataset"]["name"].startswith("beir@")
    assert folder["dataset"]["name"].startswith("local/beir@")
    assert named["comparability_key"] != folder["comparability_key"]
    for mine, theirs in zip(named["per_query"], folder["per_query"], strict=True):
        assert mine["id"] == theirs["id"]
        assert mine["ranking"] == theirs["ranking"]
        assert mine["judgments"] == theirs["judgments"]
        assert {k: v for k, v in mine["metrics"].items() if "evidence" not in k} == theirs[
            "metrics"
        ]
    assert named["per_query"][0]["judgments"] == {"d1": 2}


LOOKALIKE = [
    {
        "sample_id": "pots",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "1 May 2023",
            "session_1": [
                {"speaker": "Ana", "dia_id": "D1:1", "text": "I glazed three bowls today."},
                {"speaker": "Ben", "dia_id": "D1:2", "text": "Which colour did you choose?"},
                {"speaker": "Ana", "dia_id": "D1:3", "text": "A deep blue glaze for the bowls."},
            ],
        },
        "qa": [
            {
                "question": "Which marathon shoes did the runner buy for the race?",
                "answer": "blue ones",
                "evidence": ["D1:3"],
                "category": 4,
            }
        ],
    },
    {
        "sample_id": "runs",
        "conversation": {
            "speaker_a": "Cy",
            "speaker_b": "Di",
            "session_1_date_time": "2 May 2023",
            "session_1": [
                {"speaker": "Cy", "dia_id": "D1:1", "text": "The marathon is in June."},
                {"speaker": "Di", "dia_id": "D1:2", "text": "Are you ready for the race?"},
                {"speaker": "Cy", "dia_id": "D1:3", "text": "I bought marathon shoes."},
            ],
        },
        "qa": [],
    },
]


def test_evidence_counts_only_in_the_questions_own_conversation(tmp_path: Path) -> None:
    """Both conversations have a turn "D1:3": the other one's is not this question's
    evidence, however well it ranks."""
    folder = tmp_path / "s"
    (folder / "look").mkdir(parents=True)
    (folder / "look" / "locomo10.json").write_text(json.dumps(LOOKALIKE), encoding="utf-8")
    setups = (
        "setups:\n  - name: k1\n    retriever: {top_k: 1}\n"
        "  - name: k2\n    retriever: {top_k: 2}\n"
    )
    path = sweep(folder, "benchmarks:\n  - name: locomo\n    data_dir: look\n" + setups)
    out = tmp_path / "out"
    result = run(tmp_path, str(path), "-o", str(out))
    assert result.exit_code == 0, result.output
    k1, k2 = results_of(out)
    (top1,) = k1["per_query"]
    assert top1["ranking"][0][0] == "runs#0"  # the other conversation, holding "[D1:3]"
    assert top1["metrics"] == {"evidence_recall": 0.0, "evidence_recall_strict": 0.0}
    assert top1["evidence"] == ["D1:3"] and top1["documents"] == ["pots"]
    (top2,) = k2["per_query"]
    assert [doc for doc, _ in top2["ranking"]] == ["runs#0", "pots#0"]
    assert top2["metrics"] == {"evidence_recall": 1.0, "evidence_recall_strict": 1.0}


def _pipeline_recall(tmp_path: Path, name: str, data_dir: Path, top_k: int) -> dict[str, Any]:
    out = tmp_path / f"pipeline-{name}"
    result = run(
        tmp_path, name, "--data-dir", str(data_dir), "--step", "gen", "--top-k", str(top_k),
        "-o", str(out),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    answers = json.loads((out / "generated_answers.json").read_text())["results"]
    return {a["question_id"]: a for a in answers}


def _same_as_the_pipeline(tmp_path: Path, name: str, data_dir: Path, top_k: int) -> int:
    path = tmp_path / f"{name}.yaml"
    path.write_text(
        f"benchmarks:\n  - name: {name}\n    data_dir: {data_dir}\ntop_k: {top_k}\n"
        "tracks: [retrieval]\n",
        encoding="utf-8",
    )
    out = tmp_path / f"sweep-{name}"
    result = run(tmp_path, str(path), "-o", str(out))
    assert result.exit_code == 0, result.output
    (found,) = results_of(out)
    pipeline = _pipeline_recall(tmp_path, name, data_dir, top_k)
    assert {q["id"] for q in found["per_query"]} == set(pipeline)
    for query in found["per_query"]:
        theirs = pipeline[query["id"]]
        assert [doc for doc, _ in query["ranking"][:top_k]] == theirs["retrieval"]["uris"]
        recall = (query.get("metrics") or {}).get("evidence_recall")
        assert recall == theirs["metrics"]["Recall (lasagna)"], query["id"]
    assert (
        found["dataset"]["revision"]
        == "sha256:"
        + json.loads((tmp_path / f"pipeline-{name}" / "benchmark_metrics_report.json").read_text())[
            "lasagna"
        ]["data_revision"]
    )
    return len(pipeline)


@pytest.mark.parametrize("name", ["locomo", "syllabusqa", "qasper", "financebench"])
def test_the_same_passages_rankings_and_recall_as_the_staged_pipeline(
    tmp_path: Path, name: str
) -> None:
    assert _same_as_the_pipeline(tmp_path, name, FIXTURES / name, 3) > 0


def test_the_real_locomo_as_the_staged_pipeline_scores_it(tmp_path: Path) -> None:
    locomo = DATASETS / "locomo"
    if not (locomo / "locomo10.json").is_file():
        pytest.skip(f"real data not present: {locomo}")
    assert _same_as_the_pipeline(tmp_path, "locomo", locomo, 5) == 1540


def test_filters_and_n_samples_are_lasagna_synths_seeded_draw(tmp_path: Path) -> None:
    text = """benchmarks:
  - name: locomo
    data_dir: data/locomo
    filters: {category: ["1", "4"]}
    n_samples: 2
  - name: syllabusqa
    data_dir: data/syllabusqa
    filters: {question_type: "yes/no"}
tracks: [retrieval]
seed: 7
"""
    path = sweep(tmp_path / "s", text)
    first, second = tmp_path / "a", tmp_path / "b"
    for out in (first, second):
        result = run(tmp_path, str(path), "-o", str(out))
        assert result.exit_code == 0, result.output
    assert (first / "results.json").read_bytes() == (second / "results.json").read_bytes()
    locomo, syllabus = results_of(first)
    bench = load_benchmark("locomo", FIXTURES / "locomo")
    pool = replace(bench, questions=tuple(q for q in bench.questions if q.category in "14"))
    expected = sample_benchmark(pool, sample_size=2, seed=7, mode="random", unit="question")
    assert [q["id"] for q in locomo["per_query"]] == list(expected.question_ids)
    assert locomo["dataset"]["filters"] == {"category": ["1", "4"]}
    assert locomo["dataset"]["n_samples"] == 2
    assert [q["id"] for q in syllabus["per_query"]] == ["t002"]


def test_the_split_is_the_benchmarks_default_unless_named(tmp_path: Path) -> None:
    path = sweep(tmp_path / "s", "benchmarks:\n  - name: squad\n    data_dir: data/squad\n")
    result = run(tmp_path, str(path), "--split", "dev", "-o", str(tmp_path / "a"))
    assert result.exit_code == 0, result.output
    assert results_of(tmp_path / "a")[0]["dataset"]["split"] == "dev"
    # --split given on the command line is the default of every entry: squad has no test.
    result = run(tmp_path, str(path), "--split", "test", "-o", str(tmp_path / "b"))
    assert result.exit_code == 2
    assert "benchmarks[0] (squad): has no split 'test'; it has train, dev" in result.stderr


def test_a_missing_raw_file_is_refused_before_any_data_loads(tmp_path: Path) -> None:
    """The named benchmarks' files are checked first: the broken data file listed before
    them is not even read."""
    folder = tmp_path / "s"
    path = sweep(
        folder,
        "benchmarks:\n  - path: broken.jsonl\n  - name: squad\n    data_dir: data/squad\n"
        "    split: train\n",
    )
    (folder / "broken.jsonl").write_text('{"anwser": 1}\n', encoding="utf-8")
    result = run(tmp_path, str(path), "-o", str(tmp_path / "out"))
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: squad (data_dir: data/squad): squad: no train-v2.0.json")
    assert "as `data_dir:`" in line and "--data-dir" not in line
    assert not (tmp_path / "out").exists()


SETUPS = "setups:\n  - name: bm25\n  - name: mine\n    system: {predictions: p.jsonl}\n"


@pytest.mark.parametrize(
    ("entry", "tail", "code", "message"),
    [
        ("name: locomoo\n", "", 2,
         '"locomoo" is not a registered benchmark (did you mean "locomo"?)'),
        ("name: locomo\n", "", 2, "benchmarks[0] (locomo): give `data_dir:`, the folder"),
        ("name: locomo\n    data_dir: nowhere\n", "", 2, "data_dir: nowhere does not exist"),
        ("path: pasta.jsonl\n    data_dir: data/locomo\n", "", 2, "is for a registered benchmark"),
        ("name: locomo\n    data_dir: empty\n", "", 2, "locomo: no locomo10.json for split 'test'"),
        ("name: locomo\n    data_dir: bad\n", "", 1, "bad/locomo10.json is not valid JSON"),
        ("name: beir\n    data_dir: data/beir\n    drop_unknown_judgments: true\n", "", 2,
         "drop_unknown_judgments: is for BEIR folders given by `path:`"),
        ("name: beir\n    data_dir: data/beir\n", "tracks: [generation]\ngenerator: openai/x\n", 2,
         "cannot run the generation track: beir has no reference answers"),
        ("name: locomo\n    data_dir: data/locomo\n    filters: {question_type: x}\n", "", 2,
         'cannot filter on "question_type": no row has it in "metadata". Filterable: category, '
         "document, unanswerable"),
        ("name: locomo\n    data_dir: data/locomo\n", SETUPS, 2,
         'setup "mine" is your own system, which runs on data files and BEIR folders given by '
         "`path:`; on this benchmark, list the others with `setups: [bm25]`"),
        ("name: locomo\n    data_dir: data/locomo\n  - name: locomo\n    data_dir: data/locomo\n",
         "", 2, "make them one entry"),
    ],
)  # fmt: skip
def test_mistakes_are_one_line(
    tmp_path: Path, entry: str, tail: str, code: int, message: str
) -> None:
    folder = tmp_path / "s"
    path = sweep(folder, f"benchmarks:\n  - {entry}{tail}")
    (folder / "empty").mkdir()
    (folder / "bad").mkdir()
    (folder / "bad" / "locomo10.json").write_text("[{", encoding="utf-8")
    result = run(tmp_path, str(path), "-o", str(tmp_path / "out"))
    assert result.exit_code == code, result.output
    (line,) = result.stderr.splitlines()
    assert message in line
    assert not (tmp_path / "out").exists()


def test_a_toml_sweep_names_a_benchmark_too(tmp_path: Path) -> None:
    text = '[[benchmarks]]\nname = "qasper"\ndata_dir = "data/qasper"\nn_samples = 2\n'
    path = sweep(tmp_path / "s", text, "sweep.toml")
    result = run(tmp_path, str(path), "-o", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    (found,) = results_of(tmp_path / "out")
    assert found["dataset"]["split"] == "dev"
    assert found["counts"]["questions"] == 2


# What the fake generator answers, by question (the LoCoMo and SQuAD fixtures).
ANSWERS = {
    "When did Tomas adopt Pip?": "19 March 2023",
    "Where is Ines's pottery course?": "At the harbour studio.",
    "How many evenings does the course last?": "8",
    "When was the lighthouse built?": "1871",
    "When was the lighthouse demolished?": "in 1990",  # unanswerable, answered: wrong
}


def _reply(request: dict[str, Any]) -> str:
    everything = json.dumps(request["messages"], ensure_ascii=False)
    if "Answer to grade:" in everything:
        return json.dumps({"reasoning": "compared", "score": 4})
    found = re.search(r"Question: (.*)", request["messages"][-1]["content"])
    assert found is not None
    return ANSWERS.get(found.group(1), "Not mentioned")


def test_the_generation_track_scores_the_benchmarks_references(tmp_path: Path) -> None:
    text = """benchmarks:
  - name: locomo
    data_dir: data/locomo
  - name: squad
    data_dir: data/squad
tracks: [retrieval, generation]
top_k: 2
"""
    path = sweep(tmp_path / "s", text)
    out = tmp_path / "out"
    with FakeLLMServer(reply=_reply) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test", "MODEL_NAME": ""}
        args = (str(path), "--generator", "openai/fake", "--judge", "openai/judge", "-o", str(out))
        result = run(tmp_path, *args, env=env)
        assert result.exit_code == 0, result.output
        prompts = [r["messages"][-1]["content"] for r in server.requests]
    # The passages come from the benchmark's own corpus: a conversation with its turn ids.
    adopt = next(p for p in prompts if "Question: When did Tomas adopt Pip?" in p)
    assert "[D2:1]" in adopt
    locomo, squad = results_of(out)
    per = {q["id"]: q["generation"] for q in locomo["per_query"]}
    assert per["conv-a/q0"]["exact_match"] == 1.0
    assert per["conv-a/q1"]["exact_match"] == 0.0 and per["conv-a/q1"]["f1"] > 0.5
    assert per["conv-a/q2"]["exact_match"] == 1.0  # the raw answer is the integer 8
    # An empty raw answer: unanswerable, so the refusal is right.
    assert per["conv-a/q5"]["unanswerable"] and per["conv-a/q5"]["exact_match"] == 1.0
    task = next((out / "tasks").rglob("conv-a_q0-*.json"))  # slug of "conv-a/q0"
    assert json.loads(task.read_text())["generation"]["references"] == ["19 March 2023"]
    squad_per = {q["id"]: q["generation"] for q in squad["per_query"]}
    assert squad_per["sq1"]["exact_match"] == 1.0
    assert squad_per["sq2"] == {
        "prediction": "in 1990",
        "exact_match": 0.0,
        "f1": 0.0,
        "refused": False,
        "unanswerable": True,
        "judge_score": 4,
        "judge_status": "ok",
    }
    metrics = squad["metrics"]["generation"]
    assert metrics["no_answer_accuracy"]["count"] == 2
    assert metrics["judge_status"] == {"ok": 5, "unparsed": 0, "error": 0}
    assert squad["held_fixed"]["judge"]["model"] == "openai/judge"


def test_resume_and_an_edited_raw_file(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    path = sweep(folder, "benchmarks:\n  - name: locomo\n    data_dir: data/locomo\n")
    out = tmp_path / "out"
    assert run(tmp_path, str(path), "-o", str(out)).exit_code == 0
    again = run(tmp_path, str(path), "-o", str(out), "--resume")
    assert again.exit_code == 0, again.output
    assert "resuming: 8 of 8 tasks already finished" in again.stderr
    before = results_of(out)[0]["dataset"]["name"]
    raw = folder / "data" / "locomo" / "locomo10.json"
    raw.write_text(raw.read_text().replace("19 March 2023", "20 March 2023"), encoding="utf-8")
    edited = run(tmp_path, str(path), "-o", str(out), "--resume")
    assert edited.exit_code == 0, edited.output
    assert "resuming: 0 of 8 tasks already finished" in edited.stderr
    after = results_of(out)[0]["dataset"]["name"]
    assert after != before and after == f"locomo@{revision_of(raw)[:12]}"


def test_the_example_sweep_file_with_a_named_benchmark(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run(tmp_path, str(EXAMPLES / "sweep-named.yaml"), "-o", str(out))
    assert result.exit_code == 0, result.output
    found = by_dataset(out, "bm25-k3")
    assert set(found) == {"local/pasta", "locomo"}
    locomo = found["locomo"]
    rev = revision_of(EXAMPLES / "locomo-mini" / "locomo10.json")
    assert locomo["dataset"]["name"] == f"locomo@{rev[:12]}"
    assert locomo["counts"]["questions"] == 8  # categories 1, 2 and 4 of the ten
    assert locomo["metrics"]["retrieval"]["evidence_recall"]["count"] == 8
