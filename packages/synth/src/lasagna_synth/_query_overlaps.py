"""The word overlaps of a few passages known in advance (a plan's multihop firsts and
unanswerable sources) with every passage, in plain Python: what a dry run needs, without
importing numpy (16 MB of its memory, a tenth of its time).

Words are those of `_overlap` (distinct lowercase alphanumeric words of 4+ characters), and
the answers are those of a full `WordIndex`, ties in corpus order. The counts are summed a
whole row at a time: each query gets a field of a few bytes in one big integer, each word
the integer with a 1 in the field of every query holding it, and a passage's row is the sum
of its words' integers, one C addition per word. No field overflows (none counts past its
query's own number of words), so each field ends as that query's overlap with the passage.
"""

from __future__ import annotations

import heapq
from array import array
from collections.abc import Iterable, Sequence
from itertools import chain, compress

from lasagna_synth._corpus import Passage
from lasagna_synth._overlap import overlap_words, word_runs


class QueryOverlaps:
    """For each passage of `queries`: the words it shares with every passage."""

    def __init__(self, passages: Sequence[Passage], queries: Iterable[int]) -> None:
        order = sorted(set(queries))
        words = [overlap_words(passages[q].text) for q in order]
        width = next(b for b in (1, 2, 4) if max(map(len, words), default=0) < 256**b)
        code = next(c for c in "BHIL" if array(c).itemsize == width)
        units = [1 << (8 * width * slot) for slot in range(len(order))]
        masks: dict[str, int] = {}
        for unit, held in zip(units, words, strict=True):
            for word in held:
                prior = masks.get(word)
                # a word of one query keeps that query's unit itself: no integer of its own
                masks[word] = unit if prior is None else prior + unit
        del words
        row_bytes = width * len(order)
        rows = bytearray(row_bytes * len(passages))
        keys = masks.keys()
        at = 0
        for passage in passages:
            # every word of `masks` has 4+ characters: the runs it holds are the words
            row = sum(map(masks.__getitem__, keys & word_runs(passage.text)))
            rows[at : at + row_bytes] = row.to_bytes(row_bytes, "little")
            at += row_bytes
        self._rows = array(code, rows)
        self._slots = {q: slot for slot, q in enumerate(order)}
        self.size = len(passages)

    def _column(self, query: int) -> array[int]:
        """Query `query`'s overlap with every passage, in corpus order."""
        return self._rows[self._slots[query] :: len(self._slots)]

    def best_outside(self, passage: int, start: int, end: int) -> int:
        """As `WordIndex.best_outside`: the first maximum outside [start, end)."""
        column = self._column(passage)
        before, after = column[:start], column[end:]
        high_before = max(before, default=-1)
        high_after = max(after, default=-1)
        if high_before < 0 and high_after < 0:
            return 0  # nothing outside: `WordIndex` answers the first passage
        if high_before >= high_after:
            return before.index(high_before)
        return end + after.index(high_after)

    def nearest(self, passage: int, k: int) -> list[int]:
        """As `WordIndex.nearest`: the `k` best passages but `passage`, ties in corpus order."""
        column = self._column(passage)
        k = min(k, self.size - 1)
        if k <= 0:
            return []
        others = chain(column[:passage], column[passage + 1 :])
        kth = heapq.nlargest(k, others)[-1]
        kept = [i for i in compress(range(self.size), map(kth.__le__, column)) if i != passage]
        return sorted(kept, key=column.__getitem__, reverse=True)[:k]
