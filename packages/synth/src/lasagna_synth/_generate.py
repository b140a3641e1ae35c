"""The run: for each planned item, one schema-enforced call writes the question and a second
checks it; rows that fail are dropped and counted by reason.

Drop reasons:
    unparseable     a call never produced output matching its schema
    placeholder     the question or answer is empty, a template's filler ("What is the answer
                    to the question", "a") or an echo of the prompt or schema text ("A
                    question and its short reference answer."): never checked
    too-short       the question has too few words to mean anything ("Why?"): never checked
    unsupported     the checker found the reference answer not supported by the passages
    answered        the checker found an "unanswerable" question answered by the passages
    unclear         the checker found the question ambiguous or could not judge it
    duplicate       the same question (normalised) as a row checked earlier in plan order
    near-duplicate  the same words in the same order as a row checked earlier, once
                    auxiliaries and a few prepositions are set aside
    error           a call failed for good (network, server); not cached, so a rerun retries it

The rules are `_question_quality`'s, which `benchmark validate-data` warns with. Duplicates
are found once every item is checked: of the checked questions, the first in plan order is
kept, whatever order the calls finished in, so a seeded run is reproducible byte for byte.
(Their checks are paid for: deciding earlier would make the kept copy depend on timing.)

Calls run concurrently; one failing item never stops the others. Factoid items are sent
first, while the word index the others need is built; rows come back in plan order, whatever
order the calls are sent and finish in.
"""

from __future__ import annotations

import asyncio
import os
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from lasagna_synth._blocking import run_blocking
from lasagna_synth._chunking import DEFAULT_CHUNK_WORDS, Chunker
from lasagna_synth._corpus import Corpus
from lasagna_synth._errors import SynthError
from lasagna_synth._mix import DEFAULT_MIX, QUESTION_TYPES, Mix, QuestionType, ShareLike
from lasagna_synth._plan import Plan, PlanItem, plan
from lasagna_synth._prompts import (
    CHECK_MAX_TOKENS,
    PROMPTS,
    WRITE_MAX_TOKENS,
    check_messages,
    write_messages,
)
from lasagna_synth._question_quality import (
    first_copies,
    is_placeholder,
    is_too_short,
    near_duplicate_key,
    normalize_question,
)
from lasagna_synth._schemas import AnswerCheck, AnsweredQuestion, OpenQuestion, SupportCheck

if TYPE_CHECKING:
    from lasagna_judge import LLM, BatchRequest

DropReason = Literal[
    "unparseable",
    "placeholder",
    "too-short",
    "unsupported",
    "answered",
    "unclear",
    "duplicate",
    "near-duplicate",
    "error",
]
DROP_REASONS: tuple[DropReason, ...] = (
    "unparseable",
    "placeholder",
    "too-short",
    "unsupported",
    "answered",
    "unclear",
    "duplicate",
    "near-duplicate",
    "error",
)
"""Why a written question was dropped, as the summary counts them."""
Row = dict[str, Any]
# Called after each item: (items finished, items in the plan, None if kept or a drop reason)
Progress = Callable[[int, int, DropReason | None], None]


@dataclass
class Synthesis:
    """The rows kept, in plan order, and what was dropped and why."""

    rows: list[Row]
    model: str
    drops: dict[DropReason, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)  # the distinct error messages, first seen first

    @property
    def dropped(self) -> str:
        """What was dropped and why, as "2 unparseable, 1 error" ("none planned" if none)."""
        return ", ".join(f"{n} {why}" for why, n in self.drops.items() if n) or "none planned"

    @property
    def rows_per_type(self) -> dict[QuestionType, int]:
        counts = Counter(row["metadata"]["question_type"] for row in self.rows)
        return {t: counts.get(t, 0) for t in QUESTION_TYPES}


def make_row(item: PlanItem, question: str, answer: str | None, model: str, seed: int) -> Row:
    """The output row of one kept item, keys in the documented order."""
    spec = PROMPTS[item.question_type]
    row: Row = {"id": item.id, "question": question}
    if item.question_type != "unanswerable":
        row["answer"] = answer
    row["contexts"] = [p.text for p in item.passages]
    # Where each passage sits in its document: relevance under any chunking of the corpus.
    spans = [
        {"doc": p.doc_id, "start": p.start, "end": p.end, "sha256": p.doc_sha256}
        for p in item.passages
        if p.start >= 0
    ]
    if spans:
        row["evidence"] = spans
    row["metadata"] = {
        "question_type": item.question_type,
        "source_doc_ids": [p.doc_id for p in item.passages],
        "passage_ids": [p.id for p in item.passages],
        "prompt_id": spec.id,
        "prompt_sha256": spec.sha256,
        "model": model,
        "seed": seed,
        "synthetic": True,
        "unanswerable": item.question_type == "unanswerable",
    }
    return row


