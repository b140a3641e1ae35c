"""The report's figures do not depend on how fast they are gathered: each step of the page's
data (a question's metric values, the paired values of a comparison, the breakdowns' means,
the questions' cells, the entries completed from the task records) is checked against the
plain rule it follows, written here the simple way, on results that take every branch."""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_cli.commands._report import read_runs
from lasagna_cli.engine.records._records import ANSWER_SECTIONS
from lasagna_cli.engine.records._store import RunStore, iter_records
from lasagna_cli.engine.reports import build_report
from lasagna_cli.engine.reports._compare import Side, _applies, _left_out, _paired_rows
from lasagna_cli.engine.reports._report_payload import _breakdowns, _cells, _six_digits
from lasagna_cli.engine.reports._run_data import (
    RunData,
    _generation_values,
    complete_entry,
    complete_from_records,
    metric_names,
    value_reader,
)

GENERATION = (
    "exact_match",
    "f1",
    "has_answer_exact_match",
    "has_answer_f1",
    "no_answer_accuracy",
    "false_refusal_rate",
    "judge_score",
    "judge_score_1",
    "judge_score_2",
    "accuracy",
)


def reference_values(result: Mapping[str, Any], entry: Mapping[str, Any]) -> dict[str, Any]:
    """`value_reader`'s values as its rule reads, one entry at a time."""
    if entry.get("status") != "scored":
        return {}
    metrics = result.get("metrics", {})
    values: dict[str, Any] = {}
    found = entry.get("metrics")
    if "retrieval" in metrics and isinstance(found, Mapping):
        for name in metrics["retrieval"]:
            if name in found:
                values[f"retrieval/{name}"] = found[name]
    for track in ANSWER_SECTIONS:
        section = entry.get(track)
        if track in metrics and isinstance(section, dict):
            for name, value in _generation_values(section, metrics[track]).items():
                values[f"{track}/{name}"] = value
    found = entry.get("diagnostics")
    if "diagnostics" in metrics and isinstance(found, Mapping):
        for name in metrics["diagnostics"]:
            if name in found:
                values[f"diagnostics/{name}"] = found[name]
    return values


def some(rng: random.Random, *choices: Any) -> Any:
    return rng.choice(choices)


def make_result(rng: random.Random, setup: str, n: int) -> dict[str, Any]:
    """A result of `n` questions taking every branch: failed and missing questions,
    unanswerable ones, unjudged retrieval, grades ok, unparsed and failed, a jury, MCQ
    answers, claim checks, and both answer tracks."""
    entries = []
    for i in range(n):
        status = some(rng, "scored", "scored", "scored", "scored", "failed", "missing")
        entry: dict[str, Any] = {"id": f"q{i}" if i % 17 else i, "status": status}
        if status != "scored":
            entry["error" if status == "failed" else "missing"] = f"{status} {i}"
            entries.append(entry)
            continue
        ranking = [[f"d{rng.randrange(50)}", rng.random() * 10] for _ in range(rng.randrange(4))]
        entry.update(ranking=ranking, judgments={"d1": 1} if i % 3 else {})
        entry["metrics"] = (
            None
            if i % 11 == 0
            else {"ndcg@10": some(rng, 0.0, 1.0, rng.random(), None), "mrr": rng.random()}
        )
        for track in ANSWER_SECTIONS:
            if rng.random() < 0.2:
                continue
            status_of_grade = some(rng, "ok", "ok", "unparsed", "error", None)
            section: dict[str, Any] = {
                "prediction": some(rng, "basil", "", None),
                "exact_match": some(rng, 0.0, 1.0),
                "f1": rng.random(),
                "refused": rng.random() < 0.2,
                "unanswerable": i % 5 == 0,
                "judge_score": some(rng, 0, 2, 4) if status_of_grade == "ok" else None,
                "judge_status": status_of_grade,
                "correct": some(rng, True, False, None),
            }
            if rng.random() < 0.3:
                section["jury"] = [
                    {
                        "model": "m",
                        "score": some(rng, 1, 3, None),
                        "status": some(rng, "ok", "unparsed"),
                    }
                    for _ in range(2)
                ]
            entry[track] = section
        if rng.random() < 0.5:
            entry["diagnostics"] = {"claim_recall": some(rng, rng.random(), None)}
        entries.append(entry)
    summary = {"mean": 0.5}
    return {
        "dataset": {"name": "bench"},
        "setup": {"name": setup},
        "comparability_key": "same",
        "held_fixed": {"dataset": "bench"},
        "metrics": {
            "retrieval": {"mrr": summary, "ndcg@10": summary},
            "generation": {**dict.fromkeys(GENERATION, summary), "judge_status": {"ok": 1}},
            "closed-book": {"f1": summary, "judge_score": summary},
            "diagnostics": {"claim_recall": summary},
        },
        "per_query": entries,
    }


