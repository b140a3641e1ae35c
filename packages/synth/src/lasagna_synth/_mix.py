"""The question mix: `type=share` pairs, and counts by largest remainder.

Shares are read as exact fractions ("0.6", "1/3"), so 0.6 + 0.3 + 0.1 sums to exactly 1.
Counts: each type gets the floor of share x n; the questions left over go one each to the
types with the largest remainders, ties in type order (factoid, multihop, unanswerable).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from lasagna_synth._errors import SynthUsageError

QuestionType = Literal["factoid", "multihop", "unanswerable"]
QUESTION_TYPES: tuple[QuestionType, ...] = ("factoid", "multihop", "unanswerable")
"""The kinds of question `synthesize` writes, in the order ties are broken."""
DEFAULT_MIX = "factoid=0.6,multihop=0.3,unanswerable=0.1"
"""The share of each question type when `--mix` is not given."""

ShareLike = float | int | str | Fraction


@dataclass(frozen=True)
class Mix:
    """The share of each question type; every type is present, zero when not asked."""

    shares: tuple[tuple[QuestionType, Fraction], ...]

    def share(self, question_type: QuestionType) -> Fraction:
        return dict(self.shares)[question_type]

    def counts(self, n: int) -> dict[QuestionType, int]:
        """Questions per type for `n` questions, by largest remainder."""
        quotas = [(t, s * n) for t, s in self.shares]
        counts = {t: int(q.numerator // q.denominator) for t, q in quotas}
        left = n - sum(counts.values())
        by_remainder = sorted(
            range(len(quotas)), key=lambda i: (-(quotas[i][1] - counts[quotas[i][0]]), i)
        )
        for i in by_remainder[:left]:
            counts[quotas[i][0]] += 1
        return counts

    def __str__(self) -> str:
        return ",".join(f"{t}={_show(s)}" for t, s in self.shares if s)


def _show(share: Fraction) -> str:
    if share.denominator == 1:
        return str(share.numerator)
    decimal = f"{float(share):.10g}"
    return decimal if Fraction(decimal) == share else f"{share.numerator}/{share.denominator}"


def _type(name: str) -> QuestionType:
    key = name.strip().lower()
    for question_type in QUESTION_TYPES:
        if key == question_type:
            return question_type
    close = difflib.get_close_matches(key, QUESTION_TYPES, n=1, cutoff=0.5)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise SynthUsageError(
        f"unknown question type {name.strip()!r} in the mix: expected "
        f"{', '.join(QUESTION_TYPES)}{hint}"
    )


def _share(question_type: str, value: ShareLike) -> Fraction:
    try:
        share = Fraction(repr(value)) if isinstance(value, float) else Fraction(value)
    except (ValueError, ZeroDivisionError, TypeError):
        raise SynthUsageError(
            f"share of {question_type} must be a number such as 0.3 or 1/3, got {value!r}"
        ) from None
    if share < 0:
        raise SynthUsageError(f"share of {question_type} must not be negative, got {value!r}")
    return share


def parse_mix(spec: str | Mapping[str, ShareLike] | Mix) -> Mix:
    """Read a mix from "factoid=0.6,multihop=0.3,unanswerable=0.1" or a mapping."""
    if isinstance(spec, Mix):
        return spec
    pairs: list[tuple[str, ShareLike]] = []
    if isinstance(spec, str):
        for item in spec.split(","):
            name, sep, text = item.partition("=")
            if not sep or not name.strip() or not text.strip():
                raise SynthUsageError(
                    f"mix item {item.strip()!r} is not type=share: expected pairs such as "
                    f"{DEFAULT_MIX}"
                )
            pairs.append((name, text.strip()))
    else:
        pairs = list(spec.items())
    shares: dict[QuestionType, Fraction] = {}
    for name, value in pairs:
        question_type = _type(name)
        if question_type in shares:
            raise SynthUsageError(f"{question_type} appears twice in the mix; give it once")
        shares[question_type] = _share(question_type, value)
    total = sum(shares.values(), Fraction(0))
    if total != 1:
        raise SynthUsageError(
            f"mix shares must sum to 1, they sum to {float(total):.10g}: adjust them "
            f"(e.g. {DEFAULT_MIX})"
        )
    return Mix(tuple((t, shares.get(t, Fraction(0))) for t in QUESTION_TYPES))
