"""OpenViking's RAG benchmark metrics, exactly as its benchmark/RAG/src/core/metrics.py
computes them, for files that must carry its figures under its keys.

They differ from lasagna's own rules on purpose, and lasagna keeps its rules beside them:
- `openviking_f1` normalises as SQuAD does but also drops "and" and every comma, and has no
  notion of refusals (SQuAD 2.0's empty answer); `f1` is the official script's.
- `openviking_recall` is a plain substring test, so evidence "D1:3" hits inside "[D1:30]",
  and an empty evidence list scores 0.0; `evidence_recall` respects word boundaries and
  returns None when there is nothing to recall.
- `openviking_refusal` is OpenViking's substring list ("none" also hits "nonetheless");
  `is_refusal` is lasagna's phrase rule.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence

from lasagna_metrics._evidence import _strings

_PUNCTUATION = frozenset(string.punctuation)
_STOPWORDS = re.compile(r"\b(a|an|the|and)\b")
_REFUSALS = ("not mentioned", "no information", "cannot be answered", "none", "unknown",
             "don't know")  # fmt: skip


def _normalized(text: str) -> str:
    # The same steps in the same order: commas, lower case, punctuation, articles, spaces.
    lowered = str(text).replace(",", "").lower()
    kept = "".join(ch for ch in lowered if ch not in _PUNCTUATION)
    return " ".join(_STOPWORDS.sub(" ", kept).split())


def openviking_f1(prediction: str, reference: str) -> float:
    """Token F1 of one prediction against one reference, with OpenViking's normalisation."""
    predicted = _normalized(prediction).split()
    gold = _normalized(reference).split()
    same = sum((Counter(predicted) & Counter(gold)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(predicted), same / len(gold)
    return 2 * precision * recall / (precision + recall)


def openviking_refusal(text: str) -> bool:
    """Whether OpenViking's benchmark counts `text` as a refusal (a substring test)."""
    lowered = str(text).lower()
    return any(phrase in lowered for phrase in _REFUSALS)


def openviking_recall(
    retrieved: Sequence[str],
    evidence: Sequence[str],
    *,
    soft_threshold: float = 0.8,
    min_soft_match_tokens: int = 4,
) -> float:
    """OpenViking's `check_recall`: the share of evidence items found in the joined
    retrieved texts, verbatim anywhere (no word boundaries), or, for items of at least
    `min_soft_match_tokens` distinct normalised tokens, by covering `soft_threshold` of
    them. An empty evidence list scores 0.0."""
    chunks = _strings(retrieved, "retrieved")
    items = _strings(evidence, "evidence")
    if not items:
        return 0.0
    combined = " ".join(chunks)
    retrieved_tokens: set[str] | None = None
    hits = 0
    for item in items:
        if item in combined:
            hits += 1
            continue
        tokens = set(_normalized(item).split())
        if not tokens or len(tokens) < min_soft_match_tokens:
            continue
        if retrieved_tokens is None:
            retrieved_tokens = set(_normalized(combined).split())
        if len(tokens & retrieved_tokens) / len(tokens) >= soft_threshold:
            hits += 1
    return hits / len(items)