@pytest.fixture(scope="module")
def run() -> RunData:
    rng = random.Random(7)
    results = [make_result(rng, setup, 300) for setup in ("a", "b", "c")]
    results[2]["per_query"] = [*results[2]["per_query"][40:], {"id": "extra", "status": "scored"}]
    return RunData(path=Path("run"), kind="run", results=results)


def test_each_question_has_the_values_of_its_rule(run: RunData) -> None:
    for result in run.results:
        values = run.values(result)
        for entry in result["per_query"]:
            expected = reference_values(result, entry)
            found = value_reader(result)(entry)
            assert list(found.items()) == list(expected.items())  # the same order too
            assert values[str(entry["id"])] == expected
    assert any(len(v) > 8 for v in run.values(run.results[0]).values())  # every track met


def reference_pairs(a: Side, b: Side) -> list[tuple[dict[str, Any], list[Any]]]:
    """A comparison's rows, question by question then metric by metric."""
    entries_a = {str(q["id"]): q for q in a.result["per_query"]}
    entries_b = {str(q["id"]): q for q in b.result["per_query"]}
    values_a, values_b = a.run.values(a.result), b.run.values(b.result)
    names = [m for m in metric_names(a.result) if m in metric_names(b.result)]
    pairs: dict[str, list[tuple[float, float]]] = {m: [] for m in names}
    left_out: dict[str, Counter[str]] = {m: Counter() for m in names}
    for qid in list(entries_a) + [i for i in entries_b if i not in entries_a]:
        for metric in names:
            x = values_a.get(qid, {}).get(metric)
            y = values_b.get(qid, {}).get(metric)
            if x is not None and y is not None:
                pairs[metric].append((float(x), float(y)))
            elif _applies(metric, entries_a.get(qid), entries_b.get(qid)):
                left_out[metric][_left_out(entries_a.get(qid), entries_b.get(qid), metric)] += 1
    return [
        (
            {"metric": m, "n": len(pairs[m]), "left_out": dict(sorted(left_out[m].items()))},
            [[x for x, _ in pairs[m]], [y for _, y in pairs[m]]],
        )
        for m in names
    ]


def test_a_comparison_pairs_the_values_both_have(run: RunData) -> None:
    first = Side(run, run.results[0])
    for other in run.results[1:]:
        _, rows = _paired_rows(first, Side(run, other), None, force=False)
        expected = reference_pairs(first, Side(run, other))
        assert [(row, [list(x) for x in pairs]) for row, pairs in rows] == expected
        assert sum(row["n"] for row, _ in rows) > 0 and any(row["left_out"] for row, _ in rows)


def test_the_breakdowns_are_the_means_of_each_group(run: RunData) -> None:
    questions = {
        str(e["id"]): {"category": f"c{i % 3}", "question_type": "factoid"}
        for i, e in enumerate(run.results[0]["per_query"])
    }
    metrics = ["retrieval/ndcg@10", "generation/f1", "generation/judge_score"]
    values = [run.values(r) for r in run.results]
    (found,) = _breakdowns(values, questions, metrics)  # one question type: no breakdown
    assert found["by"] == "category"
    for row in found["rows"]:
        asked = [q for q, shown in questions.items() if shown["category"] == row["value"]]
        for per_result, cell in zip(values, row["cells"], strict=True):
            for metric in metrics:
                got = [per_result.get(q, {}).get(metric) for q in asked]
                got = [float(v) for v in got if v is not None]
                assert cell[metric] == [math.fsum(got) / len(got) if got else None, len(got)]


def reference_cell(
    entry: Mapping[str, Any],
    values: Mapping[str, Any],
    names: list[str],
) -> dict[str, Any]:
    cell: dict[str, Any] = {"s": entry.get("status")}
    if values:
        cell["v"] = [values.get(name) for name in names]
    error = entry.get("error") or entry.get("missing")
    if error:
        cell["e"] = str(error)
    ranking = entry.get("ranking")
    if ranking:
        cell["r"] = [doc for doc, _ in ranking]
        cell["rs"] = _six_digits([score for _, score in ranking])
    if entry.get("judgments"):
        cell["j"] = entry["judgments"]
    answers = {
        track: {k: v for k, v in entry[track].items() if v is not None}
        for track in ANSWER_SECTIONS
        if isinstance(entry.get(track), Mapping)
    }
    if answers:
        cell["a"] = answers
    return cell


