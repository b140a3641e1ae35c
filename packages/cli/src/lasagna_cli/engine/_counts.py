"""A count and its noun, agreed: "1 file", "2 files", "1,000 queries". Every line that
counts something says it this way, so none says "1 files"."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str = "") -> str:
    """`n` (with thousands separators) and `noun`, or `plural` (default: `noun` + "s") when
    `n` is not 1."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"
