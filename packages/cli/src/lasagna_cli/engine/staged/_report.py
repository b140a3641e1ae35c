"""The pipeline's files and its report, with OpenViking's report keys.

benchmark_metrics_report.json is read, merged and rewritten by every stage, so stages run
separately (gen today, eval tomorrow) add up to one report. The keys OpenViking's RAG
benchmark writes are kept exactly; lasagna's own figures (how many questions had no
evidence, unparsed grades, the retriever and models used) go under "lasagna".
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from lasagna_cli.engine.records._store import read_json, write_json_atomic

GENERATED_FILE = "generated_answers.json"
EVALUATED_FILE = "qa_eval_detailed_results.json"
REPORT_FILE = "benchmark_metrics_report.json"
INDEX_DIR = "index"
GEN_TASKS_DIR = "gen"
EVAL_TASKS_DIR = "eval"

INSERTION = "Insertion Efficiency (Total Dataset)"
QUERY = "Query Efficiency (Average Per Query)"
DATASET = "Dataset"
TOTAL_EVALUATED = "Total Queries Evaluated"
PERFORMANCE = "Performance Metrics"
DELETION = "Deletion Efficiency (Total Dataset)"
F1_KEY = "Average F1 Score"
RECALL_KEY = "Average Recall"
ACCURACY_KEY = "Average Accuracy (Hit 0-4)"
NORMALIZED_KEY = "Average Accuracy (normalization)"
LASAGNA = "lasagna"

#: Marks a grade the refusal heuristic gave (answer and a reference both refuse).
REFUSAL_HEURISTIC = "Heuristic_Refusal_Check"

#: What only eval writes: its figures under Performance Metrics and under lasagna.
EVAL_FIGURES = (F1_KEY, ACCURACY_KEY, NORMALIZED_KEY)
EVAL_LASAGNA_KEYS = (
    "questions_with_references",
    "accuracy_graded",
    "grade_statuses",
    "refusal_heuristic",
    "judge",
    "rubric",
    "accuracy_note",
    "f1_note",
    "eval_seconds",
)


def read_items(path: Path) -> list[dict[str, Any]] | None:
    """The records of generated_answers.json or qa_eval_detailed_results.json: their
    "results", as OpenViking writes them (a bare list, as lasagna 0.3 wrote them, is read
    too)."""
    saved = read_json(path)
    if isinstance(saved, dict):
        saved = saved.get("results")
    return saved if isinstance(saved, list) else None


def update_report(out: Path, updates: Mapping[str, Any]) -> dict[str, Any]:
    """Merge `updates` into the report: a section (a dict) is merged key by key, anything
    else replaced. Returns the report as written."""
    current = read_json(out / REPORT_FILE)
    report: dict[str, Any] = current if isinstance(current, dict) else {}
    for key, value in updates.items():
        if isinstance(value, Mapping) and isinstance(report.get(key), dict):
            report[key] = {**report[key], **value}
        else:
            report[key] = value
    write_json_atomic(out / REPORT_FILE, report)
    return report


def forget_eval(out: Path) -> bool:
    """Drop eval's figures from the report, once gen has changed answers they graded (so a
    report never mixes new answers with old grades). Returns whether there were any."""
    report = read_json(out / REPORT_FILE)
    if not isinstance(report, dict) or TOTAL_EVALUATED not in report:
        return False
    del report[TOTAL_EVALUATED]
    for section, keys in ((PERFORMANCE, EVAL_FIGURES), (LASAGNA, EVAL_LASAGNA_KEYS)):
        found = report.get(section)
        if isinstance(found, dict):
            for key in keys:
                found.pop(key, None)
    write_json_atomic(out / REPORT_FILE, report)
    return True


def mean(values: Iterable[float | None]) -> tuple[float | None, int]:
    """(mean of the values that are not None, how many there were); None when none."""
    present = [v for v in values if v is not None]
    return (sum(present) / len(present) if present else None), len(present)


def sha256_json(obj: Any) -> str:
    text = json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def query_efficiency(results: list[dict[str, Any]]) -> dict[str, float]:
    """OpenViking's per-query averages, from the generated answers."""
    n = len(results) or 1

    def total(section: str, key: str) -> float:
        return float(sum((r.get(section) or {}).get(key) or 0 for r in results))

    return {
        "Average Retrieval Time (s)": total("retrieval", "latency_sec") / n,
        "Average Input Tokens": total("token_usage", "total_input_tokens") / n,
        "Average Output Tokens": total("token_usage", "llm_output_tokens") / n,
        "Average Retrieval Embedding Tokens": total("token_usage", "retrieval_embedding_tokens")
        / n,
    }