_KEEP = {"factoid": "yes", "multihop": "yes", "unanswerable": "no"}
_REFUSE: dict[str, DropReason] = {"yes": "answered", "no": "unsupported", "unclear": "unclear"}


def _write_request(item: PlanItem) -> BatchRequest:
    """The call that writes the item's question (a `BatchRequest`: `--batch` sends it so)."""
    from lasagna_judge import BatchRequest

    messages = write_messages(item.question_type, item.passages, item.use)
    return BatchRequest(messages, PROMPTS[item.question_type].write_schema, WRITE_MAX_TOKENS)


async def _written(
    plan: Plan, item: PlanItem, llm: LLM, index: Awaitable[object] | None
) -> tuple[str, str | None, BatchRequest] | DropReason:
    """The item's question and answer as written, and the call that checks them; or why
    the item is dropped."""
    spec = PROMPTS[item.question_type]
    if item.question_type == "multihop" and index is not None:
        await index  # its partner is chosen with the index built beside the first calls
    written = await llm.structured(
        write_messages(item.question_type, item.passages, item.use),
        spec.write_schema,
        max_tokens=WRITE_MAX_TOKENS,
    )
    value = written.value
    if isinstance(value, AnsweredQuestion):
        question, answer = value.question, value.answer
    elif isinstance(value, OpenQuestion):
        question, answer = value.question, None
    else:
        return "unparseable"
    if is_placeholder(question) or (answer is not None and is_placeholder(answer, "answer")):
        return "placeholder"
    if is_too_short(question):
        return "too-short"
    judged = item.passages
    if item.question_type == "unanswerable":
        if index is not None:
            await index  # the word index, built beside the first calls
        judged = (item.passages[0], *plan.neighbours(item.passages[0], question))
    from lasagna_judge import BatchRequest

    messages = check_messages(item.question_type, judged, question, answer)
    return question, answer, BatchRequest(messages, spec.check_schema, CHECK_MAX_TOKENS)


async def _run_item(
    plan: Plan, item: PlanItem, llm: LLM, index: Awaitable[object] | None = None
) -> tuple[Row | None, DropReason | None]:
    written = await _written(plan, item, llm, index)
    if isinstance(written, str):
        return None, written
    question, answer, request = written
    schema = PROMPTS[item.question_type].check_schema
    checked = await llm.structured(request.messages, schema, max_tokens=CHECK_MAX_TOKENS)
    check = checked.value
    if isinstance(check, SupportCheck):
        verdict = check.supported
    elif isinstance(check, AnswerCheck):
        verdict = check.answered
    else:
        return None, "unparseable"
    if verdict != _KEEP[item.question_type]:
        return None, _REFUSE[verdict]
    return make_row(item, question, answer, llm.model, plan.seed), None


def _copy_of(question: str, seen: tuple[set[str], set[str]]) -> DropReason | None:
    """Why `question` is a copy of one in `seen` (exact normalised texts, near-duplicate
    keys), which it then joins: "duplicate", "near-duplicate", or None."""
    exact, near = normalize_question(question), near_duplicate_key(question)
    found: DropReason | None = (
        "duplicate" if exact in seen[0] else "near-duplicate" if near in seen[1] else None
    )
    seen[0].add(exact)
    seen[1].add(near)
    return found


def _drop_copies(results: list[Row | None], drops: Counter[DropReason]) -> None:
    """Every checked row that repeats an earlier one in plan order made None, and counted:
    a "duplicate" when an earlier row has its normalised text, else a "near-duplicate"."""
    kept = [i for i, row in enumerate(results) if row is not None]
    questions = [str(row["question"]) for row in results if row is not None]
    copies = first_copies(questions, near=True)
    exact: set[str] = set()
    for position, (i, question) in enumerate(zip(kept, questions, strict=True)):
        normalised = normalize_question(question)
        if position in copies:
            results[i] = None
            drops["duplicate" if normalised in exact else "near-duplicate"] += 1
        exact.add(normalised)


Prefill = Callable[[Sequence["BatchRequest"], str], Awaitable[object]]
"""`batch(requests, round)`: answer `requests` into the LLM's cache (`lasagna_judge.run_batch`
with a state file for `round`, "write" or "check")."""


