"""Evidence recall: how much of the annotated evidence the retrieved chunks contain."""

from __future__ import annotations

import re
import string
from collections.abc import Sequence

from lasagna_metrics._errors import MetricsError

# A regex pass removes ASCII punctuation from long non-ASCII text several times faster than
# str.translate, which leaves its fast path at the first non-ASCII character.
_PUNCTUATION = re.compile("[" + re.escape(string.punctuation) + "]+")
# OpenViking's normalisation is SQuAD's with "and" dropped as well; kept so that scores match.
_STOPWORDS = re.compile(r"\b(?:a|an|the|and)\b")
_STOPWORD_SET = frozenset({"a", "an", "the", "and"})


def _token_set(text: str) -> set[str]:
    """set(normalize(text).split()) with OpenViking's normalisation, computed on the distinct
    words: in a word of letters and digits only, `\\b` can only sit at its two ends, so the
    stopword regex removes it exactly when the whole word is a stopword."""
    words = set(_PUNCTUATION.sub("", text.lower()).split())
    plain = {word for word in words if word.isalnum()}
    tokens = plain - _STOPWORD_SET
    for word in words - plain:
        tokens.update(_STOPWORDS.sub(" ", word).split())
    return tokens


def _is_word_char(ch: str) -> bool:
    # Exactly the characters `\w` matches in a str regex.
    return ch.isalnum() or ch == "_"


def _strict_hit(evidence: str, text: str) -> bool:
    """`evidence` occurs in `text` and does not cut a word in two at either end."""
    start = text.find(evidence)
    if start < 0 or not evidence:
        return start >= 0
    # A boundary is needed only where the evidence itself starts or ends with a word character:
    # "D1:3" must not hit "[D1:30]", while "(b)" may sit anywhere.
    check_left = _is_word_char(evidence[0])
    check_right = _is_word_char(evidence[-1])
    size = len(evidence)
    while start >= 0:
        end = start + size
        left_ok = not check_left or start == 0 or not _is_word_char(text[start - 1])
        right_ok = not check_right or end == len(text) or not _is_word_char(text[end])
        if left_ok and right_ok:
            return True
        start = text.find(evidence, start + 1)
    return False


def _strings(value: object, what: str) -> Sequence[str]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise MetricsError(
            f"{what}: expected a list of strings, found {type(value).__name__}; "
            "wrap a single text in a list"
        )
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise MetricsError(
                f"{what}[{i}]: expected a string, found {type(item).__name__}; "
                "convert the item to text first"
            )
    return value


def evidence_recall(
    retrieved: Sequence[str],
    evidence: Sequence[str],
    *,
    soft_threshold: float = 0.8,
    min_soft_match_tokens: int = 4,
) -> float | None:
    """Share of the evidence items found in the retrieved chunks, as OpenViking's RAG
    benchmark scores it, with two deliberate fixes.

    The retrieved chunks are joined with spaces. Each evidence item is a hit when it occurs
    in that text verbatim (strict match). Otherwise, when its distinct normalised tokens
    (lower-cased, punctuation and a/an/the/and removed) number at least
    `min_soft_match_tokens`, it is a hit when at least `soft_threshold` of those tokens occur
    among the retrieved text's tokens (soft match); shorter items, such as ids, must match
    strictly. The score is hits / items.

    Fixes against OpenViking's `check_recall`:
    - The strict match respects token boundaries: an item that starts (ends) with a letter,
      digit or underscore does not hit where the text continues the word on that side, so
      evidence "D1:3" does not hit inside "[D1:30]" (OpenViking's plain substring test does).
    - An empty evidence list returns None (there is nothing to recall, so no score), not 0.0,
      so that averages do not count such questions as failures.

    As in OpenViking, an empty evidence string is found everywhere.
    """
    chunks = _strings(retrieved, "retrieved")
    items = _strings(evidence, "evidence")
    if (
        isinstance(soft_threshold, bool)
        or not isinstance(soft_threshold, int | float)
        or not 0.0 <= soft_threshold <= 1.0  # also rejects NaN
    ):
        raise MetricsError(
            f"soft_threshold: expected a number between 0 and 1, found {soft_threshold!r}"
        )
    if (
        isinstance(min_soft_match_tokens, bool)
        or not isinstance(min_soft_match_tokens, int)
        or min_soft_match_tokens < 0
    ):
        raise MetricsError(
            f"min_soft_match_tokens: expected a whole number >= 0, found {min_soft_match_tokens!r}"
        )
    if not items:
        return None
    combined = " ".join(chunks)
    retrieved_tokens: set[str] | None = None  # normalised only if a soft match is needed
    hits = 0
    for item in items:
        if _strict_hit(item, combined):
            hits += 1
            continue
        item_tokens = _token_set(item)
        if not item_tokens or len(item_tokens) < min_soft_match_tokens:
            continue
        if retrieved_tokens is None:
            retrieved_tokens = _token_set(combined)
        coverage = len(item_tokens & retrieved_tokens) / len(item_tokens)
        if coverage >= soft_threshold:
            hits += 1
    return hits / len(items)
