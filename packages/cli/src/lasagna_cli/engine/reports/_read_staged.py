"""A staged pipeline's folder (`benchmark run NAME --data-dir DIR`) as results.

The folder has no results.json: its questions are the last gen's (generated_answers.json,
with their text, gold answers, category and evidence), each question's task record is
`eval/<i>.json` when the answer it grades is the current one, else `gen/<i>.json`, and the
passages are in `index/passages.jsonl` until `--step del` drops them. The result is
summarised by results.json's own rules (`_results`): the same means, seeded bootstrap
intervals and counts, under a setup named by what it ran ("bm25 top-5"; "staged" when the
report names no retriever).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from lasagna_cli.engine._errors import EngineError
from lasagna_cli.engine.config._config import DEFAULT_SEED
from lasagna_cli.engine.records._records import ANSWER_SECTIONS
from lasagna_cli.engine.records._store import Record, read_json
from lasagna_cli.engine.reports._results import (
    RESULTS_FORMAT,
    comparability_key,
    generation_metrics,
    summaries,
    usage_of,
)
from lasagna_cli.engine.reports._run_data import RunData, complete_entry
from lasagna_metrics import parse_json

SETUP = "staged"  # when the report names no retriever


def setup_name(lasagna: dict[str, Any]) -> str:
    """The setup by what it ran ("bm25 top-5, openai/gpt-4o-mini"), so that `compare` and
    the report label two staged folders by their settings."""
    retriever = lasagna.get("retriever")
    method = retriever.get("method") if isinstance(retriever, dict) else None
    if not method:
        return SETUP
    name = f"{method} top-{lasagna['top_k']}" if lasagna.get("top_k") else str(method)
    return f"{name}, {lasagna['generator']}" if lasagna.get("generator") else name


def _record(folder: Path, index: int) -> Record | None:
    gen = read_json(folder / "gen" / f"{index:06d}.json")
    graded = read_json(folder / "eval" / f"{index:06d}.json")
    if not isinstance(gen, dict):
        return None
    if isinstance(graded, dict) and graded.get("answer_fingerprint") == gen.get(
        "answer_fingerprint"
    ):
        return graded
    return gen


def _entry(item_id: str, record: Record | None, evidence: list[str]) -> dict[str, Any]:
    entry: dict[str, Any] = {"id": item_id}
    if record is None:
        entry["status"] = "not run"
        return entry
    if record.get("error") is not None:
        entry.update(status="failed", error=record["error"])
        return entry
    entry["status"] = "scored"
    retrieval = record.get("retrieval")
    if isinstance(retrieval, dict):
        entry["ranking"] = retrieval.get("ranking", [])
        entry["metrics"] = retrieval.get("metrics")
        entry["evidence"] = evidence
    for track in ANSWER_SECTIONS:
        section = record.get(track)
        if isinstance(section, dict):
            grade = section.get("judge")
            entry[track] = {
                "prediction": section.get("prediction"),
                "exact_match": section.get("exact_match"),
                "f1": section.get("f1"),
                "refused": section.get("refused"),
                "unanswerable": section.get("unanswerable"),
                "judge_score": grade.get("score") if isinstance(grade, dict) else None,
                "judge_status": grade.get("status") if isinstance(grade, dict) else None,
            }
    complete_entry(entry, record)
    return entry


def read_staged(folder: Path) -> RunData:
    from lasagna_cli.engine.staged._report import read_items

    saved = read_items(folder / "generated_answers.json")
    report = read_json(folder / "benchmark_metrics_report.json")
    if saved is None:
        raise EngineError(
            f"{folder}: the staged pipeline's generated_answers.json is missing or not its "
            "JSON; run `lasagna benchmark run NAME --data-dir DIR --step gen -o "
            f"{folder}` to write it"
        )
    lasagna = report.get("lasagna", {}) if isinstance(report, dict) else {}
    items: list[dict[str, Any]] = saved
    records = [_record(folder, int(item.get("_global_index", i))) for i, item in enumerate(items)]
    names = [r["task"]["dataset"] for r in records if r and isinstance(r.get("task"), dict)]
    name = names[0] if names else str(lasagna.get("benchmark") or folder.name)
    entries = [
        _entry(str(item["question_id"]), record, list(item.get("evidence") or ()))
        for item, record in zip(items, records, strict=True)
    ]
    ok = [r for r in records if r is not None and r.get("error") is None]
    metrics: dict[str, Any] = {}
    per_metric: dict[str, list[float | None]] = {}
    for record in ok:
        for metric, value in ((record.get("retrieval") or {}).get("metrics") or {}).items():
            per_metric.setdefault(metric, []).append(value)
    if per_metric:
        metrics["retrieval"] = summaries(dict(sorted(per_metric.items())), DEFAULT_SEED)
    answered = [r["generation"] for r in ok if isinstance(r.get("generation"), dict)]
    if answered:
        metrics["generation"] = generation_metrics(answered, DEFAULT_SEED)
    judges = {
        (s.get("judge") or {}).get("model") for s in answered if isinstance(s.get("judge"), dict)
    }
    fixed = {
        "door": "staged",
        "dataset": name,
        "revision": lasagna.get("data_revision"),
        "split": lasagna.get("split"),
        "corpus": lasagna.get("chunking"),
        "retriever": lasagna.get("retriever"),
        "retrieval_instruction": lasagna.get("retrieval_instruction"),
        "sample_ids_sha256": hashlib.sha256(
            json.dumps(sorted(e["id"] for e in entries)).encode()
        ).hexdigest(),
        "judge": sorted(j for j in judges if j) or None,
        # The answer prompts (with a config's per-category instructions) and the judge's.
        "prompt_sha256": sorted({str(s.get("prompt_sha256")) for s in answered}) or None,
        "judge_prompt_sha256": sorted(
            {
                str(s["judge"].get("prompt_sha256"))
                for s in answered
                if isinstance(s.get("judge"), dict)
            }
        )
        or None,
    }
    failed = sum(1 for r in records if r is not None and r.get("error") is not None)
    result = {
        "dataset": {
            "name": name,
            "revision": lasagna.get("data_revision"),
            "kind": "benchmark",
            "split": lasagna.get("split", "test"),
        },
        "setup": {
            "name": setup_name(lasagna),
            "generator": lasagna.get("generator"),
            "retriever": lasagna.get("retriever"),
            "tracks": ["retrieval", *(["generation"] if answered else [])],
        },
        "comparability_key": comparability_key(fixed),
        "held_fixed": fixed,
        "varied": [],
        "counts": {
            "questions": len(items),
            "scored": len(ok),
            "failed": failed,
            "not_run": len(items) - len(ok) - failed,
        },
        "metrics": metrics,
        "usage": usage_of(ok),
        "per_query": entries,
    }
    data = RunData(
        path=folder,
        kind="staged",
        results=[result],
        manifest={"format": RESULTS_FORMAT, "staged": lasagna},
        seed=DEFAULT_SEED,
    )
    questions = data.questions.setdefault(name, {})
    for item in items:
        gold = list(item.get("gold_answers") or ())
        questions[str(item["question_id"])] = {
            "text": item.get("question", ""),
            "references": gold,
            "category": str(item.get("category") or ""),
            "evidence": list(item.get("evidence") or ()),
        }
    _add_passages(data, folder, name)
    return data


def _add_passages(data: RunData, folder: Path, name: str) -> None:
    from lasagna_cli.engine.reports._texts import PASSAGE_CHARS

    needed = {doc for e in data.results[0]["per_query"] for doc, _ in e.get("ranking", ())}
    path = folder / "index" / "passages.jsonl"
    if not path.is_file():
        data.notes.append(
            f"{name}: passages shown by id: the index was dropped (--step del); run with "
            "--step gen to keep it"
        )
        return
    passages = data.passages.setdefault(name, {})
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            try:
                row = parse_json(line)
            except ValueError:
                continue
            doc = str(row.get("id"))
            if doc in needed:
                text = str(row.get("text", ""))
                passages[doc] = text[:PASSAGE_CHARS] + ("…" if len(text) > PASSAGE_CHARS else "")
