"""The word-overlap index behind multihop partners and the unanswerable check's neighbours.

Words here are the distinct lowercase alphanumeric words of 4 or more characters. The index
is an inverted file: for each word, the passages that contain it, in corpus order. The
overlap of a query with every passage is then one `bincount` over the query's posting
lists, in numpy: a sparse product computed in C, never a comparison of pairs in Python.
(scikit-learn would build the same counts, but importing it costs 2.6 s and 130 MB here,
more than the whole dry run is allowed; numpy does the arithmetic in a fraction of that.)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import chain
from typing import TYPE_CHECKING, Any

from lasagna_synth._corpus import Passage

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

_WORD = re.compile(r"[^\W_]{4,}")


def overlap_words(text: str) -> set[str]:
    """The distinct lowercase alphanumeric words of 4 or more characters in `text`."""
    return set(_WORD.findall(text.lower()))


class WordIndex:
    """Passages by the words they contain; ties are always broken in corpus order."""

    def __init__(self, passages: Sequence[Passage]) -> None:
        import numpy as np

        vocabulary: dict[str, int] = {}
        add = vocabulary.setdefault
        per_passage = [
            [add(word, len(vocabulary)) for word in overlap_words(p.text)] for p in passages
        ]
        lengths = np.fromiter(map(len, per_passage), dtype=np.int64, count=len(per_passage))
        total = int(lengths.sum())
        word_ids = np.fromiter(chain.from_iterable(per_passage), dtype=np.int32, count=total)
        del per_passage
        owners = np.repeat(np.arange(len(passages), dtype=np.int32), lengths)
        # Stable sort by word: each posting list keeps corpus order.
        order = np.argsort(word_ids, kind="stable")
        self._postings: NDArray[np.int32] = owners[order]
        self._starts: NDArray[np.int64] = np.zeros(len(vocabulary) + 1, dtype=np.int64)
        np.cumsum(np.bincount(word_ids, minlength=len(vocabulary)), out=self._starts[1:])
        self._passage_starts: NDArray[np.int64] = np.zeros(len(passages) + 1, dtype=np.int64)
        np.cumsum(lengths, out=self._passage_starts[1:])
        self._word_ids = word_ids
        self._vocabulary = vocabulary
        self.size = len(passages)

    def _scores(self, ids: Any) -> NDArray[np.int64]:
        import numpy as np

        if len(ids) == 0:
            return np.zeros(self.size, dtype=np.int64)
        starts, ends = self._starts[ids], self._starts[np.asarray(ids) + 1]
        hits = np.concatenate([self._postings[s:e] for s, e in zip(starts, ends, strict=True)])
        return np.bincount(hits, minlength=self.size)

    def passage_scores(self, passage: int) -> NDArray[np.int64]:
        """Words shared by passage `passage` with every passage (itself included)."""
        start, end = self._passage_starts[passage], self._passage_starts[passage + 1]
        return self._scores(self._word_ids[start:end])

    def text_scores(self, text: str) -> NDArray[np.int64]:
        """Words shared by `text` with every passage."""
        ids = [self._vocabulary[w] for w in overlap_words(text) if w in self._vocabulary]
        return self._scores(ids)

    def best_outside(self, passage: int, start: int, end: int) -> int:
        """The passage sharing the most words with `passage`, outside [start, end)."""
        scores = self.passage_scores(passage)
        scores[start:end] = -1
        return int(scores.argmax())  # the first maximum: ties go to corpus order

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
