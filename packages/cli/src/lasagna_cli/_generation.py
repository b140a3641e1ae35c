"""The generation track: answering from passages (or closed-book), and scoring the answer.

Prompt building and scoring are pure functions; only `answer` calls a model. An unanswerable
row is answered correctly by a refusal ("Not mentioned", "I don't know", or nothing at all):
EM and F1 are then 1, as SQuAD v2 scores an empty prediction for a question without an
answer, and the judge sees "Not mentioned" as its reference, so its refusal heuristic agrees.
An answerable row that the model refuses scores EM/F1 against its references like any other
answer, and is counted as a false refusal.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lasagna_judge import LLM, Rubric
    from lasagna_synth import BenchmarkRow

NO_ANSWER = "Not mentioned"
PROMPT_ID = "answer-v1"
MAX_ANSWER_TOKENS = 128

SYSTEM_PROMPT = (
    "You answer questions briefly. Reply with the answer only: a short phrase, no "
    "explanation, no full sentence."
)
RAG_TEMPLATE = (
    "Passages:\n{passages}\n\nQuestion: {question}\n\nAnswer from the passages only. If they "
    f'do not contain the answer, reply exactly "{NO_ANSWER}".'
)
CLOSED_BOOK_TEMPLATE = (
    f'Question: {{question}}\n\nIf you do not know the answer, reply exactly "{NO_ANSWER}".'
)


def prompt_sha256() -> str:
    """Identifies the prompts: recorded with every generated answer."""
    text = "\x1f".join((SYSTEM_PROMPT, RAG_TEMPLATE, CLOSED_BOOK_TEMPLATE))
    return hashlib.sha256(text.encode()).hexdigest()


def build_messages(question: str, passages: Sequence[str] | None) -> list[dict[str, str]]:
    """The chat messages for one question: with numbered passages, or closed-book."""
    if passages is None:
        user = CLOSED_BOOK_TEMPLATE.format(question=question)
    else:
        numbered = "\n\n".join(f"[{i}] {text}" for i, text in enumerate(passages, start=1))
        user = RAG_TEMPLATE.format(
            passages=numbered or "(no passage was retrieved)", question=question
        )
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def refuses(prediction: str) -> bool:
    """A refusal, or no answer at all."""
    from lasagna_metrics import is_refusal

    return not prediction.strip() or is_refusal(prediction)


@dataclass(frozen=True)
class AnswerScore:
    exact_match: float
    f1: float
    refused: bool


def score_answer(prediction: str, row: BenchmarkRow) -> AnswerScore:
    """EM and F1 (SQuAD v2, best over the references), with unanswerable rows handled."""
    from lasagna_metrics import exact_match, f1

    refused = refuses(prediction)
    if row.unanswerable:
        right = 1.0 if refused else 0.0
        return AnswerScore(right, right, refused)
    return AnswerScore(exact_match(prediction, row.answers), f1(prediction, row.answers), refused)


def judge_references(row: BenchmarkRow) -> list[str]:
    """What the judge compares against: the first reference, or "Not mentioned"."""
    return [NO_ANSWER] if row.unanswerable else [row.answers[0]]


def answer_fields(prediction: str, row: BenchmarkRow) -> dict[str, Any]:
    """A task record's answer and its scores, whoever answered (a model or the user's system)."""
    scored = score_answer(prediction, row)
    return {
        "prediction": prediction,
        "references": list(row.answers),
        "unanswerable": row.unanswerable,
        "refused": scored.refused,
        "exact_match": scored.exact_match,
        "f1": scored.f1,
    }


async def judge_grade(
    prediction: str, row: BenchmarkRow, judge: LLM | None, rubric: Rubric | None
) -> dict[str, Any] | None:
    """The judge's grade of the answer, or None without a judge."""
    if judge is None or rubric is None:
        return None
    from lasagna_judge import grade

    found = await grade(
        judge,
        rubric,
        question=row.question,
        references=judge_references(row),
        prediction=prediction,
    )
    return found.to_dict()


async def answer(
    llm: LLM,
    row: BenchmarkRow,
    passages: Sequence[str] | None,
    *,
    judge: LLM | None = None,
    rubric: Rubric | None = None,
) -> dict[str, Any]:
    """Generate, score and (with a judge) grade one answer. A failed call raises."""
    completion = await llm.complete(
        build_messages(row.question, passages), max_tokens=MAX_ANSWER_TOKENS
    )
    prediction = completion.text.strip()
    return {
        "mode": "closed-book" if passages is None else "rag",
        "model": llm.model,
        "prompt_id": PROMPT_ID,
        "prompt_sha256": prompt_sha256(),
        **answer_fields(prediction, row),
        "input_tokens": completion.usage.input_tokens,
        "output_tokens": completion.usage.output_tokens,
        "latency_s": round(completion.latency_s, 6),
        "cached": completion.cached,
        "judge": await judge_grade(prediction, row, judge, rubric),
    }
