"""Ranking metrics equal trec_eval's (through pytrec_eval, trec_eval's own C code)."""

from __future__ import annotations

import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from lasagna_metrics import (
    MetricsError,
    average_precision,
    hit_rate_at_k,
    ndcg_at_k,
    precision_at_k,
    r_precision,
    recall_at_k,
    reciprocal_rank,
)

DOCS = [f"d{i}" for i in range(12)]
rankings = st.lists(st.sampled_from(DOCS), min_size=1, max_size=20)  # repeats likely
judgments = st.dictionaries(st.sampled_from(DOCS), st.integers(-1, 3), min_size=1, max_size=10)


def trec_eval(ranking: list[str], qrels: dict[str, int], k: int) -> dict[str, float]:
    """trec_eval's measures for one query. A run is {doc: score}, so trec_eval sees each
    id once; strictly falling scores at the first occurrences give it our ranking."""
    unique = list(dict.fromkeys(ranking))
    run = {"q": {doc: float(len(unique) - i) for i, doc in enumerate(unique)}}
    measures = {f"P.{k}", f"recall.{k}", f"ndcg_cut.{k}", f"success.{k}", f"map_cut.{k}"}
    measures |= {"map", "recip_rank", "Rprec"}
    evaluator = pytrec_eval.RelevanceEvaluator({"q": qrels}, measures)
    result: dict[str, float] = evaluator.evaluate(run)["q"]
    return result


@settings(max_examples=500, deadline=None)
@given(rankings, judgments, st.integers(1, 15))
def test_every_metric_equals_trec_eval(ranking: list[str], qrels: dict[str, int], k: int) -> None:
    want = trec_eval(ranking, qrels, k)
    # Exact equality: the same operations in the same order as trec_eval's C code.
    assert precision_at_k(ranking, qrels, k) == want[f"P_{k}"]
    assert recall_at_k(ranking, qrels, k) == want[f"recall_{k}"]
    assert ndcg_at_k(ranking, qrels, k) == want[f"ndcg_cut_{k}"]
    assert hit_rate_at_k(ranking, qrels, k) == want[f"success_{k}"]
    assert average_precision(ranking, qrels, k) == want[f"map_cut_{k}"]
    assert average_precision(ranking, qrels) == want["map"]
    assert reciprocal_rank(ranking, qrels) == want["recip_rank"]
    assert r_precision(ranking, qrels) == want["Rprec"]
    # MRR@k is recip_rank on the first k distinct documents.
    top_k = list(dict.fromkeys(ranking))[:k]
    assert reciprocal_rank(ranking, qrels, k) == trec_eval(top_k, qrels, k)["recip_rank"]


def test_graded_judgments_with_duplicates_worked_example() -> None:
    # d1 is repeated: it counts once at rank 1 and the copy does not take rank 3.
    ranking = ["d1", "d2", "d1", "d3", "d9"]
    qrels = {"d1": 1, "d2": 0, "d3": 2, "d4": 3, "d5": -1}
    # Distinct ranking d1 d2 d3 d9; relevant: d1 (1), d3 (2), d4 (3, never retrieved).
    assert precision_at_k(ranking, qrels, 3) == 2 / 3
    assert recall_at_k(ranking, qrels, 3) == 2 / 3
    assert hit_rate_at_k(ranking, qrels, 1) == 1.0
    assert reciprocal_rank(ranking, qrels) == 1.0
    assert average_precision(ranking, qrels) == (1 / 1 + 2 / 3) / 3
    assert r_precision(ranking, qrels) == 2 / 3
    # Linear gain; the ideal ranking is d4 d3 d1 from all judged grades.
    dcg = 1 / 1 + 2 / 2  # log2(2) = 1, log2(4) = 2
    ideal = 3 / 1 + 2 / 1.584962500721156 + 1 / 2
    assert ndcg_at_k(ranking, qrels, 3) == pytest.approx(dcg / ideal)
    want = trec_eval(ranking, qrels, 3)
    assert ndcg_at_k(ranking, qrels, 3) == want["ndcg_cut_3"]
    assert average_precision(ranking, qrels) == want["map"]


