"""kag's `stats` over a run folder of `benchmark run` or the staged pipeline: the answers
in its task records, as the stats of a sweep's result files.

Every answered task is a result of its setup (closed-book answers of a setup that also
answers from passages are the setup `<setup>:closed-book`); its question is as the record
keeps it (text, references, unanswerable), so EM/F1 and judge grades follow the same rules
as everywhere. An MCQ record keeps lasagna's grading (`choice`, `correct`), not the answer
key, which is enough for kag's (`_stats.kag_correct`). A failed task's record names no
question type: it takes that of another setup's record of the same question, else it is an
MCQ's error where every question answered in its dataset is an MCQ with an answer.

A task file or batch line that cannot be read (truncated by a full disk, say) is no
record; `damaged_records` names each, so that stats never passes such a folder as clean.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from lasagna_cli.engine._data import Question
from lasagna_cli.engine.kag._datasets import Datasets
from lasagna_cli.engine.kag._result_files import Damaged, Recorded, Result, json_problem
from lasagna_cli.engine.records._records import ANSWER_SECTIONS
from lasagna_cli.engine.records._store import BATCH_PREFIX, RunStore, iter_records
from lasagna_synth import TEMP_PREFIX


def is_run_folder(folder: Path) -> bool:
    return (folder / "manifest.json").is_file() and (folder / "tasks").is_dir()


def run_folder_results(folder: Path) -> tuple[Datasets, list[Result]]:
    """The datasets (as their records name them) and every answer of the folder's tasks."""
    store = RunStore(folder)
    datasets: Datasets = {}
    results: list[Result] = []
    for path, record in iter_records(store):
        if not isinstance(record.get("task"), dict):
            continue
        task = record["task"]
        dataset, item, setup = str(task["dataset"]), str(task["item"]), str(task["setup"])
        error = record.get("error")
        answered = [n for n in ANSWER_SECTIONS if isinstance(record.get(n), dict)]
        if error is None and not answered:
            continue  # retrieval only: nothing for these stats
        for name in answered or ["generation"]:
            section = record.get(name) or {}
            question = Question(
                id=item,
                text=str(section.get("question") or ""),
                references=tuple(section.get("references") or ()),
                unanswerable=bool(section.get("unanswerable")),
                metadata={"dataset": dataset, "question": item},
            )
            known = datasets.setdefault(dataset, {})
            if item not in known or (question.references and not known[item].references):
                known[item] = question
            label = setup if name == "generation" or len(answered) == 1 else f"{setup}:{name}"
            text = None if error is not None else str(section.get("prediction", ""))
            recorded = None
            if "choice" in section:
                correct = section.get("correct")
                recorded = Recorded(correct is not None, section.get("choice"), correct)
            stats = {
                "generation_time_s": section.get("latency_s"),
                "context_length": section.get("context_length"),
                "retrieval_time_s": (record.get("retrieval") or {}).get("seconds"),
            }
            results.append(Result(question, label, path, text, error, stats, recorded))
    return datasets, _typed_errors(results)


def _typed_errors(results: list[Result]) -> list[Result]:
    kinds = {
        (r.question.metadata["dataset"], r.question.id): r.recorded
        for r in results
        if r.recorded is not None
    }
    mcq_only: dict[str, bool] = {}
    for r in results:
        if r.text is not None:
            dataset = r.question.metadata["dataset"]
            keyed = r.recorded is not None and r.recorded.keyed
            mcq_only[dataset] = mcq_only.get(dataset, True) and keyed
    out = []
    for r in results:
        if r.text is None and r.recorded is None:
            dataset = r.question.metadata["dataset"]
            known = kinds.get((dataset, r.question.id))
            if known is not None:
                r = dataclasses.replace(r, recorded=Recorded(known.keyed, None, None))
            elif mcq_only.get(dataset, False):
                r = dataclasses.replace(r, recorded=Recorded(True, None, None))
        out.append(r)
    return out


def damaged_records(folder: Path) -> list[Damaged]:
    """Every task file and batch line under `tasks/` that is not a whole record."""
    store = RunStore(folder)
    damaged: list[Damaged] = []
    for setup_folder in sorted(p for p in (folder / "tasks").glob("*/*") if p.is_dir()):
        for name in sorted(os.listdir(setup_folder)):
            path = setup_folder / name
            if name.startswith(TEMP_PREFIX) or not path.is_file():
                continue
            if name.endswith(".json"):
                value, problem = json_problem(path.read_bytes())
                if problem is None and store.decode(value) is None:
                    problem = 'not a task record (no "format": "lasagna-task/...")'
                if problem is not None:
                    damaged.append((path, problem))
            elif name.startswith(BATCH_PREFIX) and name.endswith(".jsonl"):
                damaged += _damaged_lines(store, path)
    return damaged


def _damaged_lines(store: RunStore, path: Path) -> list[Damaged]:
    data = path.read_bytes()
    found: list[Damaged] = []
    for number, line in enumerate(data.splitlines(), 1):
        value, problem = json_problem(line)
        if problem is None and not (
            isinstance(value, dict) and store.decode(value.get("record")) is not None
        ):
            problem = 'not a {"file", "record"} line'
        if problem is not None:
            found.append((path, f"line {number}: {problem}"))
    if data and not data.endswith(b"\n") and not found:
        found.append((path, "truncated (its last line has no end)"))
    return found
