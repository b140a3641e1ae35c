"""The one task record, and the one rule that decides what a resumed run redoes.

A record is plain JSON (`lasagna-task/1`):

    format, task {dataset, item, setup}, fingerprint, answer_fingerprint, revision, split,
    error                     None, or why the task failed (then nothing else is scored)
    retrieval  {ranking [[id, score], ...], metrics {...} | None, query, seconds}
    generation {mode, model, prompt_id, prompt_sha256, question, prediction, references,
                unanswerable, refused, exact_match, f1, [choice, correct], input_tokens,
                output_tokens, latency_s, cached, attempts, context_length, judge, seconds}
    closed-book {... as generation}
    system     {latency_s}              a user's system answered
    missing    why a predictions file left the question out (--allow-missing)

The resume rule (`resume_status`), the same for every door: a record is reused when its
fingerprint is the task's and it holds no error (kag's sweep keeps failed tasks unless
asked to retry them: `retry_failed`); its grades alone are redone when only the judge
changed or a grade failed; anything else is run again. A record from before fingerprints
(a kag result file) is kept as kag keeps it: a file that exists is finished.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from lasagna_cli.engine._errors import RemoteTaskError
from lasagna_cli.engine.plan._plan import Task
from lasagna_cli.engine.records._store import Record

TASK_FORMAT = "lasagna-task/1"
ANSWER_SECTIONS = ("generation", "closed-book")
Status = Literal["done", "grade", "run"]


def new_record(task: Task) -> Record:
    return {
        "format": TASK_FORMAT,
        "task": task.label,
        "fingerprint": task.fingerprint,
        "answer_fingerprint": task.answer_fingerprint,
        "revision": task.revision,
        "split": task.split,
        "error": None,
    }


def failure_record(task: Task, error: BaseException | str) -> Record:
    """A failed task is recorded as its error and counted, never scored."""
    # A worker's exception that could not travel as itself keeps its type's name.
    kind = error.kind if isinstance(error, RemoteTaskError) else type(error).__name__
    if isinstance(error, str) or getattr(error, "recorded_as_is", False):
        message = str(error)  # kag's own wording, as kag records it
    else:
        message = f"{kind}: {error}".strip()
    record = new_record(task)
    record["error"] = message
    return record


def failed_grade(record: Mapping[str, Any]) -> bool:
    for name in ANSWER_SECTIONS:
        section = record.get(name)
        grade = section.get("judge") if isinstance(section, dict) else None
        if isinstance(grade, dict) and grade.get("status") == "error":
            return True
        members = grade.get("jury") if isinstance(grade, dict) else None
        if isinstance(members, list) and any(
            isinstance(g, dict) and g.get("status") == "error" for g in members
        ):  # a jury's judge whose call failed: regraded, the others' grades kept
            return True
    return False


def resume_status(record: Mapping[str, Any] | None, task: Task, *, retry_failed: bool) -> Status:
    if record is None:
        return "run"
    if record.get("legacy"):
        return "run" if retry_failed and record.get("error") is not None else "done"
    if record.get("fingerprint") == task.fingerprint:
        if record.get("error") is not None:
            return "run" if retry_failed else "done"
        return "grade" if failed_grade(record) else "done"
    if record.get("error") is None and record.get("answer_fingerprint") == task.answer_fingerprint:
        return "grade"
    return "run"


def is_current(record: Mapping[str, Any] | None, task: Task) -> bool:
    """Whether a record is this very task's result (for the reports)."""
    if record is None:
        return False
    return bool(record.get("legacy")) or record.get("fingerprint") == task.fingerprint