async def _batched(
    plan: Plan, llm: LLM, index: Awaitable[object] | None, batch: Prefill, concurrency: int
) -> None:
    """The writes through the batch, then the checks of what they wrote (read back from
    the cache, or written directly where the batch failed): the run is then cache hits."""
    from lasagna_judge import JudgeError

    if index is not None:
        await index  # multihop partners are chosen with it, and the writes name them
    await batch([_write_request(item) for item in plan.items], "write")
    bound = asyncio.Semaphore(max(1, concurrency))

    async def check(item: PlanItem) -> BatchRequest | None:
        async with bound:
            try:
                written = await _written(plan, item, llm, index)
            except JudgeError:
                return None  # the run below tries it again, and counts it
        return None if isinstance(written, str) else written[2]

    checks = await asyncio.gather(*(check(item) for item in plan.items))
    await batch([c for c in checks if c is not None], "check")


async def generate(
    plan: Plan,
    llm: LLM,
    *,
    concurrency: int = 8,
    on_progress: Progress | None = None,
    batch: Prefill | None = None,
) -> Synthesis:
    """Write and check every item of `plan` with `llm`, `concurrency` items at a time.
    `batch`: first send the writes, then the checks, through it (at a batch API's price)."""
    from lasagna_judge import JudgeError

    index: asyncio.Future[Any] | None = None
    if any(item.needs_index for item in plan.items):
        # The full word index (multihop partners; an unanswerable check's neighbours, which
        # depend on its question) is built between the first calls, a slice at a time,
        # instead of before them; the items that need it go out last.
        index = asyncio.ensure_future(plan._index_soon())
    if batch is not None:
        await _batched(plan, llm, index, batch, concurrency)
    results: list[Row | None] = [None] * len(plan.items)
    drops: Counter[DropReason] = Counter()
    errors: dict[str, None] = {}
    queue: asyncio.Queue[int] = asyncio.Queue()
    # factoid items first, then unanswerable ones (only their checks need the index), then
    # multihop ones (whose writes do)
    first = {"factoid": 0, "unanswerable": 1, "multihop": 2}
    for i in sorted(range(len(plan.items)), key=lambda i: first[plan.items[i].question_type]):
        queue.put_nowait(i)
    done = 0
    # The checked questions so far, for the progress only: which copy of a duplicate is
    # dropped is decided in plan order at the end, but how many are is the same either way.
    seen: tuple[set[str], set[str]] = (set(), set())

    async def worker() -> None:
        nonlocal done
        while True:
            try:
                i = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            try:
                row, reason = await _run_item(plan, plan.items[i], llm, index)
            except JudgeError as exc:  # this item only; not cached, so a rerun retries it
                row, reason = None, "error"
                errors.setdefault(" ".join(str(exc).split()), None)
            results[i] = row
            if reason is not None:
                drops[reason] += 1
            elif row is not None:
                reason = _copy_of(row["question"], seen)
            done += 1
            if on_progress is not None:
                on_progress(done, len(plan.items), reason)

    try:
        await asyncio.gather(*(worker() for _ in range(max(1, min(concurrency, len(plan.items))))))
    finally:
        if index is not None and not index.done():
            index.cancel()
    _drop_copies(results, drops)
    return Synthesis(
        rows=[row for row in results if row is not None],
        model=llm.model,
        drops={reason: drops.get(reason, 0) for reason in DROP_REASONS},
        errors=list(errors),
    )


def synthesize(
    corpus: str | os.PathLike[str] | Corpus,
    *,
    llm: LLM,
    n: int = 100,
    mix: str | Mapping[str, ShareLike] | Mix = DEFAULT_MIX,
    seed: int = 42,
    chunker: Chunker = "fixed",
    chunk_words: int = DEFAULT_CHUNK_WORDS,
    concurrency: int = 8,
    on_progress: Progress | None = None,
    include_license: bool = False,
) -> list[Row]:
    """Plan questions from `corpus`, write and check them with `llm`; return the kept rows
    in plan order. A `SynthError` saying what was dropped and why when none is kept.

    This runs its own event loop, and closes `llm` at the end: its connections belong to
    that loop. Called where a loop is already running (a Jupyter cell), it runs on a thread
    of its own and blocks until done; from async code, `await generate(plan(...), llm)`
    does the same without blocking the loop.
    """
    planned = plan(
        corpus,
        n=n,
        mix=mix,
        seed=seed,
        chunker=chunker,
        chunk_words=chunk_words,
        include_license=include_license,
    )

    async def run() -> Synthesis:
        try:
            return await generate(planned, llm, concurrency=concurrency, on_progress=on_progress)
        finally:
            await llm.aclose()

    result = run_blocking(run, "lasagna-synthesize")
    if not result.rows:
        first_error = f" (first error: {result.errors[0]})" if result.errors else ""
        raise SynthError(
            f"no question was kept: {result.dropped}{first_error}; try another seed or mix, "
            "or a model that follows the instructions"
        )
    return result.rows
