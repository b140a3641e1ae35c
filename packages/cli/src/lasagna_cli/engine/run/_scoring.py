"""The one scoring module: every door's answers and rankings are scored by these rules.

Answers (`score_answer`):
- EM and F1 are SQuAD's (lasagna-metrics), the best over the references.
- An unanswerable question is answered right by a refusal ("Not mentioned", "I don't
  know", or nothing at all): EM and F1 are then 1, as SQuAD v2 scores an empty prediction
  for a question without an answer; anything else scores 0. A refusal of an answerable
  question is scored against its references like any answer, and counted as refused.
- A multiple-choice question is scored by the option the answer picks (`extract_choice`):
  correct, incorrect, or none picked.
- The judge sees every reference (any of them is right, as for EM and F1), or
  "Not mentioned" for an unanswerable question, so that its refusal heuristic agrees.

Rankings (`retrieval_metrics`): recall@k, nDCG@10, MRR and hit rate@k against the
question's judgments (trec_eval's definitions), and evidence recall (soft and strict) of
the question's evidence in the top-k passages, counted only in passages of the question's
own documents when it names them (every LoCoMo conversation has a turn "D1:3"). A question
with neither judgments nor evidence is not scored (None), never scored 0.

Over a folder of documents, where the question's evidence is located as character spans
(`Question.spans`) and each passage knows its span (`Corpus.spans`), the top-k passages are
measured by characters instead of by text: span recall, precision and IoU (Chroma's
definitions, `lasagna_metrics.span_metrics`), and evidence recall as the share of evidence
spans the passages cover together (strict: whole; soft: 80% of the characters; whitespace
not counted, since a chunker cutting from word to word leaves the space between two
passages in neither). A substring test would fail every chunking smaller than its
evidence, however well it retrieved.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lasagna_cli.engine._data import Corpus, Question
from lasagna_cli.engine.config._config import JUDGE_MAX_CHARS

if TYPE_CHECKING:
    from lasagna_judge import LLM, Grade, Rubric

NO_ANSWER = "Not mentioned"


def refuses(prediction: str) -> bool:
    """A refusal, or no answer at all."""
    from lasagna_metrics import is_refusal

    return not prediction.strip() or is_refusal(prediction)


@dataclass(frozen=True, slots=True)
class AnswerScore:
    exact_match: float | None
    """None when there is nothing to compare with (free-form, no references) or an MCQ."""
    f1: float | None
    refused: bool
    choice: str | None = None
    """The MCQ option the answer picks (None: none, or not an MCQ)."""
    correct: bool | None = None
    """MCQ: whether the choice is the right option (None: no right option is known)."""


def score_answer(prediction: str, question: Question) -> AnswerScore:
    refused = refuses(prediction)
    if question.options is not None:
        from lasagna_metrics import extract_choice

        choice = extract_choice(prediction, question.options)
        correct = None if question.correct_option is None else choice == question.correct_option
        return AnswerScore(None, None, refused, choice, correct)
    if question.unanswerable:
        right = 1.0 if refused else 0.0
        return AnswerScore(right, right, refused)
    if not question.references:
        return AnswerScore(None, None, refused)
    from lasagna_metrics import exact_match_and_f1

    em, f1 = exact_match_and_f1(prediction, list(question.references))
    return AnswerScore(em, f1, refused)


def judge_references(question: Question) -> list[str]:
    """What the judge compares against: every reference, or "Not mentioned"."""
    return [NO_ANSWER] if question.unanswerable else list(question.references)


def gradable(question: Question) -> bool:
    """Whether a judge can grade an answer to the question (it has something to compare)."""
    return question.options is None and (question.unanswerable or bool(question.references))


def answer_fields(prediction: str, question: Question) -> dict[str, Any]:
    """A task record's answer and its scores, whoever answered (a model or a system)."""
    scored = score_answer(prediction, question)
    fields: dict[str, Any] = {
        "prediction": prediction,
        "references": list(question.references),
        "unanswerable": question.unanswerable,
        "refused": scored.refused,
        "exact_match": scored.exact_match,
        "f1": scored.f1,
    }
    if question.options is not None:
        fields["choice"] = scored.choice
        fields["correct"] = scored.correct
    return fields


async def judge_grade(
    prediction: str,
    question: Question,
    judge: LLM | None,
    rubric: Rubric | None,
    max_chars: int = JUDGE_MAX_CHARS,
) -> dict[str, Any] | None:
    """The judge's grade of the answer; None without a judge or with nothing to grade by.
    Question, references and answer past `max_chars` are not sent: an error grade says
    so (counted, never averaged), as `judge grade --max-chars` refuses such a row."""
    if judge is None or rubric is None or not gradable(question):
        return None
    from lasagna_judge import grade

    unsent = too_long_to_grade(prediction, question, judge, rubric, max_chars)
    if unsent is not None:
        return unsent.to_dict()
    found = await grade(
        judge, rubric, question=question.text, references=judge_references(question),
        prediction=prediction,
    )  # fmt: skip
    return found.to_dict()


