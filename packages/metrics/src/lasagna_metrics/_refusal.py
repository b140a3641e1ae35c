"""Refusal detection: does an answer decline to answer?

One case-insensitive regex of all the phrases is the rule. ASCII text (nearly every answer)
takes a faster road to the same result: lower-cased, each phrase's own pattern is searched
only when the words it cannot match without are in the text ("not" and "mention", ...),
and without the IGNORECASE flag, under which the engine compares every character through a
case table at every position. For ASCII text and these all-lowercase ASCII patterns a
case-insensitive match is exactly a match in the lower-cased text; the tests check both
roads agree.
"""

from __future__ import annotations

import re

from lasagna_metrics._errors import MetricsError

# Typographic apostrophes and look-alikes become "'" so that "don’t know" matches.
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\uff07": "'"})

_NOT = r"(?:\bnot|n't|\bnever)"
_CANNOT = r"(?:\bcannot|\bcan\s+not|\bcan't|\bcould\s+not|\bcouldn't|\bunable\s+to)"
# Each phrase, with what any text it matches contains (lowercase): one word of each group.
_PHRASES: list[tuple[tuple[tuple[str, ...], ...], str]] = [
    # "not mentioned", "isn't mentioned", "does not mention", "not stated", "does not specify"
    (
        (("not", "n't", "never"), ("mention", "state", "specif")),
        rf"{_NOT}\s+(?:been\s+)?(?:explicitly\s+|directly\s+|specifically\s+)?"
        r"(?:mention(?:ed)?|state[ds]?|specif(?:y|ied|ies))\b",
    ),
    ((("no",), ("mention",)), r"\bno\s+(?:explicit\s+|specific\s+|direct\s+)?mention\b"),
    # "no information", "no relevant information", "not enough information",
    # "insufficient information", "insufficient context"
    (
        (("no", "insufficient"), ("info", "context")),
        r"\b(?:no|not\s+enough|not\s+sufficient|insufficient)\s+(?:\w+\s+)?"
        r"(?:information|info|context)\b",
    ),
    (
        (("not", "n't", "never"), ("information",)),
        rf"{_NOT}\s+(?:contain|provide|include|give|have)\s+(?:any\s+|enough\s+)?"
        r"(?:\w+\s+)?information\b",
    ),
    # "cannot be answered", "can't answer", "unable to determine", "unanswerable"
    (
        (("can", "could", "unable"), ("answer", "determine")),
        rf"{_CANNOT}\s+(?:be\s+)?(?:answered|answer|determined|determine)\b",
    ),
    ((("answerable",),), r"\b(?:unanswerable|not\s+answerable)\b"),
    ((("unknown",),), r"\bunknown\b"),
    # "don't know", "do not know", "dont know", "no idea"
    ((("know",), ("do",)), r"\b(?:don't|dont|do\s+not)\s+know\b"),
    ((("idea",), ("no",)), r"\bno\s+idea\b"),
    # Chat models' refusals: "I'm sorry, but ...", "I cannot provide ...", "I don't have
    # the data ...", "you haven't provided ..." (FinanceBench's human-labelled refusals).
    ((("sorry",),), r"^\s*(?:i'm|i\s+am)\s+sorry\b"),
    ((("apologi",),), r"^\s*i\s+apologi[sz]e\b"),
    ((("can", "could", "unable"), ("provide",)), rf"{_CANNOT}\s+provide\b"),
    (
        (("have",), ("do",)),
        r"\bi\s+(?:don't|do\s+not)\s+have\s+(?:access\s+to\s+)?"
        r"(?:the|any|enough|sufficient|specific|that|this)\b",
    ),
    ((("provided",), ("have",)), r"\b(?:haven't|have\s+not)\s+(?:been\s+)?provided\b"),
    # "None" alone (OpenViking counts it); inside a sentence it is an answer ("none of them").
    ((("none",),), r"^\s*none\s*[.!]?\s*$"),
]
_REFUSAL = re.compile("|".join(f"(?:{p})" for _, p in _PHRASES), re.IGNORECASE)
_ASCII_PHRASES = [(words, re.compile(p)) for words, p in _PHRASES]
# Below this length the one regex is as fast.
_SHORT = 48


def is_refusal(text: str) -> bool:
    """True when `text` declines to answer.

    Recognises "not mentioned", "no information", "cannot be answered", "unknown",
    "don't know", "insufficient information" and close variants ("isn't mentioned",
    "does not mention", "no relevant information", "not enough context", "can't be
    determined", "unable to answer", "I do not know", "no idea", a bare "None", and chat
    models' "I'm sorry, but ...", "I cannot provide ...", "I don't have the data ..."), matched
    case-insensitively on word boundaries: "nonetheless" and "unknowingly" are not refusals.
    A typographic apostrophe counts as "'".
    """
    if not isinstance(text, str):
        raise MetricsError(
            f"text: expected a string, found {type(text).__name__}; convert the answer to text"
        )
    text = text.translate(_APOSTROPHES)
    if len(text) < _SHORT or not text.isascii():
        return _REFUSAL.search(text) is not None
    lowered = text.lower()
    contains = lowered.__contains__
    for groups, pattern in _ASCII_PHRASES:
        if all(any(map(contains, group)) for group in groups) and pattern.search(lowered):
            return True
    return False
