"""`lasagna benchmark run --predictions`: outputs made elsewhere, scored like any setup."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_synth import load_data

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "data"
PREDICTIONS = ROOT / "examples" / "systems" / "predictions.jsonl"
PASTA = load_data(EXAMPLES / "pasta.jsonl")
ROWS = {row.id: row for row in PASTA.rows()}


def run(*args: str) -> Any:
    return CliRunner().invoke(app, ["benchmark", "run", *args])


def results_of(out: Path) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads((out / "results.json").read_text())["results"]
    return found


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def gold_ranking(row_id: str) -> list[str]:
    """The row's own relevant documents, then two others: a good system's ranking."""
    relevant = ROWS[row_id].relevant
    others = [d for d in PASTA.corpus if d not in relevant][:2]
    return [*relevant, *others]


def perfect_rows(**answers: str) -> list[dict[str, Any]]:
    return [
        {
            "id": row.id,
            "answer": answers.get(row.id, row.answers[0] if row.answers else "Not mentioned"),
            "retrieved": gold_ranking(row.id),
        }
        for row in PASTA.rows()
    ]


def trec_eval(per_query: list[dict[str, Any]], k: int) -> dict[str, dict[str, float]]:
    import pytrec_eval

    judged = [q for q in per_query if q.get("metrics")]
    qrels = {q["id"]: {d: int(g) for d, g in q["judgments"].items()} for q in judged}
    runs = {
        q["id"]: {doc: float(len(q["ranking"]) - i) for i, (doc, _) in enumerate(q["ranking"])}
        for q in judged
    }
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", f"recall.{k}", "recip_rank"})
    found = evaluator.evaluate(runs)
    return {
        q["id"]: {
            "ndcg@10": found.get(q["id"], {}).get("ndcg_cut_10", 0.0),
            f"recall@{k}": found.get(q["id"], {}).get(f"recall_{k}", 0.0),
            "mrr": found.get(q["id"], {}).get("recip_rank", 0.0),
        }
        for q in judged
    }


def test_the_example_predictions_file(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = run(str(EXAMPLES / "pasta.jsonl"), "--predictions", str(PREDICTIONS), "-o", str(out))
    assert result.exit_code == 0, result.output
    (found,) = results_of(out)
    assert found["setup"]["name"] == "predictions"
    assert found["setup"]["tracks"] == ["retrieval", "generation"]
    system = found["setup"]["system"]
    assert system["kind"] == "predictions" and system["rows"] == 14
    assert len(system["sha256"]) == 64 and system["file"] == str(PREDICTIONS)
    assert found["counts"] == {
        "questions": 14,
        "scored": 14,
        "failed": 0,
        "not_run": 0,
        "missing": 0,
    }
    # Passage texts (and q05's document id) were mapped to the pooled corpus' ids.
    reference = trec_eval(found["per_query"], 5)  # the default top-k
    for query in found["per_query"]:
        if query["id"] in reference:
            for metric, value in reference[query["id"]].items():
                assert query["metrics"][metric] == pytest.approx(value, abs=1e-12)
    # Only passages the pooled corpus lacks (the system knows more documents) are unmatched.
    contexts = {" ".join(c.split()) for row in ROWS.values() for c in row.contexts}
    unmatched = [u for q in found["per_query"] for u in q.get("unmatched", [])]
    assert unmatched
    for item in unmatched:  # "given" is the item's first 77 characters and "..."
        assert not any(c.startswith(item["given"].removesuffix("...")) for c in contexts)
    by_id = {q["id"]: q for q in found["per_query"]}
    assert by_id["q03"]["generation"]["exact_match"] == 1.0  # "butter, flour and milk"
    assert (
        by_id["q13"]["generation"]["refused"] and by_id["q13"]["generation"]["exact_match"] == 1.0
    )
    assert by_id["q14"]["generation"]["exact_match"] == 0.0  # unanswerable, answered "Bologna"
    assert found["metrics"]["generation"]["no_answer_accuracy"]["mean"] == 0.5
    assert "predictions" in result.stdout  # on the leaderboard


def test_missing_unknown_and_duplicate_ids_are_errors_that_name_them(tmp_path: Path) -> None:
    rows = [r for r in perfect_rows() if r["id"] != "q03"]
    rows.insert(2, dict(rows[1]))  # q02 twice: lines 2 and 3
    rows.append({"id": "q99", "answer": "x"})
    preds = write_jsonl(tmp_path / "preds.jsonl", rows)
    out = tmp_path / "run"
    result = run(str(EXAMPLES / "pasta.jsonl"), "--predictions", str(preds), "-o", str(out))
    assert result.exit_code == 1, result.output
    message = result.stderr
    assert "1 question(s) of " in message and '"q03"' in message
    assert "1 id(s) are not questions of " in message and '"q99 (line 15)"' in message
    assert 'id "q02" appears 2 times (lines 2, 3)' in message
    assert "--allow-missing" in message and "Traceback" not in result.output
    assert not out.exists()  # refused before anything was written


def test_numbered_squad_questions_match_predictions_by_their_string(tmp_path: Path) -> None:
    qas = [
        {
            "id": 7211011040021040393,
            "question": "Who lives in Berlin?",
            "answers": [{"text": "Carla"}],
        },
        {"id": -57, "question": "Who else?", "answers": [{"text": "Abdul"}]},
    ]
    context = "My name is Carla and I live together with Abdul in Berlin"
    data = tmp_path / "numbered.json"
    data.write_text(json.dumps({"data": [{"paragraphs": [{"context": context, "qas": qas}]}]}))
    # Either spelling of the id matches: the string, or the number as JSON.
    preds = write_jsonl(
        tmp_path / "preds.jsonl",
        [{"id": "7211011040021040393", "answer": "Carla"}, {"id": -57, "answer": "Abdul"}],
    )
    out = tmp_path / "run"
    result = run(str(data), "--tracks", "generation", "--predictions", str(preds), "-o", str(out))
    assert result.exit_code == 0, result.output
    (found,) = results_of(out)
    assert found["counts"]["scored"] == 2
    assert found["metrics"]["generation"]["exact_match"]["mean"] == 1.0


def test_allow_missing_counts_and_reports_them_and_never_scores_them_as_zero(
    tmp_path: Path,
) -> None:
    rows = [r for r in perfect_rows() if r["id"] != "q03"]
    rows.insert(2, {**rows[1], "retrieved": []})  # q02 twice
    rows.append({"id": "q99", "answer": "x"})
    preds = write_jsonl(tmp_path / "preds.jsonl", rows)
    out = tmp_path / "run"
    result = run(
        str(EXAMPLES / "pasta.jsonl"),
        "--predictions",
        str(preds),
        "--allow-missing",
        "-o",
        str(out),
    )
    assert result.exit_code == 0, result.output
    assert "2 of 14 questions of local/pasta@" in result.stderr and '"q02", "q03"' in result.stderr
    assert "1 id(s) are not questions of" in result.stderr and '"q99"' in result.stderr
    assert "counted as missing" in result.stderr
    (found,) = results_of(out)
    assert found["counts"] == {
        "questions": 14,
        "scored": 12,
        "failed": 0,
        "not_run": 0,
        "missing": 2,
    }
    assert found["setup"]["system"]["check"] == {
        "missing": 2,
        "missing_ids": ["q02", "q03"],
        "unknown": 1,
        "unknown_ids": ["q99"],
    }
    by_id = {q["id"]: q for q in found["per_query"]}
    assert by_id["q03"] == {"id": "q03", "status": "missing", "missing": "no prediction"}
    assert by_id["q02"]["missing"] == "2 predictions (lines 2, 3)"
    # Perfect rankings for everything scored: a missing question would pull these below 1.
    retrieval = found["metrics"]["retrieval"]
    assert retrieval["ndcg@10"]["mean"] == 1.0 and retrieval["recall@5"]["mean"] == 1.0
    assert retrieval["ndcg@10"]["count"] == 10  # 12 scored, less the 2 unanswerable
    assert found["metrics"]["generation"]["exact_match"]["count"] == 12
    assert found["metrics"]["generation"]["exact_match"]["mean"] == 1.0
    assert "missing" in result.stdout  # a leaderboard column


def test_the_closing_line_counts_the_questions_left_out_by_reason(tmp_path: Path) -> None:
    rows = [r for r in perfect_rows() if r["id"] != "q03"]  # q03: no prediction
    rows.insert(2, dict(rows[1]))  # q02: its id twice
    rows[4] = {"id": rows[4]["id"], "retrieved": rows[4]["retrieved"]}  # q05: no answer
    preds = write_jsonl(tmp_path / "preds.jsonl", rows)
    out = tmp_path / "run"
    result = run(
        str(EXAMPLES / "pasta.jsonl"), "--predictions", str(preds), "--allow-missing", "-o",
        str(out),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    closing = next(line for line in result.stderr.splitlines() if "in results.json" in line)
    assert closing == (
        "3 question(s) not scored (--allow-missing), counted as missing in results.json: "
        '1 with no prediction, 1 whose id appears more than once, 1 with no "answer"'
    )
    by_id = {q["id"]: q["missing"] for q in results_of(out)[0]["per_query"] if "missing" in q}
    assert by_id == {"q02": "2 predictions (lines 2, 3)", "q03": "no prediction",
                     "q05": 'no "answer"'}  # fmt: skip


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.just("no prediction"),
            st.lists(st.integers(1, 999), min_size=2, max_size=4).map(
                lambda lines: f"{len(lines)} predictions (lines {', '.join(map(str, lines))})"
            ),
            st.sampled_from(['no "answer"', 'no "retrieved"']),
        ),
        min_size=1,
    )
)
def test_every_reason_is_counted_once_under_its_kind(reasons: list[str]) -> None:
    from lasagna_cli.engine.systems import count_reasons

    parts = count_reasons(reasons).split(", ")
    assert sum(int(part.split(" ", 1)[0]) for part in parts) == len(reasons)
    assert not any("left out" in part for part in parts)
    assert len(parts) == len({"x" if r[0].isdigit() else r for r in reasons})


def test_the_tracks_are_what_the_file_carries(tmp_path: Path) -> None:
    only_rankings = [{"id": r["id"], "retrieved": r["retrieved"]} for r in perfect_rows()]
    preds = write_jsonl(tmp_path / "rankings.jsonl", only_rankings)
    out = tmp_path / "run"
    result = run(str(EXAMPLES / "pasta.jsonl"), "--predictions", str(preds), "-o", str(out))
    assert result.exit_code == 0, result.output
    (found,) = results_of(out)
    assert found["setup"]["tracks"] == ["retrieval"] and "generation" not in found["metrics"]

    result = run(
        str(EXAMPLES / "pasta.jsonl"),
        "--predictions",
        str(preds),
        "--tracks",
        "generation",
        "-o",
        str(tmp_path / "refused"),
    )
    assert result.exit_code == 1
    assert 'the generation track needs "answer"' in result.stderr
    assert "returns a ranking only" in result.stderr


def test_rows_without_a_field_a_track_needs_are_named(tmp_path: Path) -> None:
    rows = perfect_rows()
    del rows[4]["answer"]  # q05
    preds = write_jsonl(tmp_path / "preds.jsonl", rows)
    result = run(
        str(EXAMPLES / "pasta.jsonl"), "--predictions", str(preds), "-o", str(tmp_path / "r")
    )
    assert result.exit_code == 1
    assert '1 prediction(s) have no "answer", which the generation track needs: "q05 (line 5)"' in (
        result.stderr
    )
    result = run(
        str(EXAMPLES / "pasta.jsonl"),
        "--predictions",
        str(preds),
        "--tracks",
        "retrieval",
        "-o",
        str(tmp_path / "r2"),
    )
    assert result.exit_code == 0, result.output


def test_a_closed_book_file_gets_generation_only(tmp_path: Path) -> None:
    data = write_jsonl(
        tmp_path / "facts.jsonl",
        [
            {"id": "a", "question": "Capital of France?", "answer": "Paris"},
            {"id": "b", "question": "Two plus two?", "answer": "four"},
        ],
    )
    preds = write_jsonl(
        tmp_path / "p.jsonl", [{"id": "a", "answer": "Paris"}, {"id": "b", "answer": "5"}]
    )
    out = tmp_path / "run"
    result = run(str(data), "--predictions", str(preds), "-o", str(out))
    assert result.exit_code == 0, result.output
    (found,) = results_of(out)
    assert found["setup"]["tracks"] == ["generation"]
    assert found["metrics"]["generation"]["exact_match"]["mean"] == 0.5


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            '{"id": "q01", "anwser": "x"}',
            'line 1 (id "q01"): unknown field "anwser" (did you mean "answer"?)',
        ),
        ('{"id": "q01", "answer": "x"', "line 1: not valid JSON"),
        ('{"answer": "x"}', 'line 1: field "id" must be a string or a number'),
        ('{"id": "q01"}', 'line 1 (id "q01"): give "answer" and/or "retrieved"'),
        ('{"id": "q01", "retrieved": "ragu"}', "expected a ranked list (best first)"),
        ('["q01"]', "line 1: must be a JSON object, got list"),
    ],
)
def test_bad_rows_are_listed_with_their_line(tmp_path: Path, line: str, message: str) -> None:
    preds = tmp_path / "p.jsonl"
    preds.write_text(line + "\n", encoding="utf-8")
    result = run(
        str(EXAMPLES / "pasta.jsonl"), "--predictions", str(preds), "-o", str(tmp_path / "r")
    )
    assert result.exit_code == 1
    assert message in result.stderr
    assert "Traceback" not in result.output


def test_a_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    result = run(str(EXAMPLES / "pasta.jsonl"), "--predictions", str(tmp_path / "nope.jsonl"))
    assert result.exit_code == 2
    assert "nope.jsonl: no such file" in result.stderr


def test_unknown_passages_keep_their_rank_and_count_as_not_relevant(tmp_path: Path) -> None:
    q01 = ROWS["q01"]
    rows = perfect_rows()
    rows[0]["retrieved"] = ["A passage no benchmark has.", q01.contexts[0]]
    preds = write_jsonl(tmp_path / "p.jsonl", rows)
    out = tmp_path / "run"
    assert (
        run(str(EXAMPLES / "pasta.jsonl"), "--predictions", str(preds), "-o", str(out)).exit_code
        == 0
    )
    (found,) = results_of(out)
    first = found["per_query"][0]
    assert first["metrics"]["mrr"] == 0.5
    assert first["ranking"][0][0].startswith("unmatched:")
    assert first["unmatched"] == [
        {"rank": 1, "id": first["ranking"][0][0], "given": "A passage no benchmark has."}
    ]


def test_a_beir_file_may_cover_queries_without_judgments(tmp_path: Path) -> None:
    folder = tmp_path / "beir"
    shutil.copytree(EXAMPLES / "pasta-beir", folder)
    with (folder / "queries.jsonl").open("a", encoding="utf-8") as f:
        f.write(json.dumps({"_id": "b8", "text": "an unjudged query"}) + "\n")
    queries = [json.loads(x)["_id"] for x in (folder / "queries.jsonl").read_text().splitlines()]
    preds = write_jsonl(tmp_path / "p.jsonl", [{"id": q, "retrieved": ["pesto"]} for q in queries])
    out = tmp_path / "run"
    result = run(str(folder), "--predictions", str(preds), "-o", str(out))
    assert result.exit_code == 0, result.output
    (found,) = results_of(out)
    assert found["counts"]["scored"] == 7 and found["setup"]["system"]["check"]["unknown"] == 0


def test_resume_restores_only_results_of_the_same_file(tmp_path: Path) -> None:
    preds = write_jsonl(tmp_path / "p.jsonl", perfect_rows())
    out = tmp_path / "run"
    data = str(EXAMPLES / "pasta.jsonl")
    assert run(data, "--predictions", str(preds), "-o", str(out)).exit_code == 0
    # A file's answers call nothing without a judge: their records go in a batch.
    assert [p.name for p in out.glob("tasks/*/*/*")] == ["batch-000001.jsonl"]
    again = run(data, "--predictions", str(preds), "-o", str(out), "--resume")
    assert "14 of 14 tasks already finished" in again.stderr
    write_jsonl(preds, perfect_rows(q01="lasagne"))
    edited = run(data, "--predictions", str(preds), "-o", str(out), "--resume")
    assert edited.exit_code == 0, edited.output
    assert "0 of 14 tasks already finished" in edited.stderr
    (found,) = results_of(out)
    assert found["per_query"][0]["generation"]["prediction"] == "lasagne"


def test_a_sweep_compares_a_predictions_file_with_bm25_in_one_group(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    shutil.copy(EXAMPLES / "pasta.jsonl", folder / "pasta.jsonl")
    write_jsonl(folder / "mine.jsonl", perfect_rows())
    sweep = folder / "sweep.yaml"
    sweep.write_text(
        "benchmarks:\n  - path: pasta.jsonl\n"
        "setups:\n"
        "  - name: bm25\n    retriever: {top_k: 5}\n"
        "  - name: mine\n    system: {predictions: mine.jsonl}\n"
        "    retriever: {top_k: 5}\n"
        "tracks: [retrieval]\n",
        encoding="utf-8",
    )
    out = tmp_path / "run"
    result = run(str(sweep), "-o", str(out))
    assert result.exit_code == 0, result.output
    bm25, mine = results_of(out)
    assert bm25["comparability_key"] == mine["comparability_key"]
    assert mine["setup"]["retriever"] == {"method": "system", "top_k": 5}
    assert mine["metrics"]["retrieval"]["ndcg@10"]["mean"] == 1.0
    assert "recall@5" in mine["metrics"]["retrieval"]
    assert bm25["metrics"]["retrieval"]["ndcg@10"]["count"] == 12
    assert "compared:" in result.stdout


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (
            "  - name: x\n    system: {predictions: m.jsonl}\n    generator: local/smollm2\n",
            "has both `system:` and `generator:`",
        ),
        (
            "  - name: x\n    system: {predictions: m.jsonl}\n    retriever: {k1: 1.2}\n",
            '"k1" is a BM25 setting',
        ),
        ("  - name: x\n    sytem: m:f\n", 'unknown key "sytem" (did you mean "system"?)'),
        (
            "  - name: x\n    system: {url: 'http://h/x', allow_missing: true}\n",
            "applies to a `predictions:` file only",
        ),
        (
            "  - name: x\n    system: m:f\n    tracks: [closed-book]\n",
            "closed-book is the built-in generator",
        ),
    ],
)
def test_bad_system_setups_in_sweep_files(tmp_path: Path, setup: str, message: str) -> None:
    sweep = tmp_path / "s.yaml"
    shutil.copy(EXAMPLES / "pasta.jsonl", tmp_path / "pasta.jsonl")
    sweep.write_text(f"benchmarks:\n  - path: pasta.jsonl\nsetups:\n{setup}", encoding="utf-8")
    result = run(str(sweep), "-o", str(tmp_path / "r"))
    assert result.exit_code == 2, result.output
    assert message in result.stderr


def test_system_flags_with_a_sweep_file_that_lists_setups(tmp_path: Path) -> None:
    result = run(str(EXAMPLES / "sweep.yaml"), "--predictions", str(PREDICTIONS))
    assert result.exit_code == 2
    assert "add it to the file as a setup with `system:`" in result.stderr


def test_generator_and_system_together_are_refused() -> None:
    result = run(
        str(EXAMPLES / "pasta.jsonl"), "--predictions", str(PREDICTIONS), "--generator", "local/x"
    )
    assert result.exit_code == 2
    assert "a system answers by itself" in result.stderr