def too_long_to_grade(
    prediction: str,
    question: Question,
    judge: LLM,
    rubric: Rubric,
    max_chars: int,
    redo: str = "run again with --resume",
) -> Grade | None:
    """The error grade of an answer whose question, references and answer hold more than
    `max_chars` characters, which is never sent to the judge; None when it fits. `redo`
    says how to grade it once --max-chars is raised."""
    from lasagna_judge import error_grade

    references = judge_references(question)
    size = len(question.text) + len(prediction) + sum(len(r) for r in references)
    if size > max_chars:
        return error_grade(
            judge,
            rubric,
            f"not sent to the judge: {size:,} characters in question, answers and "
            f"answer, over --max-chars {max_chars:,} (about {size // 4:,} tokens); raise "
            f"--max-chars and {redo} to grade it",
        )
    return None


def ranking_metrics(
    judgments: Mapping[str, int], ranking: Sequence[str], k: int
) -> dict[str, float | None]:
    """recall@k, nDCG@10, MRR and hit rate@k of one judged question."""
    from lasagna_metrics import hit_rate_at_k, ndcg_at_k, recall_at_k, reciprocal_rank

    judged = dict(judgments)
    return {
        f"recall@{k}": recall_at_k(ranking, judged, k),
        "ndcg@10": ndcg_at_k(ranking, judged, 10),
        "mrr": reciprocal_rank(ranking, judged),
        f"hit_rate@{k}": hit_rate_at_k(ranking, judged, k),
    }


def evidence_texts(
    question: Question, ranking: Sequence[str], texts: Sequence[str], corpus: Corpus | None, k: int
) -> list[str]:
    """The top-k texts in which the question's evidence counts: those of its own documents
    when it names them, else all of them."""
    own = set(question.documents)
    if not own or corpus is None or not corpus.document_of:
        return list(texts[:k])
    document_of = corpus.document_of
    return [
        text
        for doc_id, text in zip(ranking[:k], texts[:k], strict=False)
        if document_of.get(doc_id) in own
    ]


def retrieval_metrics(
    question: Question,
    ranking: Sequence[str],
    texts: Sequence[str],
    corpus: Corpus | None,
    k: int,
) -> dict[str, float | None] | None:
    """Ranking metrics from the judgments and evidence recall (see the module docstring);
    None when the question has neither."""
    if not question.relevant and not question.evidence and not question.spans:
        return None
    metrics: dict[str, float | None] = {}
    if question.relevant:
        metrics.update(ranking_metrics(question.judgments, ranking, k))
    if question.spans and corpus is not None and corpus.spans:
        metrics.update(span_scores(question, ranking, corpus, k))
    elif question.evidence:
        from lasagna_metrics import evidence_recall

        top = evidence_texts(question, ranking, texts, corpus, k)
        metrics["evidence_recall"] = evidence_recall(top, question.evidence)
        metrics["evidence_recall_strict"] = evidence_recall(
            top, question.evidence, min_soft_match_tokens=sys.maxsize
        )
    return metrics


def retrieved_spans(ranking: Sequence[str], corpus: Corpus) -> list[tuple[str, int, int]]:
    """Where each ranked passage sits in its document (a passage of a chunked folder)."""
    return [corpus.spans[doc_id] for doc_id in ranking if doc_id in corpus.spans]


def span_scores(
    question: Question, ranking: Sequence[str], corpus: Corpus, k: int
) -> dict[str, float | None]:
    """Span recall, precision and IoU, and evidence recall, of the top-k passages against
    the question's evidence spans (see the module docstring)."""
    from lasagna_metrics import span_evidence_recall, span_metrics

    top = retrieved_spans(ranking[:k], corpus)
    evidence = [(span.doc, span.start, span.end) for span in question.spans]
    metrics: dict[str, float | None] = {}
    scores = span_metrics(top, evidence)
    if scores is not None:
        metrics["span_recall"] = scores.recall
        metrics["span_precision"] = scores.precision
        metrics["span_iou"] = scores.iou
    recalled = span_evidence_recall(top, evidence, texts=corpus.document_texts)
    if recalled is not None:
        metrics["evidence_recall"], metrics["evidence_recall_strict"] = recalled
    return metrics


def load_judge_rubric(name: str) -> Rubric:
    """The rubric --rubric names: a name that is neither built in nor a file is a usage
    error, a rubric file that cannot be used is bad content. The one reading of --rubric:
    every command and door takes its rubric from here."""
    from pathlib import Path

    from lasagna_cli.engine._errors import EngineError, EngineUsageError
    from lasagna_judge import JudgeError, load_rubric

    try:
        return load_rubric(name)
    except JudgeError as exc:
        if Path(name).is_file():  # the file is there: what it holds is wrong (bad content)
            raise EngineError(f"--rubric: {exc}") from None
        raise EngineUsageError(f"--rubric: {exc}") from None