def test_each_cell_holds_its_question_as_the_page_shows_it(run: RunData) -> None:
    names = metric_names(run.results[0])
    for result in run.results:
        values = run.values(result)
        cells = _cells(result["per_query"], values, names)
        expected = {
            str(e["id"]): reference_cell(e, values[str(e["id"])], names)
            for e in result["per_query"]
        }
        assert orjson.dumps(cells) == orjson.dumps(expected)  # keys in the same order too


@pytest.fixture(scope="module")
def predictions_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run of two BM25 setups and two predictions files (one leaves a question out)."""
    folder = tmp_path_factory.mktemp("predictions")
    rng = random.Random(3)
    words = ["pasta", "sauce", "oven", "layer", "cheese", "basil", "tomato", "garlic"]
    rows, systems = [], {"sys-a": [], "sys-b": []}
    for i in range(40):
        answer = " ".join(rng.choice(words) for _ in range(3))
        rows.append(
            {
                "id": f"q{i}",
                "question": f"what {rng.choice(words)} item{i}?",
                "answer": answer,
                "contexts": [f"{answer} {rng.choice(words)} item{i}"],
                "expected_docs": [f"d{i}"],
                "metadata": {"question_type": rng.choice(["factoid", "multihop"])},
            }
        )
        for name, found in systems.items():
            if name == "sys-b" and i == 5:
                continue
            found.append(
                {
                    "id": f"q{i}",
                    "answer": answer if rng.random() < 0.6 else "no idea",
                    "retrieved": [f"d{rng.randrange(40)}", f"d{i}"],
                }
            )
    (folder / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    for name, found in systems.items():
        text = "".join(json.dumps(r) + "\n" for r in found)
        (folder / f"{name}.jsonl").write_text(text, encoding="utf-8")
    (folder / "sweep.yaml").write_text(
        "benchmarks:\n  - path: data.jsonl\nsetups:\n"
        "  - {name: bm25-k3, retriever: {top_k: 3}}\n"
        "  - {name: bm25-k5, retriever: {top_k: 5}}\n"
        "  - {name: sys-a, system: {predictions: sys-a.jsonl}}\n"
        "  - {name: sys-b, system: {predictions: sys-b.jsonl, allow_missing: true}}\n",
        encoding="utf-8",
    )
    out = folder / "run"
    result = CliRunner().invoke(
        app, ["benchmark", "run", str(folder / "sweep.yaml"), "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    return out


def test_entries_are_completed_from_their_own_records(predictions_run: Path) -> None:
    results = json.loads((predictions_run / "results.json").read_text(encoding="utf-8"))
    data = RunData(path=predictions_run, kind="run", results=results["results"])
    complete_from_records(data)
    expected = json.loads((predictions_run / "results.json").read_text(encoding="utf-8"))
    index = {
        (r["dataset"]["name"], r["setup"]["name"], str(q["id"])): q
        for r in expected["results"]
        for q in r["per_query"]
    }
    questions: dict[str, dict[str, Any]] = {}
    for _, record in iter_records(RunStore(predictions_run)):
        task = record["task"]
        entry = index.get((task["dataset"], task["setup"], task["item"]))
        if entry is not None and entry["status"] == "scored":
            complete_entry(entry, record)
            section = record.get("generation") or {}
            if section.get("question"):
                questions.setdefault(
                    task["item"],
                    {
                        "text": section["question"],
                        "references": section["references"],
                        "unanswerable": section["unanswerable"],
                    },
                )
    assert data.results == expected["results"]
    (name,) = {r["dataset"]["name"] for r in data.results}
    assert data.questions == {name: questions} and len(questions) == 40
    seconds = [q.get("retrieval_seconds") for r in data.results[:2] for q in r["per_query"]]
    assert all(isinstance(s, float) for s in seconds)  # the retrieval-only records were read
    assert any(q["status"] == "missing" for q in data.results[3]["per_query"])


def test_the_report_file_is_the_whole_page(predictions_run: Path, tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    result = CliRunner().invoke(
        app, ["benchmark", "report", str(predictions_run), "-o", str(target)]
    )
    assert result.exit_code == 0, result.output
    page = build_report(read_runs([predictions_run], None, None))
    assert target.read_bytes() == page
    assert f"({len(page) / 1e6:.1f} MB;" in result.output
