"""One task, computed: the same steps for every door.

1. A user's system is asked (`_system_tasks`); its ranking is mapped to the corpus.
2. Otherwise the retriever's ranking (computed for all pending tasks at once by the runner)
   gives the passages: the top-k go to the generator.
3. The generator answers (`_prompts` builds the messages; "rag" with the passages,
   "closed-book" without), and the answer is scored (`_scoring`): EM/F1, refusals, the MCQ
   choice, and the judge's grade when a judge is set.

`run_task` returns the record; it never writes (the driver is the one writer), so it can run
in another process. `grade_task` redoes only the grades of a record whose answers stand.
An executor gets the `Work` items (plain data: the task, and for a regrade the record it
had) and the `TaskWorker` that computes them; a cluster executor ships both, the worker's
context (corpora, models) set up once per worker process.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lasagna_cli.engine._data import Corpus, Dataset, Question
from lasagna_cli.engine._errors import EngineUsageError
from lasagna_cli.engine.config._config import JUDGE_MAX_CHARS
from lasagna_cli.engine.plan._plan import Task, judged_fingerprint
from lasagna_cli.engine.plan._prompts import PROMPT_ID, build_messages, prompt_sha256, system_input
from lasagna_cli.engine.records._records import ANSWER_SECTIONS, new_record
from lasagna_cli.engine.records._store import Record
from lasagna_cli.engine.run._diagnostics import (
    DIAGNOSED_SECTION,
    diagnose_section,
    diagnostics_on,
    passages_read,
)
from lasagna_cli.engine.run._executor import Recipe
from lasagna_cli.engine.run._jury import jury_grade
from lasagna_cli.engine.run._scoring import answer_fields, judge_grade, retrieval_metrics
from lasagna_cli.engine.run._system_tasks import SystemState, ask_system
from lasagna_cli.engine.systems import SystemOutput, SystemOutputError, match_ranking

if TYPE_CHECKING:
    from lasagna_judge import LLM, Completion, Rubric

#: The answer track's cap on a generated answer when the setup sets none.
MAX_ANSWER_TOKENS = 128


@dataclass
class TaskContext:
    """What the tasks of a run share: the datasets (and corpora), models, judge, systems."""

    datasets: Sequence[Dataset]
    generators: dict[tuple[str, str], LLM] = field(default_factory=dict)
    judge: LLM | None = None
    jury: list[LLM] = field(default_factory=list)
    """The other judges of a jury (`_jury`): with them, a grade is the jury's."""
    rubric: Rubric | None = None
    judge_identity: Mapping[str, Any] | None = None
    judge_max_chars: int = JUDGE_MAX_CHARS
    """Question, references and answer past this are not sent to the judge."""
    systems: SystemState | None = None
    databases: Mapping[str, Corpus] = field(default_factory=dict)
    """The corpora setups bring (kag's databases), by name."""

    def corpus(self, task: Task) -> Corpus | None:
        """What the task's setup searches: its database, or its dataset's own corpus."""
        database = task.setup.database
        if database is not None:
            return self.databases[database.name]
        return self.datasets[task.position].corpus_for(task.setup.chunking)


@dataclass(frozen=True, slots=True)
class Work:
    """One item for the executor: the task, and the record to regrade (None: run it). A
    record regraded without its task (the staged pipeline's eval) is graded as it reads."""

    index: int
    task: Task | None
    regrade: Record | None = None


class TaskWorker:
    """Computes `Work` items against one context; called by the executor, once per item.
    `recipe` makes the same worker in another process (a cluster executor's)."""

    def __init__(self, ctx: TaskContext, recipe: Recipe[Work, Record] | None = None) -> None:
        self.ctx = ctx
        self._recipe = recipe

    async def __call__(self, work: Work) -> Record:
        question = work.task.question if work.task is not None else None
        if work.regrade is not None:
            return await grade_task(work.regrade, self.ctx, question, work.task)
        assert work.task is not None
        return await run_task(work.task, self.ctx)

    def recipe(self) -> Recipe[Work, Record]:
        if self._recipe is None:
            raise EngineUsageError("this run's tasks cannot be made in another process")
        return self._recipe


def _answer_section(
    task: Task, completion: Completion, messages: list[dict[str, str]], mode: str, started: float
) -> dict[str, Any]:
    prompt = task.setup.prompt
    prediction = completion.text.strip()
    section: dict[str, Any] = {
        "mode": mode,
        "model": completion.model,
        "prompt_id": PROMPT_ID if prompt.style == "answer" else prompt.style,
        "prompt_sha256": prompt_sha256(prompt),
        "question": task.question.text,
        **answer_fields(prediction, task.question),
        "input_tokens": completion.usage.input_tokens,
        "output_tokens": completion.usage.output_tokens,
        "latency_s": round(completion.latency_s, 6),
        "cached": completion.cached,
        "attempts": completion.attempts,
        "context_length": sum(len(m["content"]) for m in messages),
        "judge": None,
        "seconds": round(time.perf_counter() - started, 6),
    }
    if completion.batch:  # through a batch API: priced at the batch price (`_costs`)
        section["batch"] = True
    if prompt.style == "template":  # kag's result files record the prompt sent
        section["prompt"] = "\n\n".join(m["content"] for m in messages)
    return section