def test_grades_of_zero_or_less_are_not_relevant() -> None:
    qrels = {"d1": 0, "d2": -2}
    for metric in (precision_at_k, recall_at_k, ndcg_at_k, hit_rate_at_k):
        assert metric(["d1", "d2"], qrels, 2) == 0.0
    assert reciprocal_rank(["d1", "d2"], qrels) == 0.0
    assert average_precision(["d1", "d2"], qrels) == 0.0
    assert r_precision(["d1", "d2"], qrels) == 0.0


def test_nothing_retrieved_or_nothing_judged_scores_zero() -> None:
    for qrels in ({}, {"d1": 2}):
        for metric in (precision_at_k, recall_at_k, ndcg_at_k, hit_rate_at_k):
            assert metric([], qrels, 5) == 0.0
        assert metric(["d7"], {}, 5) == 0.0
        assert reciprocal_rank([], qrels) == 0.0
        assert average_precision([], qrels) == 0.0
        assert r_precision([], qrels) == 0.0


def test_precision_divides_by_k_even_when_fewer_were_retrieved() -> None:
    assert precision_at_k(["d1"], {"d1": 1}, 10) == 0.1


@given(rankings, judgments, st.integers(1, 15))
def test_bounds_and_monotonicity(ranking: list[str], qrels: dict[str, int], k: int) -> None:
    values = [
        precision_at_k(ranking, qrels, k),
        recall_at_k(ranking, qrels, k),
        ndcg_at_k(ranking, qrels, k),
        hit_rate_at_k(ranking, qrels, k),
        average_precision(ranking, qrels),
        reciprocal_rank(ranking, qrels, k),
        r_precision(ranking, qrels),
    ]
    assert all(0.0 <= v <= 1.0 for v in values)
    assert recall_at_k(ranking, qrels, k) <= recall_at_k(ranking, qrels, k + 1)
    assert hit_rate_at_k(ranking, qrels, k) <= hit_rate_at_k(ranking, qrels, k + 1)
    # Repeats never change a score: they are dropped.
    unique = list(dict.fromkeys(ranking))
    assert ndcg_at_k(ranking * 2, qrels, k) == ndcg_at_k(unique, qrels, k)


@given(st.dictionaries(st.sampled_from(DOCS), st.floats(0.01, 5), min_size=1))
def test_the_ideal_ranking_scores_one(qrels: dict[str, float]) -> None:
    ideal = sorted(qrels, key=lambda d: -qrels[d])
    assert ndcg_at_k(ideal, qrels, len(ideal)) == pytest.approx(1.0)
    assert average_precision(ideal, qrels) == 1.0
    assert r_precision(ideal, qrels) == 1.0
    assert reciprocal_rank(ideal, qrels) == 1.0


def test_float_grades_are_linear_gains() -> None:
    assert ndcg_at_k(["b", "a"], {"a": 2.5, "b": 0.5}, 2) == pytest.approx(
        (0.5 + 2.5 / 1.584962500721156) / (2.5 + 0.5 / 1.584962500721156)
    )


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: recall_at_k("d1 d2", {"d1": 1}, 1), "ranking: expected a list of document ids"),
        (lambda: ndcg_at_k(["d1"], {"d1": 1}, 0), "k: expected a whole number >= 1, found 0"),
        (lambda: precision_at_k(["d1"], {"d1": 1}, 2.5), "k: expected a whole number"),
        (lambda: ndcg_at_k(["d1"], [("d1", 1)], 1), "judgments: expected a mapping"),
        (lambda: average_precision(["d1"], {"d1": "2"}), r"judgments\['d1'\]: expected a numeric"),
        (lambda: reciprocal_rank(["d1"], {"d1": float("nan")}), "numeric grade"),
        (lambda: r_precision([["d1"]], {"d1": 1}), r"ranking\[0\]: expected a document id"),
    ],
)
def test_bad_input_is_a_metrics_error(call: object, message: str) -> None:
    with pytest.raises(MetricsError, match=message):
        call()  # type: ignore[operator]
