"""Grading answers with an LLM: schema first, then the raw text, never a silent zero.

    rubric = load_rubric("binary")
    g = await grade(llm, rubric, question=q, references=[ref], prediction=answer)
    grades = await grade_batch(llm, rubric, items, concurrency=8, on_progress=None)

A grade's path says what produced its score:
- "schema": the model's output validated against `GradeModel`;
- "json" / "regex": validation failed (or the provider could not enforce a schema) and
  the score was read from the raw text (see `_parse`);
- "refusal-heuristic": the answer and a reference both decline to answer, so the grade
  is the rubric's top score, without a call.
Its status is "ok" with a score, "unparsed" when no score could be read (no score, path
None), or "error" when the call failed after every retry (no score, `error` says why).
Summaries (`_summary`) count unparsed and error grades and never average them in.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from lasagna_judge._errors import JudgeError, LLMCallError
from lasagna_judge._parse import parse_score
from lasagna_judge._rubrics import (
    Prompt,
    Rubric,
    build_prompt,
    check_texts,
    normalize_references,
)
from lasagna_metrics import is_refusal

if TYPE_CHECKING:
    from lasagna_judge._batch import BatchRequest
    from lasagna_judge._llm import LLM
    from lasagna_judge._types import Structured

GradeStatus = Literal["ok", "unparsed", "error"]
GradePath = Literal["schema", "json", "regex", "refusal-heuristic"]
GRADE_STATUSES: tuple[GradeStatus, ...] = ("ok", "unparsed", "error")
GRADE_PATHS: tuple[GradePath, ...] = ("schema", "json", "regex", "refusal-heuristic")


class GradeModel(BaseModel):
    """What a judge is asked to return; reasoning comes first so the score follows it.

    Reasoning is optional: a grammar-constrained small model (llama.cpp) that must write
    free text first can ramble to its token limit, while `{"score": 4}` alone is a grade.
    """

    reasoning: str = Field(default="", description="One or two sentences explaining the judgement.")
    score: int = Field(description="The score, one of the values the instructions allow.")


@dataclass(frozen=True)
class Grade:
    """One graded answer, with everything needed to audit or reproduce it."""

    score: int | None
    status: GradeStatus
    path: GradePath | None
    reasoning: str
    rubric_id: str
    rubric_version: str
    prompt_sha256: str | None  # None for the refusal heuristic: nothing was sent
    model: str
    raw: str
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    cached: bool = False
    error: str | None = None
    batch: bool = False  # answered through a batch API: its tokens at `BATCH_PRICE`

    def to_dict(self) -> dict[str, Any]:
        """The grade fields, JSON-ready, in a fixed order."""
        # asdict() without its deep copy: every field is a str, a number, a bool or None.
        return {name: getattr(self, name) for name in GRADE_FIELDS}


GRADE_FIELDS: tuple[str, ...] = tuple(Grade.__dataclass_fields__)
"""The fields of a `Grade`, in order: the columns `lasagna judge grade` adds to each row."""


@dataclass(frozen=True)
class GradeItem:
    """One answer to grade: its question, one or more references, and the prediction."""

    question: str
    references: str | Sequence[str]
    prediction: str


def _grade_from_refusals(
    llm: LLM, rubric: Rubric, references: Sequence[str], prediction: str
) -> Grade | None:
    if is_refusal(prediction) and any(is_refusal(ref) for ref in references):
        return Grade(
            score=rubric.highest,
            status="ok",
            path="refusal-heuristic",
            reasoning="The answer and a reference both decline to answer.",
            rubric_id=rubric.id,
            rubric_version=rubric.version,
            prompt_sha256=None,
            model=llm.model,
            raw="",
        )
    return None


async def grade(
    llm: LLM,
    rubric: Rubric,
    *,
    question: str,
    references: str | Sequence[str],
    prediction: str,
    max_validation_retries: int = 2,
    max_tokens: int | None = None,
    refusal_heuristic: bool = True,
) -> Grade:
    """Grade one answer. Bad input raises JudgeError; a failed call is an "error" grade.
    `refusal_heuristic=False` asks the judge even where answer and reference both refuse
    (to reproduce a tool whose own refusal rule differs)."""
    refs = normalize_references(references)
    prompt = build_prompt(rubric, question=question, references=refs, prediction=prediction)
    return await _grade_prompt(
        llm, rubric, prompt, refs, prediction, max_validation_retries, max_tokens, refusal_heuristic
    )


async def _grade_prompt(
    llm: LLM,
    rubric: Rubric,
    prompt: Prompt,
    refs: Sequence[str],
    prediction: str,
    max_validation_retries: int,
    max_tokens: int | None,
    refusal_heuristic: bool = True,
) -> Grade:
    heuristic = _grade_from_refusals(llm, rubric, refs, prediction) if refusal_heuristic else None
    if heuristic is not None:
        return heuristic
    reply: Structured[GradeModel] | None = None

    def made(
        *,
        score: int | None,
        status: GradeStatus,
        path: GradePath | None,
        reasoning: str = "",
        error: str | None = None,
        latency_s: float = 0.0,
    ) -> Grade:
        return Grade(
            score=score,
            status=status,
            path=path,
            reasoning=reasoning,
            rubric_id=rubric.id,
            rubric_version=rubric.version,
            prompt_sha256=prompt.sha256,
            model=llm.model,
            raw=reply.raw if reply is not None else "",
            input_tokens=reply.usage.input_tokens if reply is not None else 0,
            output_tokens=reply.usage.output_tokens if reply is not None else 0,
            latency_s=reply.latency_s if reply is not None else latency_s,
            cached=reply.cached if reply is not None else False,
            error=error,
            batch=reply.batch if reply is not None else False,
        )

    started = time.perf_counter()
    try:
        reply = await llm.structured(
            prompt.as_list(),
            GradeModel,
            max_validation_retries=max_validation_retries,
            max_tokens=max_tokens,
        )
    except LLMCallError as exc:
        return made(
            score=None,
            status="error",
            path=None,
            error=str(exc),
            latency_s=time.perf_counter() - started,
        )
    if reply.status == "ok" and reply.value is not None:
        return made(
            score=rubric.coerce(reply.value.score),
            status="ok",
            path="schema",
            reasoning=reply.value.reasoning.strip(),
        )
    parsed = parse_score(reply.raw, rubric)
    if parsed is None:
        return made(score=None, status="unparsed", path=None)
    return made(score=parsed.score, status="ok", path=parsed.path, reasoning=parsed.reasoning)


def _item_fields(item: object, index: int) -> tuple[str, str | Sequence[str], str]:
    fields: list[Any] = []
    for name in ("question", "references", "prediction"):
        if isinstance(item, Mapping):
            if name not in item:
                raise JudgeError(
                    f"item {index}: missing {name!r}; each item needs question, references "
                    "and prediction"
                )
            fields.append(item[name])
        else:
            if not hasattr(item, name):
                raise JudgeError(
                    f"item {index}: {type(item).__name__} has no attribute {name!r}; each "
                    "item needs question, references and prediction"
                )
            fields.append(getattr(item, name))
    return fields[0], fields[1], fields[2]


ProgressCallback = Callable[[int, int], None]
GradeCallback = Callable[[int, Grade], None]


def check_items(items: Sequence[object]) -> list[tuple[str, list[str], str]]:
    """Each item's (question, references, prediction), checked as `grade_batch` checks them
    before its first call: the first bad item raises JudgeError naming it."""
    checked: list[tuple[str, list[str], str]] = []
    for index, item in enumerate(items):
        question, references, prediction = _item_fields(item, index)
        try:
            refs = normalize_references(references)
            check_texts(question, prediction)
        except JudgeError as exc:
            raise JudgeError(f"item {index}: {exc}") from None
        checked.append((question, refs, prediction))
    return checked


async def grade_batch(
    llm: LLM,
    rubric: Rubric,
    items: Sequence[object],
    *,
    concurrency: int = 8,
    on_progress: ProgressCallback | None = None,
    on_grade: GradeCallback | None = None,
    max_validation_retries: int = 2,
    max_tokens: int | None = None,
) -> list[Grade]:
    """Grade many answers; the result is in the order of `items`.

    Items are mappings or objects with `question`, `references` (a string or a list) and
    `prediction`. Every item is checked before the first call, so bad data fails fast
    with a JudgeError naming the item. After that a failing item never stops the others:
    it becomes an "error" grade. `concurrency` bounds the items in flight (the LLM keeps
    its own bound on requests too). As each item finishes, `on_grade(index, grade)` and
    then `on_progress(done, total)` are called.
    """
    if concurrency < 1:
        raise JudgeError(f"concurrency must be at least 1, got {concurrency}")
    # Every item checked now; its prompt is built by the worker that grades it, so that the
    # first calls leave without waiting for every prompt (and their sha256) to be made.
    checked = check_items(items)

    total = len(checked)
    results: list[Grade | None] = [None] * total
    next_index = 0
    done = 0

    async def worker() -> None:
        nonlocal next_index, done
        while next_index < total:
            index = next_index
            next_index += 1
            question, refs, prediction = checked[index]
            try:
                prompt = build_prompt(
                    rubric, question=question, references=refs, prediction=prediction
                )
                result = await _grade_prompt(
                    llm, rubric, prompt, refs, prediction, max_validation_retries, max_tokens
                )
            except Exception as exc:  # isolation: one broken item is recorded, not fatal
                result = error_grade(llm, rubric, f"{type(exc).__name__}: {exc}")
            results[index] = result
            done += 1
            if on_grade is not None:
                on_grade(index, result)
            if on_progress is not None:
                on_progress(done, total)

    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(min(concurrency, total)):
                group.create_task(worker())
                await asyncio.sleep(0)  # the first calls leave as the other workers start
    except ExceptionGroup as group_error:
        # Only a failing callback gets here; raise it as itself.
        raise group_error.exceptions[0] from None
    return [g for g in results if g is not None]


def grade_requests(
    rubric: Rubric,
    items: Sequence[object],
    *,
    max_validation_retries: int = 2,
    max_tokens: int | None = None,
) -> list[BatchRequest]:
    """The judge calls `grade_batch` makes for `items` (none where the refusal heuristic
    grades), as `BatchRequest`s for `run_batch`: the same keys, so the batch's answers are
    the grading's cache hits."""
    from lasagna_judge._batch import BatchRequest

    requests = []
    for question, refs, prediction in check_items(items):
        if is_refusal(prediction) and any(is_refusal(ref) for ref in refs):
            continue
        prompt = build_prompt(rubric, question=question, references=refs, prediction=prediction)
        requests.append(
            BatchRequest(prompt.as_list(), GradeModel, max_tokens, None, max_validation_retries)
        )
    return requests


def error_grade(llm: LLM, rubric: Rubric, message: str) -> Grade:
    """The error grade (`message`, no score) of an answer the judge did not grade."""
    return Grade(
        score=None,
        status="error",
        path=None,
        reasoning="",
        rubric_id=rubric.id,
        rubric_version=rubric.version,
        prompt_sha256=None,
        model=llm.model,
        raw="",
        error=message,
    )
