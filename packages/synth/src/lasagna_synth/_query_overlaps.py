"""The word overlaps of a few passages known in advance (a plan's multihop firsts and
unanswerable sources) with every passage, in plain Python: what a dry run needs, without
importing numpy (a large share of its memory and time).

Words are those of `_overlap` (distinct lowercase alphanumeric words of 4+ characters), and
the answers are those of a full `WordIndex`, ties in corpus order. The counts are summed a
whole row at a time: each query gets a field of a few bytes in one big integer, each word
the integer with a 1 in the field of every query holding it, and a passage's row is the sum
of its words' integers, one C addition per word. No field overflows (none counts past its
query's own number of words), so each field ends as that query's overlap with the passage.
A query's counts, one byte each, are then searched by bytes methods (translate, index), not
by a loop over thousands of Python integers.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from itertools import islice

from lasagna_synth._corpus import Passage
from lasagna_synth._overlap import word_keys, word_runs


class QueryOverlaps:
    """For each passage of `queries`: the words it shares with every passage."""

    def __init__(self, passages: Sequence[Passage], queries: Iterable[int]) -> None:
        order = sorted(set(queries))
        words = [word_keys(passages[q].text) for q in order]
        width = next(b for b in (1, 2, 4) if max(map(len, words), default=0) < 256**b)
        code = next(c for c in "BHIL" if array(c).itemsize == width)
        units = [1 << (8 * width * slot) for slot in range(len(order))]
        masks: dict[bytes, int] = {}
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
        # one byte a count (the common case) stays a bytearray, searched by its C methods;
        # wider counts go to an array
        self._rows: bytearray | array[int] = rows if width == 1 else array(code, rows)
        self._slots = {q: slot for slot, q in enumerate(order)}
        self.size = len(passages)

    def _column(self, query: int) -> bytearray | array[int]:
        """Query `query`'s overlap with every passage, in corpus order."""
        return self._rows[self._slots[query] :: len(self._slots)]

    def best_outside(self, passage: int, start: int, end: int) -> int:
        """As `WordIndex.best_outside`: the first maximum outside [start, end)."""
        column = self._column(passage)
        before, after = column[:start], column[end:]
        high_before, high_after = _highest(before), _highest(after)
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
        found: list[int] = []
        value = max(_highest(column[:passage]), _highest(column[passage + 1 :]))
        while len(found) < k:  # every count is >= 0: this ends by value 0 at the latest
            others = (i for i in _positions(column, value) if i != passage)
            found.extend(islice(others, k - len(found)))
            value -= 1
        return found


# _BELOW[t]: every byte under t, which `bytes.translate` deletes to keep those >= t.
_BELOW = [bytes(range(t)) for t in range(257)]


def _highest(counts: bytearray | array[int]) -> int:
    """The largest count, -1 for none. A bytearray's by a binary search of translate calls,
    each keeping the bytes >= a bound: faster than max() over thousands of bytes."""
    if not isinstance(counts, bytearray):
        return max(counts, default=-1)
    if not counts:
        return -1
    low, high = 0, 255  # the largest is in [low, high]
    while low < high:
        middle = (low + high + 1) // 2
        if counts.translate(None, _BELOW[middle]):
            low = middle
        else:
            high = middle - 1
    return low


def _positions(counts: bytearray | array[int], value: int) -> Iterator[int]:
    """Where `counts` holds `value`, in order."""
    if value not in counts:
        return
    at = counts.index(value)
    while True:
        yield at
        try:
            at = counts.index(value, at + 1)
        except ValueError:
            return
