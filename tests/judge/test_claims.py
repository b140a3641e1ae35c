"""Claim-level diagnosis at the wire: the fake server, scripted with claims and verdicts, is
the oracle. Every metric equals the value worked out by hand below, `claim_metrics` on the
same labels, and RAGChecker 0.1.9's own functions on them (pinned below, as
tests/metrics/test_claims.py pins its cases); an unparsed or failed check is counted apart
and leaves its metrics None, never false."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest

from lasagna_judge import (
    CLAIMS_PROMPT,
    LLM,
    MAX_CLAIM_CHARS,
    MAX_CLAIMS,
    Diagnosis,
    check_claims,
    diagnose,
    extract_claims,
    make_llm,
)
from lasagna_judge._claims import CHECK_MAX_TOKENS
from lasagna_judge.testing import FakeLLMServer, Fault
from lasagna_metrics import CLAIM_METRICS, claim_metrics

QUESTION = "Where is the pasta from?"
RESPONSE, REFERENCE = "RESPONSE TEXT", "REFERENCE TEXT"
PASSAGES = ["PASSAGE ONE", "PASSAGE TWO", "PASSAGE THREE"]
CLAIMS = {RESPONSE: ["r1", "r2", "r3", "r4", "r5"], REFERENCE: ["g1", "g2"]}
E, N, C = "entailment", "neutral", "contradiction"
# What each premise says of each claim (unlisted: neutral).
VERDICTS: dict[str, dict[str, str]] = {
    REFERENCE: {"r1": E, "r3": C, "r4": E},  # answer2response
    RESPONSE: {"g1": E},  # response2answer
    "PASSAGE ONE": {"g1": E, "r1": E},
    "PASSAGE TWO": {"g2": E, "r3": E},
    "PASSAGE THREE": {"r2": E},  # relevant to no reference claim: noise
}
# By hand, from RAGChecker's definitions (r = response claims, g = reference claims):
HAND = {
    "precision": 2 / 5,  # r1, r4 entailed by the reference
    "recall": 1 / 2,  # g1 in the response
    "f1": 2 * (2 / 5) * (1 / 2) / (2 / 5 + 1 / 2),
    "claim_recall": 1.0,  # g1 and g2 each in some passage
    "context_precision": 2 / 3,  # passages one and two hold a reference claim
    "context_utilization": 1 / 2,  # of g1, g2 retrieved, only g1 is in the response
    "noise_sensitivity_in_relevant": 1 / 5,  # r3: wrong, from relevant passage two
    "noise_sensitivity_in_irrelevant": 1 / 5,  # r2: wrong, from passage three only
    "hallucination": 1 / 5,  # r5: in no passage, and wrong
    "self_knowledge": 1 / 5,  # r4: in no passage, and right
    "faithfulness": 3 / 5,  # r1, r2, r3 in some passage
}

# RAGChecker 0.1.9's own metric functions (ragchecker.computation, run as
# tests/metrics/data/make_ragchecker_cases.py runs them) on the labels this script produces
# (RAGCHECKER_LABELS, in its spelling "Entailment", ...):
RAGCHECKER_LABELS = {
    "answer2response": [E, N, C, E, N],
    "response2answer": [E, N],
    "retrieved2answer": [[E, N, N], [N, E, N]],
    "retrieved2response": [[E, N, N], [N, N, E], [N, E, N], [N, N, N], [N, N, N]],
}
RAGCHECKER = {
    "precision": 0.4,
    "recall": 0.5,
    "f1": 0.4444444444444445,
    "claim_recall": 1.0,
    "context_precision": 0.6666666666666666,
    "context_utilization": 0.5,
    "noise_sensitivity_in_relevant": 0.2,
    "noise_sensitivity_in_irrelevant": 0.2,
    "hallucination": 0.2,
    "self_knowledge": 0.2,
    "faithfulness": 0.6,
}


def _section(prompt: str, name: str) -> str:
    found = re.search(rf"{name}:\n(.*?)(?:\n\n|$)", prompt, re.S)
    assert found, prompt
    return found.group(1)


def scripted(overrides: dict[str, Any] | None = None) -> Any:
    """The fake judge: claims for an extraction, labels for a check; `overrides` maps a
    premise (or "extract " + a text) to the reply to give instead."""

    def reply(request: dict[str, Any]) -> Any:
        prompt = str(request["messages"][-1]["content"])
        if str(request["messages"][0]["content"]).startswith("Does the answer below address"):
            return (overrides or {}).get("relevance", json.dumps({"relevance": "relevant"}))
        if prompt.startswith("Break the text"):
            text = _section(prompt, "Text")
            if overrides and f"extract {text}" in overrides:
                return overrides[f"extract {text}"]
            return json.dumps({"claims": CLAIMS[text]})
        premise = _section(prompt, "Premise")
        if overrides and premise in overrides:
            return overrides[premise]
        claims = [line.split(". ", 1)[1] for line in _section(prompt, "Claims").splitlines()]
        return json.dumps({"labels": [VERDICTS[premise].get(c, N) for c in claims]})

    return reply


def make(server: FakeLLMServer) -> LLM:
    return make_llm(
        "openai/fake", base_url=server.base_url, api_key="test", cache=False, max_retries=0
    )


def run_diagnose(server: FakeLLMServer, **kwargs: Any) -> Diagnosis:
    async def go() -> Diagnosis:
        llm = make(server)
        try:
            fields: dict[str, Any] = {
                "question": QUESTION,
                "response": RESPONSE,
                "references": [REFERENCE],
                "passages": PASSAGES,
                "max_validation_retries": 0,
            }
            fields.update(kwargs)
            return await diagnose(llm, **fields)
        finally:
            await llm.aclose()

    return asyncio.run(go())


def test_every_metric_equals_the_hand_computed_value_and_claim_metrics() -> None:
    with FakeLLMServer(scripted()) as server:
        found = run_diagnose(server)
        assert server.calls == 2 + 2 * (len(PASSAGES) + 1) == found.calls
    assert found.response_claims == CLAIMS[RESPONSE]
    assert found.reference_claims == CLAIMS[REFERENCE]
    labels = {name: getattr(found, name) for name in RAGCHECKER_LABELS}
    assert labels == RAGCHECKER_LABELS
    assert (found.unparsed, found.errors) == (0, 0)
    assert found.input_tokens > 0 and found.output_tokens > 0
    same = claim_metrics(
        answer2response=found.answer2response,
        response2answer=found.response2answer,
        retrieved2answer=found.retrieved2answer,
        retrieved2response=found.retrieved2response,
    )
    assert list(found.metrics) == list(CLAIM_METRICS)
    for name in CLAIM_METRICS:
        assert found.metrics[name] == pytest.approx(HAND[name]), name
        assert found.metrics[name] == same[name], name
        assert found.metrics[name] == pytest.approx(RAGCHECKER[name], abs=1e-12), name
    row = found.to_dict()
    assert row["prompt_id"] == CLAIMS_PROMPT and json.loads(json.dumps(row)) == row


def test_a_wrong_number_of_labels_is_unparsed_and_never_false() -> None:
    # The reference labels two of the five response claims: which two cannot be known.
    bad = json.dumps({"labels": [E, E]})
    with FakeLLMServer(scripted({REFERENCE: bad})) as server:
        found = run_diagnose(server)
    assert found.answer2response == [None] * 5
    assert (found.unparsed, found.errors) == (1, 0)
    needs_a2r = {"precision", "f1", "noise_sensitivity_in_relevant", "hallucination"}
    for name in needs_a2r | {"noise_sensitivity_in_irrelevant", "self_knowledge"}:
        assert found.metrics[name] is None, name
    for name in ("recall", "claim_recall", "context_precision", "faithfulness"):
        assert found.metrics[name] == pytest.approx(HAND[name]), name


def test_a_label_outside_the_schema_and_a_failed_call_are_counted_apart() -> None:
    not_a_label = json.dumps({"labels": ["yes", "no", "yes", "no", "yes"]})
    replies = {"PASSAGE TWO": not_a_label, "PASSAGE THREE": Fault(status=500)}
    with FakeLLMServer(scripted(replies)) as server:
        found = run_diagnose(server)
    # Passages two and three are each checked twice: for r and for g claims.
    assert (found.unparsed, found.errors) == (2, 2)
    assert found.error_messages and found.retrieved2response is not None
    assert [row[1:] for row in found.retrieved2response] == [[None, None]] * 5
    assert found.metrics["faithfulness"] is None and found.metrics["claim_recall"] is None
    assert found.metrics["precision"] == pytest.approx(HAND["precision"])


def test_claims_that_cannot_be_extracted_leave_their_label_sets_out() -> None:
    with FakeLLMServer(scripted({f"extract {RESPONSE}": "no JSON here"})) as server:
        found = run_diagnose(server)
        assert server.calls == 2 + 1 + len(PASSAGES)  # only the reference claims are checked
    assert found.response_claims is None and found.answer2response is None
    assert found.unparsed == 1
    assert found.metrics["recall"] == pytest.approx(HAND["recall"])
    assert found.metrics["precision"] is None and found.metrics["faithfulness"] is None


def test_without_a_reference_faithfulness_and_answer_relevance() -> None:
    with FakeLLMServer(scripted()) as server:
        found = run_diagnose(server, references=[])
        assert server.calls == 2 + len(PASSAGES)  # the relevance call beside the claims'
    assert found.reference_claims is None
    assert found.metrics["faithfulness"] == pytest.approx(HAND["faithfulness"])
    assert found.relevance == "relevant" and found.metrics["answer_relevance"] == 1.0
    given = {n for n, v in found.metrics.items() if v is not None}
    assert given == {"faithfulness", "answer_relevance"}


@pytest.mark.parametrize(
    ("label", "score"),
    [("relevant", 1.0), ("partial", 0.5), ("irrelevant", 0.0), ("noncommittal", 0.0)],
)
def test_answer_relevance_is_the_judges_label_scored(label: str, score: float) -> None:
    reply = json.dumps({"relevance": label})
    with FakeLLMServer(scripted({"relevance": reply})) as server:
        found = run_diagnose(server, references=[])
    assert found.relevance == label and found.metrics["answer_relevance"] == score


def test_an_unparsed_relevance_is_missing_and_counted() -> None:
    with FakeLLMServer(scripted({"relevance": "maybe?"})) as server:
        found = run_diagnose(server, references=[])
    assert found.relevance is None and found.metrics["answer_relevance"] is None
    assert found.unparsed == 1


def test_with_a_reference_no_relevance_call() -> None:
    with FakeLLMServer(scripted()) as server:
        found = run_diagnose(server)
        asked = [r["messages"][-1]["content"] for r in server.requests]
    assert not any(a.startswith("Does the answer") for a in asked)
    assert "answer_relevance" not in found.metrics and found.relevance is None


def test_one_call_checks_every_claim_and_no_claims_need_no_call() -> None:
    async def go(server: FakeLLMServer) -> tuple[Any, Any, Any]:
        llm = make(server)
        try:
            claims = await extract_claims(llm, question=QUESTION, text=RESPONSE)
            labels = await check_claims(llm, ["r1", "r2"], premise="PASSAGE ONE")
            nothing = await check_claims(llm, [], premise="PASSAGE ONE")
            return claims, labels, nothing
        finally:
            await llm.aclose()

    with FakeLLMServer(scripted()) as server:
        claims, labels, nothing = asyncio.run(go(server))
        assert server.calls == 2
    assert (claims.status, claims.value) == ("ok", CLAIMS[RESPONSE])
    assert (labels.status, labels.value) == ("ok", [E, N])
    assert (nothing.status, nothing.value, nothing.called) == ("ok", [], False)


def test_every_call_caps_its_output() -> None:
    with FakeLLMServer(scripted()) as server:
        run_diagnose(server)
        caps = sorted(
            {
                (r["messages"][-1]["content"].startswith("Break"), r.get("max_tokens"))
                for r in server.requests
            }
        )
    # Extractions: 1024; checks: 16 per claim and 64 (five response claims, two reference).
    assert caps == [(False, 16 * 2 + 64), (False, 16 * 5 + 64), (True, 1024)]


def test_hostile_claims_are_bounded_counted_and_never_sent_whole() -> None:
    """A judge that returns 60 claims of a megabyte each, and 10,000 short ones: every check
    sends at most MAX_CLAIMS claims of MAX_CLAIM_CHARS each, asks for at most
    CHECK_MAX_TOKENS, and the claims cut are counted."""
    huge = [f"claim {i} " + "x" * 1_000_000 for i in range(60)]
    many = [f"c{i}" for i in range(10_000)]
    overrides = {
        f"extract {RESPONSE}": json.dumps({"claims": huge}),
        f"extract {REFERENCE}": json.dumps({"claims": many}),
    }

    def reply(request: dict[str, Any]) -> Any:
        prompt = str(request["messages"][-1]["content"])
        if prompt.startswith("Break"):
            return scripted(overrides)(request)
        claims = _section(prompt, "Claims").splitlines()
        return json.dumps({"labels": [N] * len(claims)})

    with FakeLLMServer(reply) as server:
        found = run_diagnose(server)
        checks = [r for r in server.requests if not r["messages"][-1]["content"].startswith("B")]
    assert found.response_claims is not None and found.reference_claims is not None
    assert len(found.response_claims) == 60
    assert max(len(c) for c in found.response_claims) == MAX_CLAIM_CHARS
    assert len(found.reference_claims) == MAX_CLAIMS
    assert found.claims_cut == 60 + (10_000 - MAX_CLAIMS)
    assert (found.unparsed, found.errors) == (0, 0)
    assert found.to_dict()["claims_cut"] == found.claims_cut
    assert len(checks) == 2 + 2 * len(PASSAGES)
    for request in checks:
        assert len(request["messages"][-1]["content"]) < 60 * MAX_CLAIM_CHARS + 2_000
        assert request["max_tokens"] <= CHECK_MAX_TOKENS
    assert CHECK_MAX_TOKENS == 16 * MAX_CLAIMS + 64