def generation_call(
    task: Task, passages: Sequence[str] | None
) -> tuple[list[dict[str, str]], float | None, int | None]:
    """The generator's call for the task: messages, temperature and max_tokens."""
    generator = task.setup.generator
    assert generator is not None
    max_tokens = generator.max_tokens
    if max_tokens is None and task.setup.prompt.style == "answer":
        max_tokens = MAX_ANSWER_TOKENS
    messages = build_messages(task.setup.prompt, task.question, passages)
    return messages, generator.temperature, max_tokens


def ranked(task: Task, ctx: TaskContext) -> tuple[list[Any], list[str], list[str]]:
    """The task's ranking to its retriever's depth, its passage ids, and their texts."""
    spec = task.setup.retriever
    corpus = ctx.corpus(task)
    assert spec is not None and task.ranking is not None and corpus is not None
    ranking = list(task.ranking[: spec.depth])
    ids = [doc for doc, _ in ranking]
    return ranking, ids, [corpus.texts[doc] for doc in ids]


async def _generate(
    task: Task, llm: LLM, passages: Sequence[str] | None, mode: str
) -> dict[str, Any]:
    generator = task.setup.generator
    assert generator is not None
    started = time.perf_counter()
    messages, temperature, max_tokens = generation_call(task, passages)
    completion = await llm.complete(messages, temperature=temperature, max_tokens=max_tokens)
    section = _answer_section(task, completion, messages, mode, started)
    if generator.endpoint is not None:
        section["endpoint"] = generator.endpoint
    return section


async def run_task(task: Task, ctx: TaskContext) -> Record:
    """Compute one task's record; an exception propagates to the executor (a failure)."""
    record = new_record(task)
    planned = task.planned
    dataset = ctx.datasets[task.position]
    if planned.setup.system is not None:
        await _system_sections(task, dataset, ctx, record)
    else:
        passages: list[str] | None = None
        if planned.needs_retrieval:
            spec = planned.setup.retriever
            corpus = ctx.corpus(task)
            assert spec is not None and corpus is not None
            ranking, ids, texts = ranked(task, ctx)
            passages = texts[: spec.top_k]
            record["retrieval"] = {
                "ranking": [[doc, score] for doc, score in ranking],
                "metrics": retrieval_metrics(task.question, ids, texts, corpus, spec.top_k)
                if "retrieval" in planned.tracks
                else None,
                "seconds": task.retrieval_seconds,
            }
            if corpus.spans:  # where each ranked passage sits in its document
                record["retrieval"]["spans"] = passage_spans(ids, corpus)
            if planned.setup.query_prefix:
                record["retrieval"]["query"] = query_text(task.setup.query_prefix, task.question)
            if task.retrieval_index is not None:
                record["retrieval"]["index"] = dict(task.retrieval_index)
        generator = planned.setup.generator
        llm = ctx.generators.get(generator.key) if generator is not None else None
        if planned.generation_mode is not None:
            assert llm is not None
            mode = planned.generation_mode
            record["generation"] = await _generate(
                task, llm, passages if mode == "rag" else None, mode
            )
        if "closed-book" in planned.tracks:
            assert llm is not None
            record["closed-book"] = await _generate(task, llm, None, "closed-book")
    await _grade_sections(task.question, record, ctx, task)
    return record


def passage_spans(ids: Sequence[str], corpus: Corpus) -> list[list[Any]]:
    """`[document, start, end]` of each ranked passage, in ranking order, as task records
    keep it."""
    return [list(corpus.spans[doc_id]) for doc_id in ids]


def query_text(prefix: str, question: Question) -> str:
    """The retrieval query: the setup's instruction (if any), then the question."""
    prefix = prefix.strip()
    return f"{prefix} {question.text}" if prefix else question.text


