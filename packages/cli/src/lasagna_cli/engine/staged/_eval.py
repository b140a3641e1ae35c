"""Stage eval: the generated answers graded, as the one runner's grade phase.

F1 is the engine's one rule (SQuAD's, the best over the references; a refusal is right for
an unanswerable question); accuracy is lasagna-judge's grade with the benchmark's rubric
(binary 0/4 for LoCoMo, the 0-4 scale for the others), every reference shown to the judge;
an answer and a reference that both refuse get the top score with no call
("Heuristic_Refusal_Check"). A grade the judge could not give (unparsed, a failed call) is
counted apart, never averaged as 0. Questions with no reference (BEIR) are counted apart.

What is graded is what generated_answers.json says: each question's answer in the file.
Where lasagna's gen record (`gen/<i>.json`) holds that same question and answer, it is
graded from the record; where there is none (a file OpenViking wrote) or the file's answer
differs (edited, or written by another tool), the file's question, gold answers and answer
are graded. Each graded record goes to `eval/<i>.json`, written as it finishes, so an
interrupted stage resumes and answers already graded by this judge are not graded again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from lasagna_cli.engine._counts import counted
from lasagna_cli.engine._data import Question
from lasagna_cli.engine._errors import EngineUsageError
from lasagna_cli.engine.benchmarks import get_benchmark_spec
from lasagna_cli.engine.config._config import ModelSpec
from lasagna_cli.engine.records._records import TASK_FORMAT
from lasagna_cli.engine.records._store import (
    Record,
    read_json,
    read_record,
    write_bytes_atomic,
    write_json_atomic,
)
from lasagna_cli.engine.run._executor import Executor
from lasagna_cli.engine.run._runner import Models, Reporter, grade_records
from lasagna_cli.engine.run._scoring import NO_ANSWER, answer_fields
from lasagna_cli.engine.run._tasks import TaskContext
from lasagna_cli.engine.staged._log import eval_lines
from lasagna_cli.engine.staged._openviking import dataset_spelling
from lasagna_cli.engine.staged._options import (
    EVAL_TASKS_DIR,
    GEN_TASKS_DIR,
    PipelineOptions,
    PipelineStore,
)
from lasagna_cli.engine.staged._report import (
    ACCURACY_KEY,
    DATASET,
    EVALUATED_FILE,
    F1_KEY,
    GENERATED_FILE,
    LASAGNA,
    NORMALIZED_KEY,
    PERFORMANCE,
    QUERY,
    RECALL_KEY,
    REPORT_FILE,
    TOTAL_EVALUATED,
    mean,
    query_efficiency,
    read_items,
    sha256_json,
    update_report,
)
from lasagna_cli.engine.staged._views import REFUSAL_HEURISTIC, evaluated_item
from lasagna_judge import constant_judge

Say = Callable[[str], None]


def _generated(options: PipelineOptions) -> list[dict[str, Any]]:
    out, name = options.out, options.name
    items = read_items(out / GENERATED_FILE)
    if items is None:
        raise EngineUsageError(
            f"eval needs {out / GENERATED_FILE}: run --step gen (with --generator) first, with "
            f"the same -o"
        )
    report = read_json(out / REPORT_FILE)
    lasagna = report.get(LASAGNA) if isinstance(report, dict) else None
    benchmark = lasagna.get("benchmark") if isinstance(lasagna, dict) else None
    if benchmark not in (None, name):
        raise EngineUsageError(
            f"{out / GENERATED_FILE} holds answers for {benchmark!r}, not {name!r}; use another -o"
        )
    unanswered = [i for i in items if (i.get("llm") or {}).get("final_answer") is None]
    if unanswered:
        raise EngineUsageError(
            f"{len(unanswered)} of {len(items)} questions in {out / GENERATED_FILE} have no "
            "generated answer (gen ran without --generator); run --step gen --generator MODEL "
            "first"
        )
    return items


def judge_of(options: PipelineOptions, items: list[dict[str, Any]]) -> str | None:
    """--judge, else the generator (when one model generated every answer)."""
    generators = {(i.get("llm") or {}).get("model") for i in items}
    return options.judge or (next(iter(generators)) if len(generators) == 1 else None)


async def stage_eval(
    options: PipelineOptions,
    *,
    executor: Executor,
    models: Models,
    load_rubric: Callable[[str], Any],
    say: Say,
    reporter: Reporter,
    log: Say = lambda line: None,
) -> int:
    """Run eval; returns how many grades failed (run again to retry them). `log` gets a
    block per question (benchmark.log)."""
    out = options.out
    items = _generated(options)
    judge_model = judge_of(options, items)
    spec = get_benchmark_spec(options.name)
    rubric = load_rubric(options.rubric or spec.rubric) if judge_model is not None else None
    if judge_model is None:
        say("no --judge: accuracy is not graded (F1 and the refusal heuristic only)")
    gen = PipelineStore(out, GEN_TASKS_DIR)
    graded_store = PipelineStore(out, EVAL_TASKS_DIR)
    work = []
    from_file = 0
    for position, item in enumerate(items):
        index = _index_of(item, position)
        record = read_record(gen, gen.at(index))
        if record is None or not _same_answer(record, item):
            record = file_record(item)
            from_file += 1
        work.append(
            (record, graded_store.at(index), read_record(graded_store, graded_store.at(index)))
        )
    if from_file:
        say(
            f"eval: {from_file} of {len(items)} answers graded as {out / GENERATED_FILE} has "
            f"them (no gen record in {out / GEN_TASKS_DIR} with that answer)"
        )
    ctx = TaskContext([])
    judge = None
    if judge_model is not None and rubric is not None:
        judge = ModelSpec(judge_model)
        ctx.judge = models.get(judge, "judge")
        ctx.rubric = rubric
        ctx.judge_identity = {
            "model": judge_model,
            "rubric": rubric.id,
            "rubric_version": rubric.version,
        }
        endpoint = options.endpoint(judge_model)
        if endpoint is not None:  # its server is part of who graded
            ctx.judge_identity["endpoint"] = endpoint
    started = time.perf_counter()
    reporter.start(len(work), "eval: score and judge")
    outcome = await grade_records(
        work, graded_store, executor, ctx, models, judge, on_progress=reporter.advance
    )
    if ctx.judge is not None and rubric is not None:
        asked = await openviking_grades(
            items, work, outcome.records, graded_store, ctx.judge, rubric
        )
        if asked:
            say(f"eval: {asked} answers judged for OpenViking's Accuracy alone ({SPARED})")
    seconds = time.perf_counter() - started
    scale = (rubric.lowest, rubric.highest) if rubric is not None else (0, 4)
    records = [
        evaluated_item(item, outcome.records[i] or work[i][0], scale)
        for i, item in enumerate(items)
    ]
    write_json_atomic(out / EVALUATED_FILE, {"results": records})  # OpenViking's shape
    for line in eval_lines(records):
        log(line)
    # OpenViking's averages are over every record (an ungraded one counts 0); lasagna's,
    # beside them, over the records that have the figure.
    total = len(records) or 1
    f1_mean = sum(r["metrics"]["F1"] for r in records) / total
    recall = sum(r["metrics"].get("Recall") or 0.0 for r in records) / total
    accuracy_all = sum(r["metrics"]["Accuracy"] for r in records) / total
    f1_squad, with_refs = mean(r["metrics"]["F1 (SQuAD)"] for r in records)
    recall_ours, with_evidence = mean(r["metrics"].get("Recall (lasagna)") for r in records)
    accuracy, graded = mean(r["metrics"]["Accuracy (lasagna)"] for r in records)
    statuses: dict[str, int] = {}
    for r in records:
        status = str(r["llm_evaluation"].get("status"))
        statuses[status] = statuses.get(status, 0) + 1
    heuristic = sum(1 for r in records if r["llm_evaluation"]["prompt_used"] == REFUSAL_HEURISTIC)
    judged = sum(
        1
        for i, record in outcome.records.items()
        if i not in outcome.reused and record is not None and _asked(record)
    )
    update_report(
        out,
        {
            DATASET: options.dataset_label or dataset_spelling(options.name),
            TOTAL_EVALUATED: len(records),
            QUERY: query_efficiency(items),
            PERFORMANCE: {
                F1_KEY: f1_mean,
                RECALL_KEY: recall,
                ACCURACY_KEY: accuracy_all,
                NORMALIZED_KEY: accuracy_all / 4,
            },
            LASAGNA: {
                "questions_with_references": with_refs,
                "questions_with_evidence": with_evidence,
                "questions_without_evidence": len(records) - with_evidence,
                "accuracy_graded": graded,
                "average_accuracy_graded": accuracy,
                "average_f1_squad": f1_squad,
                "average_recall_lasagna": recall_ours,
                "grade_statuses": statuses,
                "refusal_heuristic": heuristic,
                "judge": judge_model,
                "rubric": [rubric.id, rubric.version] if rubric is not None else None,
                "rubric_scale": list(scale),
                "accuracy_note": "Average Accuracy is OpenViking's: over every answer, an "
                "ungraded one counted as 0, on its 0-4 whatever the rubric; "
                "average_accuracy_graded is over graded answers only (grade_statuses counts "
                "the others), on the rubric's scale",
                "f1_note": "Average F1 Score is OpenViking's (its normalisation also drops "
                '"and" and commas); average_f1_squad is the official SQuAD F1, the best over '
                "the references, over the questions with references",
                "eval_seconds": seconds,
            },
        },
    )

    warning = constant_judge(
        [
            r["metrics"]["Accuracy (lasagna)"]
            for r in records
            if r["llm_evaluation"].get("status") == "ok"
        ]
    )
    if warning:
        say(f"warning: {warning}")

    def shown(value: float | None) -> str:
        return f"{value:.4f}" if value is not None else "n/a"

    say(
        f"eval: {counted(len(records), 'answer')} ({outcome.finished_before} reused, {judged} "
        "sent to the "
        f"judge) in {seconds:.2f}s; F1 {shown(f1_mean)}, accuracy (0-4) "
        f"{shown(accuracy_all)} ({shown(accuracy)} over {graded} graded), recall "
        f"{shown(recall)}; refusal heuristic {heuristic}; grades {statuses}"
    )
    return statuses.get("error", 0)


SPARED = "lasagna's refusal rule spared the call, OpenViking's does not fire and its run.py asks"


async def openviking_grades(
    items: list[dict[str, Any]],
    work: list[tuple[Record, Any, Record | None]],
    records: dict[int, Record | None],
    store: PipelineStore,
    judge: Any,
    rubric: Any,
) -> int:
    """run.py asks its judge about every answer, then its own refusal rule overrides the
    grade. Where lasagna's rule gave the top score without a call and OpenViking's does not
    fire, the judge is asked (no heuristic), so "Accuracy" is what run.py would record; the
    grade is kept in the eval record (`judge_openviking`), so a rerun asks again only for a
    new answer. Returns how many were asked."""
    import asyncio

    from lasagna_judge import grade
    from lasagna_metrics import openviking_refusal

    def needs(i: int) -> bool:
        section = (records.get(i) or {}).get("generation") or {}
        own = section.get("judge") or {}
        if own.get("path") != "refusal-heuristic" or "judge_openviking" in section:
            return False
        answer = str((items[i].get("llm") or {}).get("final_answer") or "")
        golds = [str(g) for g in items[i].get("gold_answers") or ()]
        return not (openviking_refusal(answer) and any(openviking_refusal(g) for g in golds))

    async def ask(i: int) -> None:
        item, record = items[i], records[i]
        assert record is not None
        found = await grade(
            judge,
            rubric,
            question=str(item.get("question", "")),
            references=[str(g) for g in item.get("gold_answers") or ()] or [NO_ANSWER],
            prediction=str((item.get("llm") or {}).get("final_answer") or ""),
            refusal_heuristic=False,
        )
        record["generation"]["judge_openviking"] = found.to_dict()
        write_bytes_atomic(work[i][1], store.encode(record))

    wanted = [i for i in range(len(items)) if needs(i)]
    await asyncio.gather(*(ask(i) for i in wanted))
    return len(wanted)


def _asked(record: dict[str, Any]) -> bool:
    """Whether grading the record asked the judge (not the refusal heuristic, not ungradable)."""
    grade = (record.get("generation") or {}).get("judge")
    return isinstance(grade, dict) and grade.get("path") != "refusal-heuristic"


def _index_of(item: dict[str, Any], position: int) -> int:
    value = item.get("_global_index", position)
    return value if isinstance(value, int) and not isinstance(value, bool) else position


def _same_answer(record: Record, item: dict[str, Any]) -> bool:
    """Whether lasagna's gen record answered this item's question as the file says."""
    section = record.get("generation")
    if record.get("error") is not None or not isinstance(section, dict):
        return False
    return section.get("prediction") == (item.get("llm") or {}).get("final_answer") and section.get(
        "question"
    ) == item.get("question")


def file_question(item: dict[str, Any]) -> Question:
    """The question as generated_answers.json states it ("Not mentioned" alone: a refusal
    is the right answer, as the adapters' questions read it)."""
    golds = tuple(str(g) for g in item.get("gold_answers") or ())
    references = tuple(g for g in golds if g != NO_ANSWER)
    return Question(
        id=str(item.get("question_id") or item.get("_global_index", "")),
        text=str(item.get("question") or ""),
        references=references,
        unanswerable=not references and bool(golds),
    )


def file_record(item: dict[str, Any]) -> Record:
    """An answer record built from the file's item alone, for the grade phase; its
    fingerprint is the question, gold answers and answer, so a changed answer is regraded."""
    question = file_question(item)
    prediction = str((item.get("llm") or {}).get("final_answer") or "")
    fingerprint = {"from": GENERATED_FILE, "question": question.text,
                   "gold_answers": item.get("gold_answers"), "answer": prediction}  # fmt: skip
    return {
        "format": TASK_FORMAT,
        "answer_fingerprint": sha256_json(fingerprint),
        "error": None,
        "generation": {
            "mode": "rag",
            "model": (item.get("llm") or {}).get("model"),
            "question": question.text,
            **answer_fields(prediction, question),
            "judge": None,
        },
    }
