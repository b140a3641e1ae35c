"""Claim-level diagnosis of one answer, as RAGChecker diagnoses it (arXiv 2408.08067).

    d = await diagnose(llm, question=q, response=answer, references=[ref], passages=texts)
    d.metrics["hallucination"], d.unparsed, d.to_dict()

The judge extracts the claims of the response and of the reference answer, then checks
each list of claims against one premise (the reference, the response, each passage) in one
call that returns one label per claim. Every call is schema-enforced like a grade
(`_grading`): a failed call is an "error", a reply that does not validate (or labels a
different number of claims) is "unparsed", and either leaves its labels None, so the
metrics that need them are None: counted apart, never read as false. `CLAIMS_PROMPT`
names the prompts' version; it enters a run's fingerprint, so a new version regrades.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from lasagna_judge._errors import LLMCallError
from lasagna_metrics import claim_metrics

if TYPE_CHECKING:
    from lasagna_judge._llm import LLM

CLAIMS_PROMPT = "claims-v2"
"""The version of the extraction, checking and relevance prompts; change it when they
change (v2: answer relevance for answers without a reference)."""

#: Output caps when the caller sets none: a schema-constrained small model can list claims
#: (or labels) until its context ends; a reply cut short does not validate, so it is
#: "unparsed", counted, never a silent result.
EXTRACT_MAX_TOKENS = 1024
CHECK_TOKENS_PER_CLAIM = 16
MAX_CLAIMS = 64
"""The most claims of one text kept (the rest dropped, counted in `claims_cut`): a judge
that returns 10,000 claims would ask each check for 160,000 output tokens."""
MAX_CLAIM_CHARS = 500
"""The most characters of one claim kept (a longer one is cut, counted in `claims_cut`): a
judge that returns 60 claims of a megabyte each would send them in every check."""
#: The most output tokens a check asks for, whatever the number of claims it is given.
CHECK_MAX_TOKENS = CHECK_TOKENS_PER_CLAIM * MAX_CLAIMS + 64

CallStatus = Literal["ok", "unparsed", "error"]
Label = Literal["entailment", "neutral", "contradiction"]

_EXTRACT = (
    "Break the text below into claims: short, self-contained statements of fact that "
    "together say everything the text says about the question. Resolve pronouns, leave out "
    "opinions and filler, and give no claim twice. A text that states no fact (a refusal) "
    "has no claims.\n\nQuestion: {question}\n\nText:\n{text}"
)
_CHECK = (
    'For each numbered claim, say whether the premise supports it: "entailment" (the '
    'premise states or implies it), "contradiction" (the premise says otherwise) or '
    '"neutral" (the premise does not say). Judge from the premise alone, not from what '
    "you know. Give exactly one label per claim, in the claims' order.\n\n"
    "Question: {question}\n\nPremise:\n{premise}\n\nClaims:\n{claims}"
)

_RELEVANCE = (
    'Does the answer below address the question? Say "relevant" (it answers what was '
    'asked), "partial" (it answers part of it, or something close to it), "irrelevant" (it '
    'answers something else) or "noncommittal" (it evades or declines, such as "I don\'t '
    'know"). Judge whether it addresses the question, not whether it is true.'
    "\n\nQuestion: {question}\n\nAnswer:\n{answer}"
)
Relevance = Literal["relevant", "partial", "irrelevant", "noncommittal"]
#: A relevance label's score: RAGAS's answer relevance is 0 for a noncommittal answer.
RELEVANCE_SCORES: dict[str, float] = {
    "relevant": 1.0,
    "partial": 0.5,
    "irrelevant": 0.0,
    "noncommittal": 0.0,
}
RELEVANCE_MAX_TOKENS = 32


class RelevanceModel(BaseModel):
    """What a relevance call returns: one label."""

    relevance: Relevance = Field(description="How far the answer addresses the question.")


class ClaimsModel(BaseModel):
    """What an extraction call returns: the text's claims."""

    claims: list[str] = Field(description="The claims, one short statement each.")


class LabelsModel(BaseModel):
    """What a checking call returns: one label per claim, in the claims' order."""

    labels: list[Label] = Field(description="One label per claim, in order.")


@dataclass(frozen=True)
class ClaimCall:
    """One judge call's outcome: its status, what it returned (None unless "ok"), its tokens;
    `called` is False when nothing needed asking (no claims to check)."""

    status: CallStatus
    value: list[Any] | None
    input_tokens: int = 0
    output_tokens: int = 0
    error: str | None = None
    called: bool = True
    cut: int = 0
    """Claims dropped past `MAX_CLAIMS` or cut to `MAX_CLAIM_CHARS` (extraction only)."""