async def _system_sections(task: Task, dataset: Dataset, ctx: TaskContext, record: Record) -> None:
    assert ctx.systems is not None
    planned, question = task.planned, task.question
    output = await ask_system(task, dataset, ctx.systems)
    if isinstance(output, str):  # a predictions file left the question out
        record["missing"] = output
        return
    system = ctx.systems.systems[task.setup_name]
    if system.predictions is None:
        record["system"] = {"latency_s": round(output.latency_s, 6)}
    if "retrieval" in planned.tracks:
        record["retrieval"] = _system_ranking(task, dataset, output, ctx.systems)
    if planned.generation_mode == "system":
        if output.answer is None:
            shown = f"{dataset.id_prefix}{question.id}"
            need = (
                f"gave no answer for {shown} (only a ranking); a sweep grades answers"
                if dataset.kind == "kag"
                else f'gave no "answer" for question {shown!r}, which the generation track needs'
            )
            raise SystemOutputError(f"{system.spec.label} {need}")
        prediction = output.answer.strip()
        section: dict[str, Any] = {
            "mode": "system",
            "question": question.text,
            **answer_fields(prediction, question),
            "input_tokens": 0,
            "output_tokens": 0,
            "latency_s": round(output.latency_s, 6),
            "context_length": len(system_input(task.setup.prompt, question)),
            "judge": None,
        }
        if task.setup.prompt.style == "template":  # kag's result files record what was asked
            section["prompt"] = system_input(task.setup.prompt, question)
        if output.retrieved is not None and "retrieval" not in planned.tracks:
            section["passages"] = [item.shown for item in output.retrieved]
        record["generation"] = section


def _system_ranking(
    task: Task, dataset: Dataset, output: SystemOutput, state: SystemState
) -> dict[str, Any]:
    system = state.systems[task.setup_name]
    if output.retrieved is None:
        raise SystemOutputError(
            f'{system.spec.label} gave no ranking ("retrieved") for question {task.item!r}, '
            "which the retrieval track needs"
        )
    matched = match_ranking(output.retrieved, state.matcher(task.position, dataset.corpus))
    depth = len(matched.ids)
    section: dict[str, Any] = {
        # The order is the system's; scores are rank-derived (depth, depth - 1, ...).
        "ranking": [[doc, float(depth - i)] for i, doc in enumerate(matched.ids)],
        "metrics": retrieval_metrics(
            task.question, matched.ids, matched.texts, dataset.corpus, task.setup.top_k
        ),
    }
    if dataset.corpus is not None and dataset.corpus.spans:
        section["spans"] = passage_spans(matched.ids, dataset.corpus)
    if matched.unmatched:
        section["unmatched"] = matched.unmatched
    if matched.duplicates:
        section["duplicates_dropped"] = matched.duplicates
    return section


def section_question(section: Mapping[str, Any], question: Question | None) -> Question:
    """The question an answer section answered: the task's, or as the record keeps it."""
    if question is not None:
        return question
    return Question(
        id="",
        text=str(section.get("question") or ""),
        references=tuple(section.get("references") or ()),
        unanswerable=bool(section.get("unanswerable")),
    )


async def _grade_sections(
    question: Question | None, record: Record, ctx: TaskContext, task: Task | None = None
) -> None:
    for name in ANSWER_SECTIONS:
        section = record.get(name)
        if isinstance(section, dict):
            asked = section_question(section, question)
            if ctx.jury and ctx.judge is not None and ctx.rubric is not None:
                section["judge"] = await jury_grade(
                    str(section["prediction"]),
                    asked,
                    [ctx.judge, *ctx.jury],
                    ctx.rubric,
                    ctx.judge_identity,
                    ctx.judge_max_chars,
                    section.get("judge"),
                )
            else:
                section["judge"] = await judge_grade(
                    str(section["prediction"]), asked, ctx.judge, ctx.rubric, ctx.judge_max_chars
                )
                endpoint = (ctx.judge_identity or {}).get("endpoint")
                if section["judge"] is not None and endpoint is not None:
                    section["judge"]["endpoint"] = endpoint  # whose grade, for a later jury
            if name == DIAGNOSED_SECTION and diagnostics_on(ctx.judge_identity):
                corpus = ctx.corpus(task) if task is not None else None
                top_k = task.setup.top_k if task is not None else 0
                passages = passages_read(record, section, corpus, top_k)
                section["diagnostics"] = await diagnose_section(
                    section, asked, passages, ctx.judge, ctx.judge_max_chars
                )
            else:  # a regrade without them keeps no stale diagnosis
                section.pop("diagnostics", None)


async def grade_task(
    record: Record, ctx: TaskContext, question: Question | None, task: Task | None = None
) -> Record:
    """The record with its answers graded anew by the context's judge (or ungraded without
    one), and the fingerprint that says so; `task` (when known) gives the passages the
    claim diagnostics check."""
    graded = dict(record)
    for name in ANSWER_SECTIONS:
        if isinstance(graded.get(name), dict):
            graded[name] = dict(graded[name])
    await _grade_sections(question, graded, ctx, task)
    graded["fingerprint"] = judged_fingerprint(
        str(graded.get("answer_fingerprint")), ctx.judge_identity if ctx.judge else None
    )
    return graded
