"""The plan's word index and its multihop partners, computed the first time they are asked
for, not while planning: a run's first calls then go out before any overlap is counted.

A multihop question's second passage is the passage of another document sharing the most
words with its first (ties to corpus order). The full index (a run builds it beside its first
calls, for the unanswerable checks too) and the overlaps of the passages the plan asks about
(`QueryOverlaps`, what a dry run computes) give the same partner; whichever exists answers.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping

from lasagna_synth._corpus import Passage
from lasagna_synth._overlap import WordIndex
from lasagna_synth._query_overlaps import QueryOverlaps


class LazyIndex:
    """The full word index, built once on first use; and the overlaps of `queries`
    (multihop firsts, unanswerable sources), computed when one of them is asked about
    before the full index exists."""

    def __init__(self, passages: tuple[Passage, ...], queries: Iterable[int] = ()) -> None:
        self._passages = passages
        self._index: WordIndex | None = None
        self._of_queries: QueryOverlaps | None = None
        self._lock = threading.Lock()  # a thread may ask while a run's loop builds one
        self.queries = frozenset(queries)

    @property
    def built(self) -> bool:
        """Whether the full index exists."""
        return self._index is not None

    def get(self) -> WordIndex:
        with self._lock:
            if self._index is None:
                self._index = WordIndex(self._passages)
            return self._index

    async def build_soon(self) -> WordIndex:
        """The full index, built a slice at a time in the running event loop (see
        `WordIndex.build_soon`), unless it is built already."""
        if self._index is None:
            index = await WordIndex.build_soon(self._passages)
            with self._lock:
                if self._index is None:
                    self._index = index
        return self._index

    def for_passage(self, at: int) -> WordIndex | QueryOverlaps:
        """What answers `best_outside` and `nearest` for passage `at`."""
        if self._index is None and at in self.queries:
            with self._lock:
                if self._index is None:
                    if self._of_queries is None:
                        self._of_queries = QueryOverlaps(self._passages, self.queries)
                    return self._of_queries
        return self.get()


class Partners:
    """The multihop partner of each drawn passage, chosen on first request and kept."""

    def __init__(
        self,
        passages: tuple[Passage, ...],
        spans: Mapping[str, tuple[int, int]],
        index: LazyIndex,
    ) -> None:
        self._passages = passages
        self._spans = spans  # each document's passages, as [start, end) in corpus order
        self._index = index
        self._chosen: dict[int, Passage] = {}

    def of(self, at: int) -> Passage:
        """The passage of another document sharing the most words with passage `at`."""
        partner = self._chosen.get(at)
        if partner is None:
            start, end = self._spans[self._passages[at].doc_id]
            best = self._index.for_passage(at).best_outside(at, start, end)
            partner = self._chosen[at] = self._passages[best]
        return partner
