"""What a comparison says in words (`_verdict.verdict`), what the gate of `compare
--fail-if-worse` decides (`check_gates`), and which settings the setups vary
(`_settings.varied_settings`), on comparisons made by the real paired statistics."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import pytest

from lasagna_cli.engine._errors import EngineUsageError
from lasagna_cli.engine.reports._paired import compare_paired
from lasagna_cli.engine.reports._settings import varied_settings
from lasagna_cli.engine.reports._verdict import Gate, check_gates, lower_is_better, verdict

BASE = [0.0, 1.0, 0.5, 0.25, 1.0, 0.0, 0.8, 0.6, 1.0, 0.4] * 4


def row(metric: str, a: list[float], b: list[float]) -> dict[str, Any]:
    return {"metric": metric, **asdict(compare_paired(a, b, seed=1))}


def said(metric: str, a: list[float], b: list[float]) -> str:
    return verdict(row(metric, a, b), "bm25", "dense", 0.95)


def test_a_difference_shown_says_who_is_better_by_how_much() -> None:
    better = [x + 0.1 if i % 3 else x + 0.05 for i, x in enumerate(BASE)]
    text = said("retrieval/ndcg@10", BASE, better)
    assert text.startswith("dense is better than bm25 on retrieval/ndcg@10 by 0.083 [")
    assert text.endswith("] (p = 0.0002, n = 40)")  # the smallest p 9,999 draws give
    worse = said("retrieval/ndcg@10", better, BASE)
    assert worse.startswith("dense is worse than bm25 on retrieval/ndcg@10 by 0.083 [")


def test_lower_is_better_turns_a_lower_value_into_better() -> None:
    assert lower_is_better("diagnostics/hallucination")
    assert lower_is_better("generation/false_refusal_rate")
    assert not lower_is_better("retrieval/ndcg@10")
    fewer = [max(0.0, x - 0.2) for x in BASE]
    text = said("diagnostics/hallucination", BASE, fewer)
    assert text.startswith("dense is better than bm25 on diagnostics/hallucination (lower is "
                           "better) by 0.")  # fmt: skip
    low, high = (float(x) for x in text.split("[")[1].split("]")[0].split(", "))
    assert 0 < low <= high  # the interval of how much better, as a positive amount


def test_no_difference_shown_says_how_many_questions_would_show_one() -> None:
    noisy = [x + (0.3 if i % 2 else -0.25) for i, x in enumerate(BASE[:13])]
    found = row("retrieval/mrr", BASE[:13], noisy)
    assert found["p_value"] >= 0.05
    text = verdict(found, "bm25", "dense", 0.95)
    assert text.startswith("no difference between dense and bm25 is shown on retrieval/mrr (")
    assert f"about {found['questions_needed']:,} questions would detect a difference of" in text
    assert "the one observed (80% power)" in text


def test_the_degenerate_cases_are_sentences_not_figures() -> None:
    assert said("retrieval/mrr", [0.0] * 3, [0.1] * 3) == (
        "all 3 questions differ by the same +0.100 on retrieval/mrr (dense - bm25); too few "
        "to test: 3 questions cannot give p below 0.05 (the smallest possible p is 0.25)"
    )
    assert said("retrieval/mrr", [0.0, 0.5, 0.2, 1.0], [0.5, 0.5, 0.4, 1.0]) == (
        "dense - bm25 on retrieval/mrr is +0.175 over 4 questions; too few to test: 4 "
        "questions cannot give p below 0.05 (the smallest possible p is 0.12)"
    )
    assert said("retrieval/mrr", BASE, BASE) == (
        "bm25 and dense score the same on retrieval/mrr on every one of the 40 questions"
    )
    assert said("retrieval/mrr", [0.2] * 8, [0.3] * 8) == (
        "dense is better than bm25 on retrieval/mrr by 0.100 on every one of the 8 questions "
        "(p = 0.0078)"
    )
    nothing = {"metric": "retrieval/mrr", "n": 0}
    assert "no question has a value of retrieval/mrr in both" in verdict(nothing, "a", "b", 0.95)
    for text in (said("retrieval/mrr", [0.0] * 3, [0.1] * 3), said("x/y", BASE, BASE)):
        assert "detectable" not in text and "0.000" not in text


def comparison(*rows: dict[str, Any]) -> dict[str, Any]:
    return {
        "a": {"run": "runs/a", "dataset": "d", "setup": "base"},
        "b": {"run": "runs/b", "dataset": "d", "setup": "base"},
        "metrics": list(rows),
    }


def test_the_gate_fails_only_when_the_whole_interval_is_beyond_the_margin() -> None:
    worse = [max(0.0, x - 0.1) for x in BASE]  # about -0.09 [-0.1, -0.07]
    found = row("retrieval/ndcg@10", BASE, worse)
    assert found["ci95_high"] < -0.05 < found["ci95_low"] + 0.1
    (tight,) = check_gates([comparison(found)], [Gate("ndcg@10", 0.02)])
    assert tight.failed and "FAILED: worse by more than 0.02" in tight.line
    assert "base (runs/b) against base (runs/a)" in tight.line  # one setup, two runs
    (loose,) = check_gates([comparison(found)], [Gate("retrieval/ndcg@10", 0.2)])
    assert not loose.failed and "passed: not shown worse by more than 0.2" in loose.line
    (near,) = check_gates([comparison(found)], [Gate("retrieval/ndcg@10", 0.08)])
    assert not near.failed and "a loss beyond the margin is not ruled out either" in near.line
    better = row("retrieval/ndcg@10", worse, BASE)
    assert not check_gates([comparison(better)], [Gate("ndcg@10", 0.0)])[0].failed


def test_the_gate_of_a_lower_is_better_metric_fails_when_b_is_higher() -> None:
    more = [x + 0.2 for x in BASE]
    up = row("diagnostics/hallucination", BASE, more)
    assert check_gates([comparison(up)], [Gate("hallucination", 0.05)])[0].failed
    down = row("diagnostics/hallucination", more, BASE)
    assert not check_gates([comparison(down)], [Gate("hallucination", 0.0)])[0].failed


def test_the_gate_with_too_few_or_no_questions() -> None:
    few = row("retrieval/mrr", [1.0] * 4, [0.0] * 4)  # clearly worse, but 4 questions
    (found,) = check_gates([comparison(few)], [Gate("mrr", 0.0)])
    assert not found.failed and "too few questions to show anything" in found.line
    empty = {"metric": "retrieval/mrr", "n": 0, "left_out": {"failed": 3}}
    (none,) = check_gates([comparison(empty)], [Gate("mrr", 0.0)])
    assert none.failed and "nothing to check" in none.line


def test_a_gate_names_a_metric_the_comparison_has() -> None:
    rows = (row("generation/f1", BASE, BASE), row("closed-book/f1", BASE, BASE))
    with pytest.raises(EngineUsageError, match=r"more than one metric has that name \(gen"):
        check_gates([comparison(*rows)], [Gate("f1", 0.0)])
    with pytest.raises(EngineUsageError, match=r"it has generation/f1, closed-book/f1$"):
        check_gates([comparison(*rows)], [Gate("ndcg@10", 0.0)])
    assert check_gates([comparison(*rows)], [Gate("closed-book/f1", 0.0)])[0].metric == (
        "closed-book/f1"
    )


def setup(name: str, **retriever: Any) -> dict[str, Any]:
    return {"name": name, "tracks": ["retrieval"], "generator": None, "retriever": retriever}


def test_varied_settings_name_everything_the_setups_vary() -> None:
    """The issue's case: BM25 against dense with the chunk size varied too said
    "compared: retriever" alone."""
    bm25 = setup("a", method="bm25", top_k=5, k1=0.9, chunker="tokens", chunk_size=100,
                 chunk_overlap=0)  # fmt: skip
    dense = setup("b", method="dense", top_k=5, embedder="e", chunker="tokens", chunk_size=400,
                  chunk_overlap=200)  # fmt: skip
    assert varied_settings([bm25, dense]) == ["chunk_size", "chunk_overlap", "retriever"]
    same_method = setup("c", method="bm25", top_k=3, k1=1.2, chunker="tokens", chunk_size=100,
                        chunk_overlap=0)  # fmt: skip
    assert varied_settings([bm25, same_method]) == ["k1", "top_k"]
    answering = {**setup("d", method="bm25", top_k=5), "tracks": ["retrieval", "generation"],
                 "generator": "openai/x", "prompt_sha256": "1"}  # fmt: skip
    other = {**answering, "name": "e", "generator": "openai/y", "prompt_sha256": "2"}
    assert varied_settings([answering, other]) == ["generator", "prompt"]
    assert varied_settings([bm25]) == [] and varied_settings([bm25, {**bm25, "name": "z"}]) == []
