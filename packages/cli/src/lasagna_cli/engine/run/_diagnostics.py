"""Claim-level diagnostics of a generated answer (`--diagnostics`, `diagnostics: true`):
the judge's claims and entailment checks (`lasagna_judge.diagnose`), RAGChecker's metrics.

They run where the grade runs, when the judge's identity carries "diagnostics" (the claims
prompt's id: a new prompt, or turning them on, changes the fingerprint, so a resumed run
regrades without regenerating). The passages checked are those the generator read, read
back from the record the same way on a first run and on a regrade: the ranking's top-k
documents, or the passages a system returned.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from lasagna_cli.engine._data import Corpus, Question
from lasagna_cli.engine.records._store import Record

if TYPE_CHECKING:
    from lasagna_judge import LLM

#: The answer section diagnosed: the one that read passages.
DIAGNOSED_SECTION = "generation"


def diagnostics_on(identity: Mapping[str, Any] | None) -> bool:
    """Whether a judge identity asks for claim diagnostics."""
    return bool(identity and identity.get("diagnostics"))


def claim_calls(passages: int, with_reference: bool = True) -> int:
    """The judge calls one diagnosed answer costs at most: 2 extractions and a check of each
    claim list against the other text and every passage; without a reference, 1 extraction,
    a check against every passage and the answer-relevance call (2 + passages)."""
    return 2 + 2 * (passages + 1) if with_reference else 2 + passages


def passages_read(
    record: Record, section: Mapping[str, Any], corpus: Corpus | None, top_k: int
) -> list[str]:
    """The passages the answer was generated from (the ranking's `top_k` documents of
    `corpus`, the task's): none for a closed-book answer."""
    if section.get("mode") == "closed-book":
        return []
    shown = section.get("passages")
    if isinstance(shown, list):  # a system's own passages
        return [str(p) for p in shown]
    retrieval = record.get("retrieval")
    if corpus is None or not isinstance(retrieval, Mapping):
        return []
    ranking = retrieval.get("ranking") or []
    top = [str(doc) for doc, _ in ranking[:top_k]]
    return [corpus.texts[doc] for doc in top if doc in corpus.texts]


async def diagnose_section(
    section: Mapping[str, Any],
    question: Question,
    passages: Sequence[str],
    judge: LLM | None,
    max_chars: int,
) -> dict[str, Any] | None:
    """The claim diagnosis of one answer; None when it has none (no judge, or a
    multiple-choice answer, which makes no claims). An answer whose largest call would send
    more than `max_chars` (question, answer, reference and the longest passage) is not sent,
    as its grade is not: every metric missing, one error saying why."""
    if judge is None or question.options is not None:
        return None
    from lasagna_judge import Diagnosis, diagnose
    from lasagna_metrics import CLAIM_METRICS

    references: Sequence[str] = () if question.unanswerable else question.references
    prediction = str(section.get("prediction") or "")
    size = len(question.text) + len(prediction) + len(next(iter(references), ""))
    size += max((len(p) for p in passages), default=0)
    if size > max_chars:
        message = (
            f"claims not sent to the judge: {size:,} characters in question, answer, reference "
            f"and passage, over --max-chars {max_chars:,}; raise --max-chars and run again "
            "with --resume to diagnose it"
        )
        unsent = Diagnosis(None, None, None, None, None, None, dict.fromkeys(CLAIM_METRICS))
        return unsent.to_dict() | {"errors": 1, "error_messages": [message], "model": judge.model}
    found = await diagnose(
        judge,
        question=question.text,
        response=prediction,
        references=references,
        passages=passages,
    )
    return found.to_dict()
