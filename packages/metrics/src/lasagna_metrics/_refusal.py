"""Refusal detection: does an answer decline to answer?"""

from __future__ import annotations

import re

from lasagna_metrics._errors import MetricsError

# Typographic apostrophes and look-alikes become "'" so that "don’t know" matches.
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\uff07": "'"})

_NOT = r"(?:\bnot|n't|\bnever)"
_CANNOT = r"(?:\bcannot|\bcan\s+not|\bcan't|\bcould\s+not|\bcouldn't|\bunable\s+to)"
_PATTERNS = [
    # "not mentioned", "isn't mentioned", "does not mention", "not stated", "does not specify"
    rf"{_NOT}\s+(?:been\s+)?(?:explicitly\s+|directly\s+|specifically\s+)?"
    r"(?:mention(?:ed)?|state[ds]?|specif(?:y|ied|ies))\b",
    r"\bno\s+(?:explicit\s+|specific\s+|direct\s+)?mention\b",
    # "no information", "no relevant information", "not enough information",
    # "insufficient information", "insufficient context"
    r"\b(?:no|not\s+enough|not\s+sufficient|insufficient)\s+(?:\w+\s+)?(?:information|info|context)\b",
    rf"{_NOT}\s+(?:contain|provide|include|give|have)\s+(?:any\s+|enough\s+)?"
    r"(?:\w+\s+)?information\b",
    # "cannot be answered", "can't answer", "unable to determine", "unanswerable"
    rf"{_CANNOT}\s+(?:be\s+)?(?:answered|answer|determined|determine)\b",
    r"\b(?:unanswerable|not\s+answerable)\b",
    r"\bunknown\b",
    # "don't know", "do not know", "dont know", "no idea"
    r"\b(?:don't|dont|do\s+not)\s+know\b",
    r"\bno\s+idea\b",
    # Chat models' refusals: "I'm sorry, but ...", "I cannot provide ...", "I don't have
    # the data ...", "you haven't provided ..." (FinanceBench's human-labelled refusals).
    r"^\s*(?:i'm|i\s+am)\s+sorry\b",
    r"^\s*i\s+apologi[sz]e\b",
    rf"{_CANNOT}\s+provide\b",
    r"\bi\s+(?:don't|do\s+not)\s+have\s+(?:access\s+to\s+)?"
    r"(?:the|any|enough|sufficient|specific|that|this)\b",
    r"\b(?:haven't|have\s+not)\s+(?:been\s+)?provided\b",
    # "None" alone (OpenViking counts it); inside a sentence it is an answer ("none of them").
    r"^\s*none\s*[.!]?\s*$",
]
_REFUSAL = re.compile("|".join(f"(?:{p})" for p in _PATTERNS), re.IGNORECASE)


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
    return _REFUSAL.search(text.translate(_APOSTROPHES)) is not None
