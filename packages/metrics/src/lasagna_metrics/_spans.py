"""Character-span metrics of retrieved passages against evidence spans.

A span is `(document, start, end)`: characters `start` to `end` (end excluded) of a
document's text. Two families:

`span_metrics`: recall, precision and IoU as Chroma's technical report "Evaluating Chunking
Strategies for Retrieval" (Smith and Troynikov, 2024) defines them, and as its code
computes them (chunking_evaluation, `BaseEvaluation._scores_from_dataset_and_retrievals`):
- the retrieved characters of the evidence: the union of every retrieved passage's
  intersection with every evidence span (of the same document);
- recall: those characters over the summed length of the evidence spans;
- precision: over the summed length of the k retrieved passages, every passage counted
  whole, overlapping or not, relevant or not: a passage that holds no evidence still costs
  its length, which is what a model reads;
- IoU: over the summed length of the retrieved passages plus the evidence characters no
  passage retrieved.
Big chunks raise recall and lower precision; IoU weighs both.

`span_evidence_recall`: the share of evidence spans the retrieved passages cover, together
(a span may run over two adjacent passages): strict when every character is covered, soft
at `soft_threshold` of them, as `evidence_recall` counts whole items for evidence given as
text. Given the documents' texts, whitespace is not counted: a chunker that cuts passages
from word to word leaves the space between two passages in neither, and that space is
not evidence a model misses.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from lasagna_metrics._errors import MetricsError

Span = tuple[str, int, int]
"""(document, start, end): characters start to end (excluded) of the document's text."""


@dataclass(frozen=True, slots=True)
class SpanScores:
    """One question's character-span recall, precision and IoU (Chroma's definitions)."""

    recall: float
    precision: float | None
    """None when nothing was retrieved (no characters to divide by)."""
    iou: float


def _spans(value: object, what: str) -> list[Span]:
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise MetricsError(
            f"{what}: expected a list of (document, start, end) spans, found {type(value).__name__}"
        )
    spans: list[Span] = []
    for i, item in enumerate(value):
        ok = isinstance(item, tuple | list) and len(item) == 3
        if ok:
            doc, start, end = item
            ok = (
                isinstance(doc, str)
                and all(isinstance(x, int) and not isinstance(x, bool) for x in (start, end))
                and 0 <= start <= end
            )
        if not ok:
            raise MetricsError(
                f"{what}[{i}]: expected (document, start, end) with 0 <= start <= end, "
                f"found {item!r}"
            )
        spans.append((doc, start, end))
    return spans


def _union(ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted, disjoint ranges covering the same characters."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if start >= end:
            continue
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def _covered(start: int, end: int, union: Sequence[tuple[int, int]]) -> int:
    """How many characters of start..end the disjoint `union` covers."""
    return sum(max(0, min(end, e) - max(start, s)) for s, e in union)


def _unions_by_doc(spans: Iterable[Span]) -> dict[str, list[tuple[int, int]]]:
    by_doc: dict[str, list[tuple[int, int]]] = {}
    for doc, start, end in spans:
        by_doc.setdefault(doc, []).append((start, end))
    return {doc: _union(ranges) for doc, ranges in by_doc.items()}


def span_metrics(retrieved: Sequence[Span], evidence: Sequence[Span]) -> SpanScores | None:
    """Recall, precision and IoU of the retrieved passages' spans (the top k, in any order)
    against the evidence spans, as Chroma defines them (see the module docstring); None
    when the evidence holds no character (nothing to recall)."""
    chunks = _spans(retrieved, "retrieved")
    refs = _spans(evidence, "evidence")
    evidence_length = sum(end - start for _, start, end in refs)
    if evidence_length == 0:
        return None
    retrieved_by_doc = _unions_by_doc(chunks)
    evidence_by_doc = _unions_by_doc(refs)
    # The union of every (passage, evidence) intersection: the evidence's union covered by
    # the passages' union, document by document.
    found = sum(
        _covered(start, end, retrieved_by_doc.get(doc, ()))
        for doc, ranges in evidence_by_doc.items()
        for start, end in ranges
    )
    # Each evidence span's characters no passage covers (spans counted one by one).
    unused = sum(
        (end - start) - _covered(start, end, retrieved_by_doc.get(doc, ()))
        for doc, start, end in refs
    )
    retrieved_length = sum(end - start for _, start, end in chunks)
    return SpanScores(
        recall=found / evidence_length,
        precision=found / retrieved_length if retrieved_length else None,
        iou=found / (retrieved_length + unused),
    )


def _solid(text: str | None, start: int, end: int) -> int:
    """The characters of start..end that count: all, or those not whitespace."""
    if text is None:
        return end - start
    part = text[start:end]
    return len(part) - sum(1 for ch in part if ch.isspace())


def span_evidence_recall(
    retrieved: Sequence[Span],
    evidence: Sequence[Span],
    *,
    soft_threshold: float = 0.8,
    texts: Mapping[str, str] | None = None,
) -> tuple[float, float] | None:
    """(soft, strict): the share of evidence spans of which the retrieved passages together
    cover at least `soft_threshold` of the characters, and all of them; None without
    evidence. With `texts` (document id -> text), whitespace is not counted. A span with
    no character to count is covered."""
    if (
        isinstance(soft_threshold, bool)
        or not isinstance(soft_threshold, int | float)
        or not 0.0 <= soft_threshold <= 1.0  # also rejects NaN
    ):
        raise MetricsError(
            f"soft_threshold: expected a number between 0 and 1, found {soft_threshold!r}"
        )
    chunks = _spans(retrieved, "retrieved")
    refs = _spans(evidence, "evidence")
    if not refs:
        return None
    retrieved_by_doc = _unions_by_doc(chunks)
    soft = strict = 0
    for doc, start, end in refs:
        text = texts.get(doc) if texts is not None else None
        length = _solid(text, start, end)
        covered = sum(
            _solid(text, max(start, s), min(end, e))
            for s, e in retrieved_by_doc.get(doc, ())
            if s < end and start < e
        )
        if covered == length:
            strict += 1
        if covered >= soft_threshold * length:
            soft += 1
    return soft / len(refs), strict / len(refs)