async def _call(
    llm: LLM,
    prompt: str,
    model: type[ClaimsModel] | type[LabelsModel] | type[RelevanceModel],
    max_validation_retries: int,
    max_tokens: int | None,
) -> tuple[CallStatus, BaseModel | None, int, int, str | None]:
    try:
        reply = await llm.structured(
            [{"role": "user", "content": prompt}],
            model,
            max_validation_retries=max_validation_retries,
            max_tokens=max_tokens,
        )
    except LLMCallError as exc:
        return "error", None, 0, 0, str(exc)
    tokens = reply.usage.input_tokens, reply.usage.output_tokens
    if reply.status == "ok" and reply.value is not None:
        return "ok", reply.value, *tokens, None
    return "unparsed", None, *tokens, None


async def extract_claims(
    llm: LLM,
    *,
    question: str,
    text: str,
    max_validation_retries: int = 2,
    max_tokens: int | None = None,
) -> ClaimCall:
    """The claims `text` makes about `question`, in one schema-enforced call (at most
    `max_tokens` out, `EXTRACT_MAX_TOKENS` when None); blank claims are dropped, the first
    `MAX_CLAIMS` kept, each cut to `MAX_CLAIM_CHARS` (`cut` counts both). An "unparsed" or
    "error" call has `value` None."""
    prompt = _EXTRACT.format(question=question.strip(), text=text.strip())
    cap = max_tokens if max_tokens is not None else EXTRACT_MAX_TOKENS
    status, value, tin, tout, error = await _call(
        llm, prompt, ClaimsModel, max_validation_retries, cap
    )
    claims = None
    cut = 0
    if isinstance(value, ClaimsModel):
        found = [c.strip() for c in value.claims if c.strip()]
        claims = [c[:MAX_CLAIM_CHARS].rstrip() for c in found[:MAX_CLAIMS]]
        cut = len(found) - len(claims) + sum(len(c) > MAX_CLAIM_CHARS for c in found[:MAX_CLAIMS])
    return ClaimCall(status, claims, tin, tout, error, cut=cut)


async def check_claims(
    llm: LLM,
    claims: Sequence[str],
    *,
    premise: str,
    question: str = "",
    max_validation_retries: int = 2,
    max_tokens: int | None = None,
) -> ClaimCall:
    """One label per claim ("entailment", "neutral", "contradiction") against `premise`, in
    ONE call; no claims need no call. A reply with a different number of labels than claims
    is "unparsed": every label None (a misaligned list cannot say which claim is which).
    At most `max_tokens` out (None: `CHECK_TOKENS_PER_CLAIM` per claim, and 64, at most
    `CHECK_MAX_TOKENS`)."""
    if not claims:
        return ClaimCall("ok", [], called=False)
    numbered = "\n".join(f"{i}. {c}" for i, c in enumerate(claims, 1))
    prompt = _CHECK.format(question=question.strip(), premise=premise.strip(), claims=numbered)
    cap = max_tokens if max_tokens is not None else CHECK_TOKENS_PER_CLAIM * len(claims) + 64
    cap = min(cap, CHECK_MAX_TOKENS)
    status, value, tin, tout, error = await _call(
        llm, prompt, LabelsModel, max_validation_retries, cap
    )
    if isinstance(value, LabelsModel) and len(value.labels) == len(claims):
        return ClaimCall("ok", list(value.labels), tin, tout)
    if status == "ok":
        status = "unparsed"
    return ClaimCall(status, [None] * len(claims), tin, tout, error)


async def judge_relevance(
    llm: LLM, *, question: str, response: str, max_validation_retries: int = 2
) -> ClaimCall:
    """How far `response` addresses `question` (`RELEVANCE_SCORES`' labels), in one
    schema-enforced call; `value` is [label], None unless "ok"."""
    prompt = _RELEVANCE.format(question=question.strip(), answer=response.strip())
    status, value, tin, tout, error = await _call(
        llm, prompt, RelevanceModel, max_validation_retries, RELEVANCE_MAX_TOKENS
    )
    label = [value.relevance] if isinstance(value, RelevanceModel) else None
    return ClaimCall(status, label, tin, tout, error)


