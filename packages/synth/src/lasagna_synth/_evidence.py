"""Evidence as spans of the source documents: where a question's passages came from.

A span is (document id, start, end, the sha256 of the document's text): character offsets
into the text as the loader read it. Chunking-independent, so the same questions judge any
chunking: a passage is relevant when it overlaps a span (`overlaps`). `synthesize` writes
the spans of every passage it wrote from; a row that has only passage texts is located in
the documents (`locate`): exactly, or with any run of whitespace standing for another (a
context copied out of a rendered page loses its line breaks).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class EvidenceSpan:
    """Characters `start` to `end` of document `doc`, whose text has sha256 `sha256`."""

    doc: str
    start: int
    end: int
    sha256: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The span as a row's `evidence` item holds it."""
        out: dict[str, Any] = {"doc": self.doc, "start": self.start, "end": self.end}
        if self.sha256:
            out["sha256"] = self.sha256
        return out

    def overlaps(self, doc: str, start: int, end: int) -> bool:
        """Whether characters `start` to `end` of `doc` share at least one with the span."""
        return doc == self.doc and start < self.end and self.start < end


def locate(text: str, documents: Mapping[str, str]) -> EvidenceSpan | None:
    """Where `text` first occurs in `documents` (corpus order), or None: exactly, else with
    any whitespace matching any whitespace."""
    needle = text.strip()
    if not needle:
        return None
    for doc, body in documents.items():
        at = body.find(needle)
        if at >= 0:
            return EvidenceSpan(doc, at, at + len(needle))
    words = needle.split()
    pattern = re.compile(r"\s+".join(re.escape(w) for w in words))
    for doc, body in documents.items():
        if words[0] not in body:
            continue
        found = pattern.search(body)
        if found is not None:
            return EvidenceSpan(doc, found.start(), found.end())
    return None


def relevant_passages(
    spans: Iterable[EvidenceSpan], passages: Mapping[str, tuple[str, int, int]]
) -> list[str]:
    """The ids of the passages (id -> (document, start, end)) that overlap any span, in
    passage order."""
    by_doc: dict[str, list[EvidenceSpan]] = {}
    for span in spans:
        by_doc.setdefault(span.doc, []).append(span)
    return [
        pid
        for pid, (doc, start, end) in passages.items()
        if any(s.overlaps(doc, start, end) for s in by_doc.get(doc, ()))
    ]
