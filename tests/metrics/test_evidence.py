"""evidence_recall scores as OpenViking's RAG benchmark does, with its two documented fixes."""

from __future__ import annotations

from typing import Any

import pytest

from lasagna_metrics import MetricsError, evidence_recall


def test_equals_openviking_when_no_word_is_cut(openviking_cases: dict[str, Any]) -> None:
    # Words of one fixed length joined by single spaces: any substring occurrence of such an
    # evidence item lines up with word boundaries, so the boundary fix cannot change a result.
    for chunks, evidence, threshold, least, expected in openviking_cases["recall_no_cut"]:
        found = evidence_recall(
            chunks, evidence, soft_threshold=threshold, min_soft_match_tokens=least
        )
        assert found == expected, (chunks, evidence, threshold, least)


def test_never_above_openviking_and_within_bounds(openviking_cases: dict[str, Any]) -> None:
    # The boundary fix only removes false strict hits, so the score can only go down.
    for chunks, evidence, theirs in openviking_cases["recall_any_text"]:
        ours = evidence_recall(chunks, evidence)
        assert ours is not None
        assert 0.0 <= ours <= theirs <= 1.0, (chunks, evidence)
        assert ours * len(evidence) == pytest.approx(round(ours * len(evidence)))


def test_strict_match_respects_token_boundaries() -> None:
    # Fix 1: OpenViking counts "D1:3" inside "[D1:30]" (1.0: openviking_cases.json, "named").
    assert evidence_recall(["Caroline said hi [D1:30]"], ["D1:3"]) == 0.0
    assert evidence_recall(["Caroline said hi [D1:3]"], ["D1:3"]) == 1.0
    assert evidence_recall(["D1:3"], ["D1:3"]) == 1.0  # at both ends of the text
    assert evidence_recall(["xD1:3 and D1:3."], ["D1:3"]) == 1.0  # a later clean occurrence
    assert evidence_recall(["the cat sat"], ["cat"]) == 1.0
    assert evidence_recall(["concatenate"], ["cat"]) == 0.0
    # Only the edges that are word characters need a boundary.
    assert evidence_recall(["see(b)here"], ["(b)"]) == 1.0
    assert evidence_recall(["see [D1:3]"], [" [D1:3"]) == 1.0
    assert evidence_recall(["snake_case_name"], ["case"]) == 0.0  # "_" is a word character


def test_empty_evidence_has_no_score() -> None:
    # Fix 2: OpenViking returns 0.0 (its "named" case), which averages such questions in as
    # failures.
    assert evidence_recall(["anything"], []) is None
    assert evidence_recall([], []) is None


def test_soft_match_threshold_and_minimum_tokens() -> None:
    text = ["The quick brown fox jumps over the lazy dog near the river bank."]
    # 5 distinct tokens, 4 present: coverage 0.8 >= 0.8.
    assert evidence_recall(text, ["quick brown fox jumps elephant"]) == 1.0
    # 4 tokens, 3 present: 0.75 < 0.8.
    assert evidence_recall(text, ["quick brown fox elephant"]) == 0.0
    assert evidence_recall(text, ["quick brown fox elephant"], soft_threshold=0.75) == 1.0
    # 3 tokens, all present but not verbatim: too short for a soft match.
    assert evidence_recall(text, ["dog fox quick"]) == 0.0
    assert evidence_recall(text, ["dog fox quick"], min_soft_match_tokens=3) == 1.0
    # Distinct tokens: repeats do not make an item long enough.
    assert evidence_recall(text, ["dog dog fox fox quick"]) == 0.0
    # Normalisation drops punctuation, case, a/an/the and "and", as OpenViking does.
    assert evidence_recall(text, ["The LAZY, dog; and the RIVER bank"]) == 1.0
    assert evidence_recall(text, ["cats and dogs and birds"]) == 0.0  # 3 tokens after "and"


def test_score_is_hits_over_items_across_chunks() -> None:
    chunks = ["Alice met Bob in Paris.", "They visited the Louvre [D2:7]."]
    evidence = ["Bob in Paris", "D2:7", "D2:8", "Alice visited the Louvre with Bob"]
    # Chunks are joined with a space, so the soft match sees tokens of both chunks
    # (4 of the last item's 5 tokens: 0.8).
    assert evidence_recall(chunks, evidence) == 0.75  # OpenViking's figure too


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"retrieved": "one text", "evidence": ["x"]}, "retrieved: expected a list of strings"),
        ({"retrieved": ["x"], "evidence": "D1:3"}, "evidence: expected a list of strings"),
        ({"retrieved": ["x", 3], "evidence": ["x"]}, r"retrieved\[1\]: expected a string"),
        ({"retrieved": ["x"], "evidence": [None]}, r"evidence\[0\]: expected a string"),
        ({"retrieved": ["x"], "evidence": ["x"], "soft_threshold": 1.5}, "soft_threshold"),
        ({"retrieved": ["x"], "evidence": ["x"], "soft_threshold": float("nan")}, "soft_threshold"),
        ({"retrieved": ["x"], "evidence": ["x"], "min_soft_match_tokens": -1}, "min_soft_match"),
    ],
)
def test_bad_input_is_a_metrics_error(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(MetricsError, match=message):
        evidence_recall(**kwargs)  # type: ignore[arg-type]


def test_token_normalisation_equals_openviking(openviking_cases: dict[str, Any]) -> None:
    from lasagna_metrics._evidence import _token_set

    for text, normalized in openviking_cases["normalize"]:
        assert _token_set(text) == set(normalized.split()), text
