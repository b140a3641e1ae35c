"""What the HTML report shows, as one JSON-ready object (`report_payload`); `_html` inlines
it with the page's script.

Results are grouped as results.json groups them: one group per benchmark and comparability
key (results with one key measured the same questions the same way), across every run
folder given. Each group carries its results (metric summaries as results.json has them,
counts, usage, cost, mean latency, the claim diagnosis's retriever-vs-generator table),
its breakdowns (the headline metrics by category and by question type, plain means with
their counts), the settings its setups vary (`_settings`: chunking, retriever, top_k,
generator, prompt...), its paired comparisons (the first result against each other one,
`_compare`, each metric with its verdict) and its questions: the text, the references, one
cell per result (status, every metric's value, answers with their grades, the ranking with
each passage's relevance, the error). The passages' texts are listed once per benchmark.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import numpy as np

from lasagna_cli.engine.records._records import ANSWER_SECTIONS
from lasagna_cli.engine.reports._compare import group_key
from lasagna_cli.engine.reports._diagnosis import diagnosis_table
from lasagna_cli.engine.reports._run_data import RunData, metric_names
from lasagna_cli.engine.reports._settings import varied_settings

HEADLINE = (
    "retrieval/ndcg@10",
    "retrieval/evidence_recall",
    "retrieval/span_recall",
    "retrieval/span_precision",
    "retrieval/span_iou",
    "retrieval/recall@",
    "retrieval/mrr",
    "generation/f1",
    "generation/exact_match",
    "generation/judge_score",
    "generation/accuracy",
    "closed-book/f1",
    "closed-book/judge_score",
    "diagnostics/claim_recall",
    "diagnostics/context_utilization",
    "diagnostics/hallucination",
    "diagnostics/faithfulness",
)
BREAKDOWN_KEYS = ("category", "question_type")


def headline_metrics(names: Sequence[str]) -> list[str]:
    """The metrics the charts and comparisons show, in a fixed order (recall@k at the
    run's own k)."""
    chosen: list[str] = []
    for prefix in HEADLINE:
        for name in names:
            matches = name.startswith(prefix) if prefix.endswith("@") else name == prefix
            if matches and name not in chosen:
                chosen.append(name)
    return chosen


def _mean(values: Sequence[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def _six_digits(scores: list[float]) -> list[float]:
    """Each score rounded to 6 significant digits, all in one pass (a 10,000-question run
    of 4 setups ranks 400,000 passages): the page shows 4."""
    x = np.asarray(scores, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        digits = 5 - np.floor(np.log10(np.abs(x)))
    scale = 10.0 ** np.clip(np.nan_to_num(digits, posinf=0.0, neginf=0.0), -300, 300)
    rounded: list[float] = (np.round(x * scale) / scale).tolist()
    return rounded


def _cells(
    entries: Sequence[Mapping[str, Any]],
    values: Mapping[str, Mapping[str, Any]],
    names: Sequence[str],
) -> dict[str, dict[str, Any]]:
    """Each question's `_cell` by its id, the rankings' scores rounded together."""
    scores = _six_digits([s for e in entries for _, s in e.get("ranking") or ()])
    cells = {}
    start = 0
    for entry in entries:
        end = start + len(entry.get("ranking") or ())
        cells[str(entry["id"])] = _cell(entry, values[str(entry["id"])], names, scores[start:end])
        start = end
    return cells


def _cell(
    entry: Mapping[str, Any],
    values: Mapping[str, Any],
    names: Sequence[str],
    scores: list[float],
) -> dict[str, Any]:
    """One question of one result, compactly: `v` holds the value of each of the group's
    metrics in order (null: none); a ranking is its passages' ids (`r`) and their scores
    (`rs`, `scores`: 6 significant digits, the exact ones are in results.json), each
    passage's grade being in the judgments (`j`). A 10,000-question run's report is a third
    smaller, and half as many lists."""
    cell: dict[str, Any] = {"s": entry.get("status")}
    if values:
        cell["v"] = [values.get(name) for name in names]
    error = entry.get("error") or entry.get("missing")
    if error:
        cell["e"] = str(error)
    judgments = entry.get("judgments") or {}
    ranking = entry.get("ranking")
    if ranking:
        cell["r"] = [doc for doc, _ in ranking]
        cell["rs"] = scores
    if judgments:
        cell["j"] = judgments
    answers = {}
    for track in ANSWER_SECTIONS:
        section = entry.get(track)
        if isinstance(section, Mapping):
            answers[track] = {k: v for k, v in section.items() if v is not None}
    if answers:
        cell["a"] = answers
    return cell


def _latency(result: Mapping[str, Any]) -> dict[str, float | None]:
    answer: list[float] = []
    retrieval: list[float] = []
    for entry in result.get("per_query", ()):
        if entry.get("retrieval_seconds") is not None:
            retrieval.append(float(entry["retrieval_seconds"]))
        for track in ANSWER_SECTIONS:
            section = entry.get(track)
            if isinstance(section, Mapping) and section.get("latency_s") is not None:
                answer.append(float(section["latency_s"]))
    return {"answer_s": _mean(answer), "retrieval_s": _mean(retrieval)}


def _breakdowns(
    values: Sequence[Mapping[str, Mapping[str, Any]]],
    questions: Mapping[str, Mapping[str, Any]],
    metrics: Sequence[str],
) -> list[dict[str, Any]]:
    """Per value of a question's category (question type), each result's mean of each
    headline metric over those questions, with how many had a value."""
    found = []
    for key in BREAKDOWN_KEYS:
        groups: dict[str, list[str]] = {}
        for qid, question in questions.items():
            if question.get(key):
                groups.setdefault(str(question[key]), []).append(qid)
        if len(groups) < 2:
            continue
        rows = []
        for value in sorted(groups):
            cells = []
            for per_result in values:
                asked = [per_result.get(qid, {}) for qid in groups[value]]
                cell = {}
                for metric in metrics:
                    got = [float(v) for shown in asked if (v := shown.get(metric)) is not None]
                    cell[metric] = [_mean(got), len(got)]
                cells.append(cell)
            rows.append({"value": value, "questions": len(groups[value]), "cells": cells})
        found.append({"by": key, "rows": rows})
    return found


def _varied(
    results: Sequence[Mapping[str, Any]], comparisons: Sequence[Mapping[str, Any]]
) -> list[str]:
    """Every setting the group's setups differ in (`_settings`), then the fields held
    fixed that differ between the runs compared."""
    varied = varied_settings([r["setup"] for r in results])
    for comparison in comparisons:
        for line in comparison["compared_settings"]:
            field = line.split(":")[0].split(".")[0]  # retriever.k1: the retriever's
            if field not in varied:
                varied.append(field)
    return varied


def _versions() -> dict[str, str]:
    try:
        return {"lasagna-cli": version("lasagna-cli")}
    except PackageNotFoundError:  # pragma: no cover - always installed with the package
        return {}


def report_payload(
    runs: Sequence[RunData],
    comparisons: Sequence[Mapping[str, Any]] = (),
    title: str = "lasagna report",
) -> dict[str, Any]:
    groups: dict[tuple[str, str], dict[str, Any]] = {}  # (benchmark, group key) -> group
    members: dict[tuple[str, str], list[tuple[int, Mapping[str, Any]]]] = {}
    for index, run in enumerate(runs):
        for result in run.results:
            pair = (str(result["dataset"]["name"]), group_key(result))
            members.setdefault(pair, []).append((index, result))
    passages: dict[str, dict[str, str]] = {}
    for run in runs:
        for dataset, texts in run.passages.items():
            passages.setdefault(dataset, {}).update(texts)
    for (dataset, key), found in members.items():
        results = [r for _, r in found]
        names: list[str] = []
        for one in results:
            names += [m for m in metric_names(one) if m not in names]
        ids: list[str] = []
        seen: set[str] = set()
        for one in results:
            for entry in one.get("per_query", ()):
                if str(entry["id"]) not in seen:
                    seen.add(str(entry["id"]))
                    ids.append(str(entry["id"]))
        questions: dict[str, dict[str, Any]] = {}
        for index, _ in found:
            for qid, shown in runs[index].questions.get(dataset, {}).items():
                if qid in seen:  # the questions these results asked
                    questions.setdefault(qid, dict(shown))
        values = [runs[index].values(result) for index, result in found]
        cells_by_result = [
            _cells(r.get("per_query", ()), v, names) for r, v in zip(results, values, strict=True)
        ]
        rows = []
        for qid in ids:
            shown = questions.get(qid, {})
            row: dict[str, Any] = {"id": qid, "c": [cells.get(qid) for cells in cells_by_result]}
            if shown.get("text"):
                row["q"] = shown["text"]
            for short, field in (("refs", "references"), ("cat", "category"),
                                 ("qt", "question_type"), ("ev", "evidence"),
                                 ("opt", "options")):  # fmt: skip
                if shown.get(field):
                    row[short] = shown[field]
            if shown.get("unanswerable"):
                row["un"] = True
            rows.append(row)
        headline = headline_metrics(names)
        group_comparisons = [
            c
            for c in comparisons
            if c["a"]["dataset"] == dataset
            and c["a"]["comparability_key"] in {r["comparability_key"] for r in results}
        ]
        groups[(dataset, key)] = {
            "dataset": dataset,
            "key": key,
            # The results' own keys, as results.json and the terminal's leaderboard print
            # them; more than one when runs of other settings are compared as one group.
            "comparability_keys": sorted({str(r["comparability_key"]) for r in results}),
            "held_fixed": results[0].get("held_fixed", {}),
            "varied": _varied(results, group_comparisons),
            "metrics": names,
            "headline": headline,
            "results": [
                {
                    "run": index,
                    "setup": result["setup"]["name"],
                    "label": result["setup"]["name"]
                    + (f" ({runs[index].label})" if len(runs) > 1 else ""),
                    "setup_info": result["setup"],
                    "counts": result.get("counts", {}),
                    "metrics": result.get("metrics", {}),
                    "usage": result.get("usage", {}),
                    "latency": _latency(result),
                    "diagnosis": diagnosis_table(result),
                }
                for index, result in found
            ],
            "breakdowns": _breakdowns(values, questions, headline),
            "comparisons": group_comparisons,
            "questions": rows,
        }
    return {
        "title": title,
        "generator": _versions(),
        "runs": [
            {"label": run.label, "kind": run.kind, "manifest": run.manifest, "notes": run.notes}
            for run in runs
        ],
        "groups": list(groups.values()),
        "passages": passages,
    }
