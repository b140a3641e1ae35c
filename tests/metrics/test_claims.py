"""RAGChecker's claim metrics: equal to its own functions (pinned by a fixture, see
data/make_ragchecker_cases.py: ragchecker pulls torch and spacy, too heavy for a test
group) and to values computed by hand; an unparsed label leaves its metrics None."""

import json
import math
from pathlib import Path

import pytest

from lasagna_metrics import CLAIM_METRICS, MetricsError, claim_metrics

CASES = json.loads((Path(__file__).parent / "data" / "ragchecker_cases.json").read_text())


def _lower(value):
    return [_lower(v) for v in value] if isinstance(value, list) else value.lower()


@pytest.mark.parametrize("case", CASES)
def test_equals_ragchecker(case: dict) -> None:
    sets = {k: _lower(v) for k, v in case.items() if k != "metrics"}
    got = claim_metrics(**sets)
    assert set(got) == set(CLAIM_METRICS) == set(case["metrics"])
    for name, want in case["metrics"].items():
        assert math.isclose(got[name], want, abs_tol=1e-12), name


def test_by_hand() -> None:
    e, n, c = "entailment", "neutral", "contradiction"
    got = claim_metrics(
        answer2response=[e, n, c],  # response claims: 1 of 3 correct
        response2answer=[e, n],  # reference claims: 1 of 2 covered
        retrieved2answer=[[e, n], [n, n]],  # claim 0 in passage 0; passage 1 irrelevant
        retrieved2response=[[e, n], [n, e], [n, n]],
    )
    assert got["precision"] == pytest.approx(1 / 3)
    assert got["recall"] == 0.5
    assert got["f1"] == pytest.approx(2 * (1 / 3) * 0.5 / (1 / 3 + 0.5))
    assert got["claim_recall"] == 0.5
    assert got["context_precision"] == 0.5
    assert got["context_utilization"] == 1.0
    assert got["noise_sensitivity_in_relevant"] == 0.0
    assert got["noise_sensitivity_in_irrelevant"] == pytest.approx(1 / 3)  # claim 1, wrong
    assert got["hallucination"] == pytest.approx(1 / 3)  # claim 2: unsupported and wrong
    assert got["self_knowledge"] == 0.0
    assert got["faithfulness"] == pytest.approx(2 / 3)


def test_unparsed_is_apart_and_no_reference_gives_faithfulness() -> None:
    e = "entailment"
    got = claim_metrics(
        answer2response=[e, None],
        response2answer=[e],
        retrieved2answer=[[e]],
        retrieved2response=[[e], [e]],
    )
    assert got["precision"] is None and got["hallucination"] is None
    assert got["recall"] == 1.0 and got["faithfulness"] == 1.0
    alone = claim_metrics(retrieved2response=[[e], ["neutral"]])
    assert alone["faithfulness"] == 0.5
    assert [k for k, v in alone.items() if v is not None] == ["faithfulness"]


def test_bad_labels_and_shapes_refused() -> None:
    with pytest.raises(MetricsError, match="expected a label"):
        claim_metrics(answer2response=["yes"])
    with pytest.raises(MetricsError, match="one row per claim"):
        claim_metrics(response2answer=["entailment"], retrieved2answer=[])
