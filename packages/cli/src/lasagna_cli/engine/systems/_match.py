"""Retrieved items mapped to the benchmark's corpus, so any system's ranking is scored by the
same judgments as the built-in retriever's.

An item is, in this order: one of its ids that the corpus has (a string item is tried as
an id first); else its text, matched to a corpus passage with the same words (whitespace is
ignored; a BEIR text "title\n\nbody" also matches by its body alone, either way round);
else unknown. An
unknown item keeps its place in the ranking and is relevant to nothing, so a system that
re-chunks the documents, or returns passages the benchmark does not have, is scored as
retrieving something not judged relevant - exactly what trec_eval does with an unjudged id.
A document that comes back twice counts once, at its first place.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lasagna_cli.engine.systems._output import Retrieved

UNMATCHED_PREFIX = "unmatched:"


def _words(text: str) -> str:
    return " ".join(text.split())


class CorpusMatcher:
    """Finds the corpus document a retrieved item is."""

    def __init__(self, corpus: Mapping[str, str], *, titled: bool = False) -> None:
        self._corpus = corpus
        self._by_text: dict[str, str] = {}
        for doc_id, text in corpus.items():
            self._by_text.setdefault(_words(text), doc_id)
        if titled:  # BEIR texts are "title\n\nbody": a system may hold the body alone
            for doc_id, text in corpus.items():
                _title, sep, body = text.partition("\n\n")
                if sep and body.strip():
                    self._by_text.setdefault(_words(body), doc_id)

    def doc_id(self, item: Retrieved) -> str | None:
        for candidate in item.ids:
            if candidate in self._corpus:
                return candidate
        if item.text is None:
            return None
        found = self._by_text.get(_words(item.text))
        if found is None:
            _title, sep, body = item.text.partition("\n\n")
            if sep and body.strip():
                found = self._by_text.get(_words(body))
        return found

    def text(self, doc_id: str) -> str:
        return self._corpus[doc_id]


@dataclass
class MatchedRanking:
    ids: list[str] = field(default_factory=list)
    """Corpus ids, with `unmatched:<12 hex>` standing in for items the corpus lacks."""
    texts: list[str] = field(default_factory=list)
    """The passage texts at each rank (the item's own text when it is unmatched)."""
    unmatched: list[dict[str, Any]] = field(default_factory=list)
    duplicates: int = 0


def match_ranking(items: Sequence[Retrieved], matcher: CorpusMatcher) -> MatchedRanking:
    found = MatchedRanking()
    seen: set[str] = set()
    for item in items:
        doc_id = matcher.doc_id(item)
        matched = doc_id is not None
        if doc_id is not None:
            text = matcher.text(doc_id)
        else:
            key = item.text if item.text is not None else "\x00".join(item.ids)
            doc_id = UNMATCHED_PREFIX + hashlib.sha256(key.encode()).hexdigest()[:12]
            text = item.text or ""
        if doc_id in seen:
            found.duplicates += 1
            continue
        seen.add(doc_id)
        if not matched:
            found.unmatched.append({"rank": len(found.ids) + 1, "id": doc_id, "given": item.shown})
        found.ids.append(doc_id)
        found.texts.append(text)
    return found