@dataclass(frozen=True)
class Diagnosis:
    """The claims of one answer, the four label sets RAGChecker reads, and its metrics.

    A label set is None when it could not be made (no reference, no passages, or its claims
    were not extracted); a label inside it is None when its check was unparsed or failed.
    `retrieved2*[i][j]` is claim i checked against passage j."""

    response_claims: list[str] | None
    reference_claims: list[str] | None
    answer2response: list[str | None] | None
    response2answer: list[str | None] | None
    retrieved2answer: list[list[str | None]] | None
    retrieved2response: list[list[str | None]] | None
    metrics: dict[str, float | None]
    relevance: str | None = None
    """The judge's answer-relevance label (answers without a reference only), or None."""
    calls: int = 0
    unparsed: int = 0
    errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    prompt_id: str = CLAIMS_PROMPT
    model: str = ""
    error_messages: list[str] = field(default_factory=list)
    claims_cut: int = 0
    """Claims of the response and the reference past `MAX_CLAIMS` (dropped) or
    `MAX_CLAIM_CHARS` (cut short): counted, never dropped without a word."""

    def to_dict(self) -> dict[str, Any]:
        """The diagnosis, JSON-ready (a record's `diagnostics` field)."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def _columns(calls: Sequence[ClaimCall], claims: int) -> list[list[str | None]]:
    """Per-passage label lists turned into one row per claim (RAGChecker's layout)."""
    return [[call.value[i] if call.value else None for call in calls] for i in range(claims)]


async def diagnose(
    llm: LLM,
    *,
    question: str,
    response: str,
    references: Sequence[str],
    passages: Sequence[str],
    max_validation_retries: int = 2,
    max_tokens: int | None = None,
) -> Diagnosis:
    """Diagnose one answer: extract the response's claims and the first reference's, check
    them against each other and against every passage, all calls of a phase at once, and
    compute `claim_metrics`. Without references only the response claims are checked, against
    the passages: faithfulness, and the judge labels the answer's relevance to the question
    (`answer_relevance`; RAGAS-style metrics for data without gold answers). Costs
    2 + 2 * (passages + 1) calls with a reference, 2 + passages without (fewer when a text
    has no claims)."""
    opts: dict[str, Any] = {
        "max_validation_retries": max_validation_retries,
        "max_tokens": max_tokens,
    }
    reference = next((r for r in references if r.strip()), None)
    texts = [response] + ([reference] if reference is not None else [])
    relevance, *extracted = await asyncio.gather(
        judge_relevance(llm, question=question, response=response)
        if reference is None
        else _uncalled(),
        *(extract_claims(llm, question=question, text=t, **opts) for t in texts),
    )
    done: list[ClaimCall] = [relevance, *extracted]
    response_claims = extracted[0].value
    reference_claims = extracted[1].value if reference is not None else None

    async def against(claims: list[str] | None, premises: Sequence[str]) -> list[ClaimCall] | None:
        if claims is None or not premises:
            return None
        found = await asyncio.gather(
            *(check_claims(llm, claims, premise=p, question=question, **opts) for p in premises)
        )
        done.extend(found)
        return list(found)

    has_ref = reference is not None
    a2r, r2a, ret2r, ret2a = await asyncio.gather(
        against(response_claims, [reference] if reference is not None else []),
        against(reference_claims, [response] if has_ref else []),
        against(response_claims, passages),
        against(reference_claims, passages if has_ref else []),
    )
    sets: dict[str, Any] = {
        "answer2response": a2r[0].value if a2r else None,
        "response2answer": r2a[0].value if r2a else None,
        "retrieved2response": _columns(ret2r, len(response_claims or ())) if ret2r else None,
        "retrieved2answer": _columns(ret2a, len(reference_claims or ())) if ret2a else None,
    }
    metrics = claim_metrics(**sets)
    label = relevance.value[0] if relevance.value else None
    if reference is None:
        metrics["answer_relevance"] = RELEVANCE_SCORES[label] if label is not None else None
    return Diagnosis(
        response_claims=response_claims,
        reference_claims=reference_claims,
        metrics=metrics,
        relevance=label,
        calls=sum(c.called for c in done),
        unparsed=sum(c.status == "unparsed" for c in done),
        errors=sum(c.status == "error" for c in done),
        input_tokens=sum(c.input_tokens for c in done),
        output_tokens=sum(c.output_tokens for c in done),
        model=llm.model,
        error_messages=[c.error for c in done if c.error],
        claims_cut=sum(c.cut for c in extracted),
        **sets,
    )


async def _uncalled() -> ClaimCall:
    return ClaimCall("ok", None, called=False)
