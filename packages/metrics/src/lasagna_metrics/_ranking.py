"""Ranking metrics with trec_eval's conventions.

A ranking is a sequence of document ids, best first; judgments map document ids to grades.
As in trec_eval (and so pytrec_eval, which the tests compare against):
- a repeated id counts once, at its first rank (later copies are dropped, not scored);
- a grade <= 0 is not relevant; unjudged documents are not relevant;
- nDCG uses linear gain (gain = grade) and the discount log2(rank + 1), with the ideal
  ranking built from every judged grade, retrieved or not;
- with no relevant document judged, every metric is 0.0.
Each float is computed in the order trec_eval computes it, so results are bit-identical.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence

from lasagna_metrics._errors import MetricsError

Judgments = Mapping[str, float]


def _ranked(ranking: Sequence[str], k: int | None) -> list[str]:
    if isinstance(ranking, str) or not isinstance(ranking, Sequence):
        raise MetricsError(
            f"ranking: expected a list of document ids, found {type(ranking).__name__}; "
            "pass the ids best first, e.g. ['d3', 'd1']"
        )
    for i, doc in enumerate(ranking):
        if not isinstance(doc, Hashable):
            raise MetricsError(f"ranking[{i}]: expected a document id, found {type(doc).__name__}")
    unique = list(dict.fromkeys(ranking))  # first occurrence wins, order kept
    return unique if k is None else unique[:k]


def _grades(judgments: Judgments) -> Judgments:
    if not isinstance(judgments, Mapping):
        raise MetricsError(
            "judgments: expected a mapping of document id to grade, found "
            f"{type(judgments).__name__}; e.g. {{'d1': 2, 'd7': 1}}"
        )
    for doc, grade in judgments.items():
        if isinstance(grade, bool) or not isinstance(grade, int | float) or math.isnan(grade):
            raise MetricsError(
                f"judgments[{doc!r}]: expected a numeric grade, found {grade!r}; "
                "use 0 (or less) for not relevant and 1, 2, ... for relevant"
            )
    return judgments


def _cutoff(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise MetricsError(f"k: expected a whole number >= 1, found {k!r}")
    return k


def _num_relevant(judgments: Judgments) -> int:
    return sum(1 for grade in judgments.values() if grade > 0)


def _relevant_retrieved(ranked: list[str], judgments: Judgments) -> int:
    return sum(1 for doc in ranked if judgments.get(doc, 0) > 0)


def recall_at_k(ranking: Sequence[str], judgments: Judgments, k: int) -> float:
    """Relevant documents in the top k / all relevant documents (trec_eval `recall_k`)."""
    judgments = _grades(judgments)
    ranked = _ranked(ranking, _cutoff(k))
    num_rel = _num_relevant(judgments)
    if num_rel == 0:
        return 0.0
    return _relevant_retrieved(ranked, judgments) / num_rel


def precision_at_k(ranking: Sequence[str], judgments: Judgments, k: int) -> float:
    """Relevant documents in the top k / k, even when fewer were retrieved (`P_k`)."""
    judgments = _grades(judgments)
    ranked = _ranked(ranking, _cutoff(k))
    return _relevant_retrieved(ranked, judgments) / k


def hit_rate_at_k(ranking: Sequence[str], judgments: Judgments, k: int) -> float:
    """1.0 when a relevant document is in the top k, else 0.0 (trec_eval `success_k`)."""
    judgments = _grades(judgments)
    ranked = _ranked(ranking, _cutoff(k))
    return 1.0 if any(judgments.get(doc, 0) > 0 for doc in ranked) else 0.0


def reciprocal_rank(ranking: Sequence[str], judgments: Judgments, k: int | None = None) -> float:
    """1 / rank of the first relevant document (trec_eval `recip_rank`); 0.0 if none.

    With `k`, only the top k count (MRR@k).
    """
    judgments = _grades(judgments)
    ranked = _ranked(ranking, None if k is None else _cutoff(k))
    for rank, doc in enumerate(ranked, start=1):
        if judgments.get(doc, 0) > 0:
            return 1.0 / rank
    return 0.0


def average_precision(ranking: Sequence[str], judgments: Judgments, k: int | None = None) -> float:
    """Mean of the precision at each relevant retrieved document, over all relevant
    documents (trec_eval `map`; with `k`, `map_cut_k`)."""
    judgments = _grades(judgments)
    ranked = _ranked(ranking, None if k is None else _cutoff(k))
    num_rel = _num_relevant(judgments)
    rel_so_far = 0
    total = 0.0
    for i, doc in enumerate(ranked):
        if judgments.get(doc, 0) > 0:
            rel_so_far += 1
            total += rel_so_far / (i + 1)
    if rel_so_far == 0:
        return 0.0
    return total / num_rel


def ndcg_at_k(ranking: Sequence[str], judgments: Judgments, k: int) -> float:
    """Normalised discounted cumulative gain at k with linear gain (trec_eval `ndcg_cut_k`).

    DCG = sum of grade / log2(rank + 1) over the top k documents with a positive grade;
    the ideal DCG sorts every positive judged grade, retrieved or not, best first.
    """
    judgments = _grades(judgments)
    ranked = _ranked(ranking, _cutoff(k))
    dcg = 0.0
    for i, doc in enumerate(ranked):
        gain = judgments.get(doc, 0)
        if gain > 0:
            dcg += gain / math.log2(i + 2)
    ideal = sorted((g for g in judgments.values() if g > 0), reverse=True)[:k]
    ideal_dcg = 0.0
    for i, gain in enumerate(ideal):
        ideal_dcg += gain / math.log2(i + 2)
    if ideal_dcg <= 0.0:
        return 0.0
    return dcg / ideal_dcg


def r_precision(ranking: Sequence[str], judgments: Judgments) -> float:
    """Precision at R, where R is the number of relevant documents (trec_eval `Rprec`)."""
    judgments = _grades(judgments)
    num_rel = _num_relevant(judgments)
    if num_rel == 0:
        _ranked(ranking, None)  # still reject a malformed ranking
        return 0.0
    ranked = _ranked(ranking, num_rel)
    return _relevant_retrieved(ranked, judgments) / num_rel
