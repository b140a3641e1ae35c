"""Stage eval: F1, judge accuracy and the refusal heuristic over the generated answers.

- F1: SQuAD token F1 (lasagna-metrics), the maximum over the references.
- Accuracy: lasagna-judge's grade_batch with the benchmark's rubric (binary 0/4 for LoCoMo,
  the 0-4 scale for the others), all references shown to the judge. A grade the judge
  could not give (unparsed, or a failed call) is counted apart, never averaged as 0.
- Refusal heuristic: when the answer and a reference both decline to answer, F1 is 1.0
  and accuracy 4, marked "Heuristic_Refusal_Check" (no judge call is made for them).
- Questions with no reference answer (BEIR) get no F1 and no accuracy, and are counted.

Each graded answer is one file in eval/, written as it finishes, so an interrupted stage
resumes; qa_eval_detailed_results.json is assembled from them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lasagna_cli._pipeline._report import (
    EVAL_TASKS_DIR,
    EVALUATED_FILE,
    REFUSAL_HEURISTIC,
    sha256_json,
)
from lasagna_cli._store import read_json, write_json_atomic

if TYPE_CHECKING:
    from lasagna_judge import LLM, Grade, Rubric


#: Bump when a record's fields or metrics change: finished files of older versions are redone.
RECORD_VERSION = 1


@dataclass
class EvalOutcome:
    records: list[dict[str, Any]] = field(default_factory=list)
    reused: int = 0
    judged: int = 0
    seconds: float = 0.0


def _task_path(out: Path, index: int) -> Path:
    return out / EVAL_TASKS_DIR / f"{index:06d}.json"


def _item_sha(item: dict[str, Any]) -> str:
    return sha256_json(
        [item["question"], item["gold_answers"], (item.get("llm") or {}).get("final_answer")]
    )


def refusal_pair(answer: str, references: list[str]) -> bool:
    from lasagna_metrics import is_refusal

    return is_refusal(answer) and any(is_refusal(ref) for ref in references)


def _scored(
    item: dict[str, Any],
    grade: Grade | None,
    rubric: Rubric | None,
    key: dict[str, str],
) -> dict[str, Any]:
    from lasagna_metrics import f1

    answer = str((item.get("llm") or {}).get("final_answer") or "")
    references = list(item["gold_answers"])
    record = {k: v for k, v in item.items() if k != "config_sha256"}
    metrics = dict(item.get("metrics") or {})
    evaluation: dict[str, Any]
    if not references:
        metrics.update({"F1": None, "Accuracy": None})
        evaluation = {"prompt_used": None, "reasoning": "no reference answer to compare with",
                      "normalized_score": None, "status": "no reference"}  # fmt: skip
    elif refusal_pair(answer, references):
        highest = rubric.highest if rubric is not None else 4
        metrics.update({"F1": 1.0, "Accuracy": float(highest)})
        evaluation = {
            "prompt_used": REFUSAL_HEURISTIC,
            "reasoning": "System successfully identified Unanswerable/Refusal condition.",
            "normalized_score": float(highest),
            "status": "ok",
        }
    else:
        score = float(grade.score) if grade is not None and grade.score is not None else None
        metrics.update({"F1": f1(answer, references), "Accuracy": score})
        if grade is None:
            evaluation = {"prompt_used": None, "reasoning": "", "normalized_score": None,
                          "status": "not judged"}  # fmt: skip
        else:
            evaluation = {
                "prompt_used": f"{grade.rubric_id} v{grade.rubric_version}",
                "reasoning": grade.reasoning,
                "normalized_score": score,
                "status": grade.status,
                "path": grade.path,
                "model": grade.model,
                "prompt_sha256": grade.prompt_sha256,
                "raw": grade.raw,
                "error": grade.error,
            }
    record["metrics"] = metrics
    record["llm_evaluation"] = evaluation
    record["eval_key"] = key
    return record


def run_eval(
    out: Path,
    items: list[dict[str, Any]],
    *,
    make_judge: Callable[[], LLM] | None,
    judge_model: str | None,
    rubric: Rubric | None,
    concurrency: int,
) -> EvalOutcome:
    """Score every generated answer, reusing finished task files."""
    from lasagna_cli._progress import TaskProgress

    config = {
        "record_version": RECORD_VERSION,
        "judge": judge_model,
        "rubric": [rubric.id, rubric.version] if rubric is not None else None,
    }
    config_sha = sha256_json(config)
    outcome = EvalOutcome()
    started = time.perf_counter()
    records: dict[int, dict[str, Any]] = {}
    to_judge: list[tuple[int, dict[str, Any], dict[str, str]]] = []
    with TaskProgress(len(items), "eval: score and judge") as progress:
        for item in items:
            i = int(item["_global_index"])
            key = {"config_sha256": config_sha, "item_sha256": _item_sha(item)}
            saved = read_json(_task_path(out, i))
            if isinstance(saved, dict) and saved.get("eval_key") == key:
                records[i] = saved
                outcome.reused += 1
                progress.advance("skipped")
                continue
            answer = str((item.get("llm") or {}).get("final_answer") or "")
            needs_judge = (
                make_judge is not None
                and bool(item["gold_answers"])
                and not refusal_pair(answer, list(item["gold_answers"]))
            )
            if needs_judge:
                to_judge.append((i, item, key))
                continue
            record = _scored(item, None, rubric, key)
            write_json_atomic(_task_path(out, i), record)
            records[i] = record
            progress.advance("done")
        if to_judge and make_judge is not None and rubric is not None:
            asyncio.run(_judge_all(out, to_judge, make_judge, rubric, concurrency, records,
                                   progress))  # fmt: skip
            outcome.judged = len(to_judge)
    outcome.records = [records[i] for i in sorted(records)]
    outcome.seconds = time.perf_counter() - started
    write_json_atomic(out / EVALUATED_FILE, {"results": outcome.records})
    return outcome


async def _judge_all(
    out: Path,
    to_judge: list[tuple[int, dict[str, Any], dict[str, str]]],
    make_judge: Callable[[], LLM],
    rubric: Rubric,
    concurrency: int,
    records: dict[int, dict[str, Any]],
    progress: Any,
) -> None:
    from lasagna_judge import grade_batch

    def on_grade(position: int, grade: Grade) -> None:
        i, item, key = to_judge[position]
        record = _scored(item, grade, rubric, key)
        if grade.status == "error":
            # Not saved as finished: the next run grades it again.
            records[i] = record
            progress.advance("failed")
            return
        write_json_atomic(_task_path(out, i), record)
        records[i] = record
        progress.advance("done")

    judge = make_judge()
    try:
        await grade_batch(
            judge,
            rubric,
            [
                {
                    "question": item["question"],
                    "references": list(item["gold_answers"]),
                    "prediction": str((item.get("llm") or {}).get("final_answer") or ""),
                }
                for _, item, _ in to_judge
            ],
            concurrency=concurrency,
            on_grade=on_grade,
        )
    finally:
        await judge.aclose()
