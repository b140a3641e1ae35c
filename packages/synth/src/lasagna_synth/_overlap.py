"""The word-overlap index behind multihop partners and the unanswerable check's neighbours.

Words here are the distinct lowercase alphanumeric words of 4 or more characters. The index
is an inverted file: for each word, the passages that contain it, in corpus order. The
overlap of a query with every passage is then one `bincount` over the query's posting
lists, in numpy: a sparse product computed in C, never a comparison of pairs in Python.
(scikit-learn would build the same counts, but importing it alone takes more memory than
the whole dry run may use; numpy does the same sums.)

Planning asks only about passages it knows in advance: a dry run answers those with
`_query_overlaps`, in plain Python, and builds no index.
"""

from __future__ import annotations

import re
import sys
from array import array
from collections import defaultdict
from collections.abc import Sequence
from itertools import count
from typing import TYPE_CHECKING, Any

from lasagna_synth._corpus import Passage

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

_WORD = re.compile(r"[^\W_]{4,}")
# ASCII text lower-cased with every byte that is not a letter or digit made a space: its
# split() is the maximal runs of [a-z0-9], of any length.
_RUNS = bytes(
    b if chr(b).isascii() and chr(b).isalnum() else 32
    for b in (c + 32 if 65 <= c <= 90 else c for c in range(256))
)
# The same for UTF-8 whose non-ASCII characters are all letters or digits: their bytes (all
# 128 or above) are kept, so a split() gives the maximal runs of letters and digits.
_RUNS_UTF8 = _RUNS[:128] + bytes(range(128, 256))
_ASCII = bytes(range(128))


def overlap_words(text: str) -> set[str]:
    """The distinct lowercase alphanumeric words of 4 or more characters in `text`: the
    rule, as a regex; `word_keys` gives the same words faster (a test holds them equal)."""
    return set(_WORD.findall(text.lower()))


def word_runs(text: str) -> list[bytes]:
    """Lowercase runs of `text`, UTF-8 encoded, whose 4+ character ones are
    `word_keys(text)`, for a caller that keeps only the words of a vocabulary: cut by a
    translate and a split (faster than the regex), once any non-ASCII character that is
    not a letter or digit (a dash, a quote) is made a space."""
    if text.isascii():
        return text.encode("ascii").translate(_RUNS).split()
    encoded = text.lower().encode("utf-8", "surrogatepass")
    # UTF-8 is self-synchronising: a character's bytes are found only where it is
    for char in set(encoded.translate(None, _ASCII).decode("utf-8", "surrogatepass")):
        if not char.isalnum():  # what the regex's [^\W_] is, for a non-ASCII character
            encoded = encoded.replace(char.encode("utf-8", "surrogatepass"), b" ")
    return encoded.translate(_RUNS_UTF8).split()


def word_keys(text: str) -> set[bytes]:
    """`overlap_words(text)`, UTF-8 encoded: the runs of `word_runs` of 4 or more
    characters (faster than the regex, whose words these are)."""
    runs = word_runs(text)
    if text.isascii():
        return {run for run in runs if len(run) > 3}
    # a non-ASCII character takes 2 to 4 bytes: characters are counted where a run has one
    return {run for run in runs if len(run) > 3 and (run.isascii() or len(run.decode()) > 3)}


class _Words:
    """Each passage's words (as `word_keys`) as ids, passage after passage."""

    def __init__(self) -> None:
        self.ids = array("i")
        self.lengths = array("q")
        # A new word gets the next id inside the dict lookup itself, in C.
        self.numbering: dict[bytes, int] = defaultdict(count().__next__)

    def add(self, text: str) -> None:
        kept = word_keys(text)
        self.ids.extend(map(self.numbering.__getitem__, kept))
        self.lengths.append(len(kept))


