"""Span recall, precision and IoU equal Chroma's chunking evaluation: against cases pinned
from its code (tests/metrics/chroma_oracle.py), and against its code itself, live, on
generated cases when the mirror is on this machine."""

from __future__ import annotations

import importlib.util
import json
import random
from pathlib import Path
from typing import Any

import pytest

from lasagna_metrics import MetricsError, span_evidence_recall, span_metrics

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location(
    "lasagna_test_chroma_oracle", HERE / "chroma_oracle.py"
)
assert _spec is not None and _spec.loader is not None
oracle = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(oracle)

CASES: list[dict[str, Any]] = json.loads(oracle.FIXTURE.read_text())["cases"]


def _ours(case: dict[str, Any]) -> tuple[float, float, float]:
    evidence = [(case["corpus_id"], s, e) for s, e in case["references"]]
    retrieved = [(c, s, e) for c, s, e in case["retrieved"]]
    scores = span_metrics(retrieved, evidence)
    assert scores is not None and scores.precision is not None
    return scores.iou, scores.recall, scores.precision


def test_the_pinned_cases_are_many_and_varied() -> None:
    assert len(CASES) >= 300
    recalls = {case["upstream"]["recall"] for case in CASES}
    assert 0.0 in recalls and 1.0 in recalls and len(recalls) > 50


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['references']}-{c['retrieved']}"[:60])
def test_equal_to_chroma_pinned(case: dict[str, Any]) -> None:
    iou, recall, precision = _ours(case)
    assert iou == pytest.approx(case["upstream"]["iou"], abs=1e-9)
    assert recall == pytest.approx(case["upstream"]["recall"], abs=1e-9)
    assert precision == pytest.approx(case["upstream"]["precision"], abs=1e-9)


@pytest.mark.skipif(not oracle.mirror_present(), reason="no mirror of chunking_evaluation here")
def test_equal_to_chroma_live() -> None:
    namespace = oracle.upstream_namespace()
    rng = random.Random(7)
    cases = [oracle.random_case(rng) for _ in range(2000)]
    for case, expected in zip(cases, oracle.upstream_scores(namespace, cases), strict=True):
        assert _ours(case) == pytest.approx(expected, abs=1e-9), case
    # The pinned cases are what the code gives today.
    for case, expected in zip(CASES, oracle.upstream_scores(namespace, CASES), strict=True):
        up = case["upstream"]
        assert (up["iou"], up["recall"], up["precision"]) == pytest.approx(expected, abs=1e-12)


def test_big_chunks_recall_more_and_are_less_precise() -> None:
    evidence = [("d", 100, 150)]
    small = span_metrics([("d", 100, 150)], evidence)
    big = span_metrics([("d", 0, 1000)], evidence)
    assert small is not None and big is not None
    assert small.recall == big.recall == 1.0
    assert small.precision == 1.0 and big.precision == pytest.approx(0.05)
    assert big.iou == pytest.approx(0.05)


def test_nothing_to_recall_is_none_and_nothing_retrieved_has_no_precision() -> None:
    assert span_metrics([("d", 0, 5)], []) is None
    assert span_metrics([("d", 0, 5)], [("d", 3, 3)]) is None
    scores = span_metrics([], [("d", 0, 10)])
    assert scores is not None
    assert (scores.recall, scores.precision, scores.iou) == (0.0, None, 0.0)


def test_evidence_recall_counts_spans_covered_together() -> None:
    # One evidence span over two adjacent passages is covered; a second half-covered one is
    # soft at 0.5, not at 0.8.
    evidence = [("d", 10, 30), ("d", 100, 110)]
    retrieved = [("d", 0, 20), ("d", 20, 40), ("d", 105, 200)]
    assert span_evidence_recall(retrieved, evidence) == (0.5, 0.5)
    assert span_evidence_recall(retrieved, evidence, soft_threshold=0.5) == (1.0, 0.5)
    assert span_evidence_recall(retrieved, []) is None
    assert span_evidence_recall([("e", 10, 30)], evidence) == (0.0, 0.0)


@pytest.mark.parametrize(
    ("retrieved", "evidence"),
    [
        ("d", [("d", 0, 1)]),
        ([("d", 0)], [("d", 0, 1)]),
        ([("d", 5, 1)], [("d", 0, 1)]),
        ([("d", -1, 1)], [("d", 0, 1)]),
        ([("d", 0, 1)], [(1, 0, 1)]),
        ([("d", 0, True)], [("d", 0, 1)]),
    ],
)
def test_bad_spans_are_refused(retrieved: Any, evidence: Any) -> None:
    with pytest.raises(MetricsError, match="expected"):
        span_metrics(retrieved, evidence)


def test_whitespace_between_passages_is_not_evidence_missed_when_texts_are_given() -> None:
    text = "alpha beta gamma delta"
    evidence = [("d", 0, len(text))]
    retrieved = [("d", 0, 10), ("d", 11, 22)]  # "alpha beta", "gamma delta": the space out
    assert span_evidence_recall(retrieved, evidence) == (1.0, 0.0)
    assert span_evidence_recall(retrieved, evidence, texts={"d": text}) == (1.0, 1.0)
    assert span_evidence_recall([("d", 0, 10)], evidence, texts={"d": text}) == (0.0, 0.0)
    assert span_evidence_recall([("d", 0, 10)], [("d", 10, 11)], texts={"d": text}) == (1.0, 1.0)
