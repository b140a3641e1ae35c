"""SQuAD answer metrics: normalisation, exact match and token F1.

The results equal the official SQuAD evaluation scripts' for every input (the tests compare
against faithful copies of both on arbitrary unicode). v2.0 is the default; v1.1 differs in
two places only: a prediction and a reference that both normalise to no tokens score F1 0
(v2.0: 1), and references that normalise to nothing are kept rather than dropped.

Speed comes from doing the same work more cheaply, never from approximating it: ASCII text
lower-cased and stripped of punctuation in one `bytes.translate` (other text through
`str.translate`, or its UTF-8 bytes when long), an article regex that skips to the next "a"
or "t", a cache of token tuples (answers repeat across questions), the last call's tokens
kept for the next (`exact_match` then `f1` on one answer normalise it once, at any length),
and a Counter-free token overlap. The F1 arithmetic is the official expression, operation
for operation, so every float is bit-identical.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from functools import lru_cache
from operator import is_
from typing import Literal

from lasagna_metrics._errors import MetricsError

SquadVersion = Literal["2.0", "1.1"]
"""The SQuAD evaluation rules: v1.1 and v2.0 differ only where an answer normalises to
nothing."""

_PUNCTUATION = str.maketrans("", "", string.punctuation)
_PUNCTUATION_BYTES = string.punctuation.encode("ascii")
_ASCII_LOWER = bytes.maketrans(
    string.ascii_uppercase.encode("ascii"), string.ascii_lowercase.encode("ascii")
)
# The official pattern `\b(a|an|the)\b`, written so that the regex engine can skip ahead to
# the next "a" or "t" instead of trying the alternation at every position: the character
# before the match must not be a word character (the leading \b), then "a", "an" or "the",
# then \b. `\b` and `\w` are Unicode-aware on str patterns, as in the official script; the
# tests check the two patterns agree on arbitrary text.
_ARTICLES = re.compile(r"[at](?<!\w[at])(?:(?<=a)n?|(?<=t)he)\b")
# Past this length, deleting punctuation from the UTF-8 bytes is faster than str.translate
# (a table lookup per byte in C instead of a dict lookup per character): every byte of a
# multi-byte character is >= 0x80, so deleting the ASCII punctuation bytes deletes exactly
# the punctuation characters. "surrogatepass" carries lone surrogates through unchanged.
_BYTES_FROM = 48


def _normalized_tokens(text: str) -> tuple[str, ...]:
    # Official order: lower, remove punctuation, remove articles, split on whitespace.
    if text.isascii():  # a flag of the string, not a scan: lower and delete in one pass
        bare = text.encode("ascii").translate(_ASCII_LOWER, _PUNCTUATION_BYTES).decode("ascii")
    elif len(text) < _BYTES_FROM:
        bare = text.lower().translate(_PUNCTUATION)
    else:
        encoded = text.lower().encode("utf-8", "surrogatepass")
        bare = encoded.translate(None, _PUNCTUATION_BYTES).decode("utf-8", "surrogatepass")
    return tuple(_ARTICLES.sub(" ", bare).split())


# Answers repeat (a reference scored for EM then F1, three annotators giving the same span);
# only short texts are cached, so that long generated answers cannot fill memory.
_cached_tokens = lru_cache(maxsize=1 << 13)(_normalized_tokens)
_CACHED_LENGTH = 256


def _tokens(text: str) -> tuple[str, ...]:
    if len(text) <= _CACHED_LENGTH:
        return _cached_tokens(text)
    return _normalized_tokens(text)


def normalize_answer(text: str) -> str:
    """Lower-case, drop ASCII punctuation and the articles a/an/the, collapse whitespace.

    >>> normalize_answer("The  Eiffel-Tower!")
    'eiffeltower'
    """
    return " ".join(_tokens(_text(text, "text")))


def _text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise MetricsError(
            f"{what}: expected a string, found {type(value).__name__}; "
            'convert the value to text first (None is not an answer: use "")'
        )
    return value


def _references(references: str | Sequence[str]) -> Sequence[str]:
    kind = type(references)
    if kind is str:
        return (references,)  # type: ignore[return-value]  # mypy cannot narrow on type()
    if kind is not list and kind is not tuple:  # the ABC check below is slow: lists skip it
        if isinstance(references, str):
            return (str(references),)
        if not isinstance(references, Sequence):
            raise MetricsError(
                "references: expected a string or a sequence of strings, found "
                f"{type(references).__name__}; pass a list of reference answers"
            )
    for ref in references:
        if type(ref) is not str:  # on the hot path: no call unless a check fails
            for i, item in enumerate(references):
                _text(item, f"references[{i}]")
    return references


def _gold_tokens(refs: Sequence[str], version: SquadVersion) -> list[tuple[str, ...]]:
    if version == "2.0":
        # Official v2.0: references normalising to nothing are dropped; [""] stands in.
        gold = [
            toks
            for ref in refs
            if (
                toks := _cached_tokens(ref)
                if len(ref) <= _CACHED_LENGTH
                else _normalized_tokens(ref)
            )
        ]
        return gold or [()]
    if version == "1.1":
        if not refs:
            raise MetricsError(
                "references: SQuAD v1.1 scoring needs at least one reference, found none; "
                'use version="2.0" for unanswerable questions'
            )
        return [_tokens(ref) for ref in refs]
    raise MetricsError(f'version: expected "2.0" or "1.1", found {version!r}')


def _overlap(gold: tuple[str, ...], pred: tuple[str, ...]) -> int:
    """Size of the multiset intersection, i.e. sum((Counter(gold) & Counter(pred)).values())."""
    if len(gold) == 1:
        return 1 if gold[0] in pred else 0
    if len(pred) == 1:
        return 1 if pred[0] in gold else 0
    gold_set = set(gold)
    if len(gold_set) == len(gold):  # no repeated gold token: each counts at most once
        return len(gold_set.intersection(pred))
    pred_set = set(pred)
    if len(pred_set) == len(pred):
        return len(pred_set.intersection(gold))
    counts: dict[str, int] = {}
    for tok in gold:
        counts[tok] = counts.get(tok, 0) + 1
    same = 0
    for tok in pred:
        left = counts.get(tok, 0)
        if left:
            counts[tok] = left - 1
            same += 1
    return same


def _best_f1(gold: list[tuple[str, ...]], pred: tuple[str, ...], version: SquadVersion) -> float:
    best = 0.0
    for toks in gold:
        if not toks or not pred:
            # v2.0: 1 when both are empty (no-answer agreed), else 0. v1.1: always 0.
            score = float(toks == pred) if version == "2.0" else 0.0
        else:
            num_same = _overlap(toks, pred)
            if num_same == 0:
                continue
            # The official expression, kept as is so that the floats are bit-identical.
            precision = 1.0 * num_same / len(pred)
            recall = 1.0 * num_same / len(toks)
            score = (2 * precision * recall) / (precision + recall)
        if score > best:
            best = score
    return best


# The last (prediction, references, version) scored and its normalised tokens, so that `f1`
# called right after `exact_match` on the same answer (as users score a pair) normalises
# nothing again, whatever the texts' lengths. A hit needs an equal prediction string, an
# equal version, and the same reference string or a list or tuple holding the very same
# reference objects (compared by identity against a snapshot: a list changed in between is
# seen, and no object's own __eq__ ever runs). One tuple, swapped whole: safe under threads.
_Prepared = tuple[tuple[str, ...], list[tuple[str, ...]]]
_last: tuple[str | None, object, str | None, _Prepared | None] = (None, None, None, None)


def _prepared(prediction: str, references: str | Sequence[str], version: SquadVersion) -> _Prepared:
    """The prediction's tokens and the references' gold tokens, checked."""
    global _last
    last_prediction, last_references, last_version, last = _last
    kind = type(references)
    if type(prediction) is str and prediction == last_prediction and version == last_version:
        if kind is str:
            if references == last_references:
                return last  # type: ignore[return-value]  # set together with the key
        elif (
            (kind is list or kind is tuple)
            and type(last_references) is tuple
            and len(references) == len(last_references)
            and all(map(is_, references, last_references))
        ):
            return last  # type: ignore[return-value]
    if type(prediction) is not str:
        _text(prediction, "prediction")
    # _tokens, inlined: this is the hot path of every score.
    if len(prediction) <= _CACHED_LENGTH:
        pred = _cached_tokens(prediction)
    else:
        pred = _normalized_tokens(prediction)
    if kind is str:
        gold = _gold_tokens((references,), version)  # type: ignore[arg-type]
    else:
        gold = _gold_tokens(_references(references), version)
    prepared = (pred, gold)
    if type(prediction) is str and type(version) is str:
        if kind is str:
            _last = (prediction, references, version, prepared)
        elif kind is list or kind is tuple:
            _last = (prediction, tuple(references), version, prepared)
    return prepared


def exact_match(
    prediction: str, references: str | Sequence[str], *, version: SquadVersion = "2.0"
) -> float:
    """1.0 when the normalised prediction equals a normalised reference, else 0.0.

    `references` is one string or a sequence of them; the score is the max over them. With
    the default SQuAD v2.0 rules, references that normalise to nothing are dropped and [""]
    stands in when none remain (so an empty prediction matches an unanswerable question).
    `version="1.1"` keeps every reference, as the v1.1 script does.
    """
    pred, gold = _prepared(prediction, references, version)
    return 1.0 if pred in gold else 0.0


def f1(prediction: str, references: str | Sequence[str], *, version: SquadVersion = "2.0") -> float:
    """Token F1 between the normalised prediction and the best reference.

    SQuAD v2.0 rules (the default): when either side normalises to no tokens, F1 is 1.0 if
    both do and 0.0 otherwise; references that normalise to nothing are dropped and [""]
    stands in when none remain; the score is the max over references. `version="1.1"` gives
    the v1.1 script's behaviour, where empty against empty scores 0.0.
    """
    pred, gold = _prepared(prediction, references, version)
    return _best_f1(gold, pred, version)


def exact_match_and_f1(
    prediction: str, references: str | Sequence[str], *, version: SquadVersion = "2.0"
) -> tuple[float, float]:
    """`(exact_match(...), f1(...))`, normalising each text once: the fastest way to get
    both scores of one answer."""
    pred = _tokens(prediction if type(prediction) is str else _text(prediction, "prediction"))
    gold = _gold_tokens(_references(references), version)
    return (1.0 if pred in gold else 0.0), _best_f1(gold, pred, version)
