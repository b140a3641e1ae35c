"""A kag sweep's result folder (`benchmark sweep`) as results, with its DATASETS.json.

kag's result files keep the answer and its stats (tokens, times, passages, the exact
setup), not the question: the DATASETS.json the sweep ran gives the questions, and each
answer is scored by the engine's one scoring module (`answer_fields`: EM/F1 best over the
references, a refusal right for an unanswerable question, an MCQ by the option it picks:
`accuracy`). A question a setup covers with no result file is "not run"; an `{"error"}` file
is "failed". Both are counted, never scored. One result per (dataset, setup); the setups
of one dataset share a comparability key (the same questions), the setups' settings are
what is compared.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lasagna_cli.engine.config._config import DEFAULT_SEED
from lasagna_cli.engine.kag import iter_results, load_datasets
from lasagna_cli.engine.kag._datasets import dataset_of
from lasagna_cli.engine.records._store import read_json, write_json_atomic
from lasagna_cli.engine.reports._results import (
    comparability_key,
    generation_metrics,
    summary,
)
from lasagna_cli.engine.reports._run_data import RunData
from lasagna_cli.engine.run._scoring import answer_fields

PRICES_FILE = "lasagna-prices.json"
SETUP_FIELDS = ("model_id", "provider", "retriever", "temperature", "tokens")


def _questions_sha256(questions: dict[str, Any]) -> str:
    blob = json.dumps(
        {
            qid: [q.text, list(q.references), q.unanswerable, q.options, q.correct_option]
            for qid, q in sorted(questions.items())
        },
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def keep_prices(folder: Path, prices: Mapping[str, tuple[float, float]]) -> None:
    """`sweep --prices`: the table kept beside the results, where `read_kag` (the report,
    the export) finds it."""
    write_json_atomic(folder / PRICES_FILE, {m: list(p) for m, p in sorted(prices.items())})


def read_kag(folder: Path, datasets_path: Path) -> RunData:
    datasets = load_datasets(datasets_path)
    found = list(iter_results(datasets, folder, ""))
    by_key = {(r.setup, dataset_of(r.question), r.question.id): r for r in found}
    setups = sorted({r.setup for r in found})
    data = RunData(path=folder, kind="sweep", results=[], seed=DEFAULT_SEED)
    data.manifest = {"datasets": str(datasets_path)}
    saved = read_json(folder / PRICES_FILE)  # `sweep --prices` keeps its table here
    if isinstance(saved, dict):
        data.prices = {str(k): (float(v[0]), float(v[1])) for k, v in saved.items()}
    for dataset, questions in datasets.items():
        fixed = {
            "door": "sweep",
            "dataset": dataset,
            "questions_sha256": _questions_sha256(questions),
        }
        shown = data.questions.setdefault(dataset, {})
        for qid, question in questions.items():
            shown[qid] = {
                "text": question.text,
                "references": list(question.references),
                "unanswerable": question.unanswerable,
                **({"options": dict(question.options)} if question.options else {}),
            }
        for setup in setups:
            results = [by_key.get((setup, dataset, qid)) for qid in questions]
            if not any(results):
                continue
            entries: list[dict[str, Any]] = []
            sections: list[dict[str, Any]] = []
            described: dict[str, Any] = {}
            for (qid, question), result in zip(questions.items(), results, strict=True):
                if result is None:
                    entries.append({"id": qid, "status": "not run"})
                    continue
                if result.error is not None or result.text is None:
                    entries.append({"id": qid, "status": "failed", "error": result.error})
                    continue
                section = answer_fields(result.text, question)
                stats = result.stats
                recorded = stats.get("setup")
                described = recorded if isinstance(recorded, dict) else {}
                shown_section: dict[str, Any] = {
                    **section,
                    "judge_score": None,
                    "judge_status": None,
                    "model": described.get("model_id"),
                    "input_tokens": stats.get("input_tokens"),
                    "output_tokens": stats.get("output_tokens"),
                    "latency_s": stats.get("generation_time_s"),
                }
                if stats.get("batch") is True:
                    shown_section["batch"] = True
                shown_section.pop("references", None)
                entry: dict[str, Any] = {"id": qid, "status": "scored", "generation": shown_section}
                passages = stats.get("passages")
                if isinstance(passages, list):
                    entry["ranking"] = [
                        [str(p.get("id")), float(p.get("score") or 0.0)]
                        for p in passages
                        if isinstance(p, dict)
                    ]
                entries.append(entry)
                sections.append(section)
            metrics = generation_metrics(sections, DEFAULT_SEED) if sections else {}
            graded = [s for s in sections if s.get("correct") is not None]
            if graded:
                metrics["accuracy"] = summary(
                    [1.0 if s["correct"] else 0.0 for s in graded], DEFAULT_SEED
                )
            scored = sum(1 for e in entries if e["status"] == "scored")
            failed = sum(1 for e in entries if e["status"] == "failed")
            data.results.append(
                {
                    "dataset": {
                        "name": dataset,
                        "revision": fixed["questions_sha256"],
                        "kind": "kag",
                        "split": "test",
                    },
                    "setup": {
                        "name": setup,
                        "tracks": ["generation"],
                        **{k: described[k] for k in SETUP_FIELDS if k in described},
                    },
                    "comparability_key": comparability_key(fixed),
                    "held_fixed": fixed,
                    "varied": [],
                    "counts": {
                        "questions": len(entries),
                        "scored": scored,
                        "failed": failed,
                        "not_run": len(entries) - scored - failed,
                    },
                    "metrics": {"generation": metrics} if metrics else {},
                    "usage": _usage(entries),
                    "per_query": entries,
                }
            )
    return data


def _usage(entries: list[dict[str, Any]]) -> dict[str, int]:
    shown = [e["generation"] for e in entries if isinstance(e.get("generation"), dict)]
    return {
        "input_tokens": sum(int(s.get("input_tokens") or 0) for s in shown),
        "output_tokens": sum(int(s.get("output_tokens") or 0) for s in shown),
    }