class WordIndex:
    """Passages by the words they contain; ties are always broken in corpus order."""

    def __init__(self, passages: Sequence[Passage]) -> None:
        words = _Words()
        for passage in passages:
            words.add(passage.text)
        self._build(passages, words)

    @classmethod
    async def build_soon(cls, passages: Sequence[Passage], slice_s: float = 0.001) -> WordIndex:
        """The full index, built in the running event loop a millisecond at a time, so that
        the loop keeps serving its calls meanwhile (longer slices slowed its calls);
        numpy's import and sort go to a thread, the sort releasing the GIL."""
        import asyncio
        from time import perf_counter

        words = _Words()
        due = perf_counter() + slice_s
        for passage in passages:
            words.add(passage.text)
            if perf_counter() > due:
                await asyncio.sleep(0)
                due = perf_counter() + slice_s
        index = cls.__new__(cls)
        await asyncio.to_thread(index._build, passages, words)
        return index

    def _build(self, passages: Sequence[Passage], words: _Words) -> None:
        import numpy as np

        vocabulary = dict(words.numbering)
        ids, lengths = words.ids, words.lengths
        del words.ids, words.lengths, words.numbering  # freed as soon as they are read
        # (word << 32 | passage) keys, sorted in place: by word, then passage, so each
        # posting list comes out in corpus order.
        keys = np.frombuffer(ids, dtype=np.int32).astype(np.int64)
        del ids
        keys <<= 32
        keys |= np.repeat(
            np.arange(len(passages), dtype=np.int64), np.frombuffer(lengths, dtype=np.int64)
        )
        keys.sort()
        # The same memory as (low, high) 32-bit halves: no temporary arrays.
        halves = keys.view(np.int32).reshape(-1, 2)
        low, high = (0, 1) if sys.byteorder == "little" else (1, 0)
        self._starts: NDArray[np.int64] = np.zeros(len(vocabulary) + 1, dtype=np.int64)
        np.cumsum(np.bincount(halves[:, high], minlength=len(vocabulary)), out=self._starts[1:])
        self._postings: NDArray[np.int32] = halves[:, low].copy()
        del keys, halves
        self._vocabulary = vocabulary
        self.size = len(passages)
        self._passages = passages

    def _scores(self, ids: Any) -> NDArray[np.int64]:
        import numpy as np

        if len(ids) == 0:
            return np.zeros(self.size, dtype=np.int64)
        ids = np.asarray(ids, dtype=np.int64)
        starts, ends = self._starts[ids], self._starts[ids + 1]
        sizes = ends - starts
        # the positions of every posting of every query word, without a Python loop
        offsets = np.repeat(starts - np.cumsum(sizes) + sizes, sizes)
        hits = self._postings[offsets + np.arange(int(sizes.sum()))]
        return np.bincount(hits, minlength=self.size)

    def passage_scores(self, passage: int) -> NDArray[np.int64]:
        """Words shared by passage `passage` with every passage (itself included)."""
        return self.text_scores(self._passages[passage].text)

    def text_scores(self, text: str) -> NDArray[np.int64]:
        """Words shared by `text` with every passage."""
        vocabulary = self._vocabulary
        return self._scores([vocabulary[w] for w in word_keys(text) if w in vocabulary])

    def best_outside(self, passage: int, start: int, end: int) -> int:
        """The passage sharing the most words with `passage`, outside [start, end)."""
        scores = self.passage_scores(passage)
        scores[start:end] = -1
        return int(scores.argmax())  # the first maximum: ties go to corpus order

    def nearest(self, passage: int, k: int) -> list[int]:
        """The `k` passages but `passage` sharing the most words with it, ties in corpus
        order."""
        return self.top(self.passage_scores(passage), k, passage)

    @staticmethod
    def top(scores: NDArray[np.int64], k: int, exclude: int) -> list[int]:
        """The `k` best passages by score, `exclude` left out, ties in corpus order."""
        import numpy as np

        scores = scores.copy()
        scores[exclude] = -1
        k = min(k, len(scores) - 1)
        if k <= 0:
            return []
        kth = np.partition(scores, len(scores) - k)[len(scores) - k]
        candidates = np.flatnonzero(scores >= kth)  # ascending passage order
        best = candidates[np.argsort(-scores[candidates], kind="stable")[:k]]
        return [int(i) for i in best]
