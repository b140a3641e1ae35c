"""kag's `stats` over a run folder of `benchmark run` or the staged pipeline: the answers
in its task records, as the stats of a sweep's result files.

Every answered task is a result of its setup (closed-book answers of a setup that also
answers from passages are the setup `<setup>:closed-book`); its question is as the record
keeps it (text, references, unanswerable), so EM/F1 and judge grades follow the same rules
as everywhere. A question some setup answered and another did not is that one's "skipped".
"""

from __future__ import annotations

from pathlib import Path

from lasagna_cli.engine._data import Question
from lasagna_cli.engine._records import ANSWER_SECTIONS
from lasagna_cli.engine._store import RunStore, iter_records
from lasagna_cli.engine.kag._datasets import Datasets
from lasagna_cli.engine.kag._stats import Result


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
            stats = {
                "generation_time_s": section.get("latency_s"),
                "context_length": section.get("context_length"),
                "retrieval_time_s": (record.get("retrieval") or {}).get("seconds"),
            }
            results.append(Result(question, label, path, text, error, stats))
    return datasets, results
