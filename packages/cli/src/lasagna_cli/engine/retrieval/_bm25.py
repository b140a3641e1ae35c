"""BM25 retrieval over a sparse matrix: the `--profile speed` retriever, needing no model.

The index is one term-major sparse matrix of precomputed BM25 weights (one row per term, one
column per document). Scoring a query adds the rows of its terms (their posting lists) into
a dense score array with numpy, touching only the documents that share a term with it; no
Python loop runs over the corpus at query time. That is where the speed over rank-bm25
(which loops over every document for every query term) comes from. The most frequent terms
(in at least 1/16 of the documents) get a dense row instead (below, "the index's matrix"),
added to the scores as one contiguous array instead of scattering a long posting list. A query
whose postings cover much of the corpus finds its top k without sorting every score: a
strided sample of the scores gives a value that at least k documents reach, and only the
documents at or above it are ranked exactly.

Text analysis, recorded by `describe()` with every result: lower-cased, tokens are runs of
two or more word characters (`\\w\\w+`, Unicode-aware, so Arabic works too), Lucene's 33
English stopwords removed, and Snowball stemming through PyStemmer (English by default;
any Snowball language, or none).

Scoring variants:
- `lucene` (default): idf = ln(1 + (N - df + 0.5) / (df + 0.5)), tf part
  tf / (tf + k1 (1 - b + b dl / avgdl)), as Lucene and bm25s score.
- `okapi`: exactly rank-bm25's BM25Okapi (idf = ln((N - df + 0.5) / (df + 0.5)), negative
  idf replaced by 0.25 x the mean idf, tf part multiplied by k1 + 1), so the two can be
  compared number for number.
A term repeated in the query counts once per occurrence, as in both references.
Results are best first; equal scores are ordered by corpus position; documents that share
no term with the query are not returned.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any, Literal

from lasagna_cli.engine._errors import EngineUsageError, did_you_mean

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

Variant = Literal["lucene", "okapi"]
Progress = Callable[[int, int], None] | None

# Lucene's default English stop set (EnglishAnalyzer.ENGLISH_STOP_WORDS_SET).
LUCENE_ENGLISH_STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their "  # noqa: SIM905
    "then there these they this to was will with".split()
)
TOKEN_PATTERN = r"\w\w+"
_TOKEN = re.compile(TOKEN_PATTERN)


class RetrievalError(EngineUsageError, ValueError):
    """Bad retriever settings or input; the message names the setting and the fix."""


def _pystemmer_version() -> str:
    try:
        return version("PyStemmer")
    except PackageNotFoundError:  # pragma: no cover - a dependency of lasagna-cli
        return "unknown"


def stemmer_languages() -> list[str]:
    """The Snowball languages PyStemmer offers."""
    import Stemmer  # type: ignore[import-not-found]

    return sorted(Stemmer.algorithms())


@dataclass(frozen=True)
class Analyzer:
    """Turns text into index terms; the same for documents and queries."""

    stemmer: str = "english"
    stopwords: Literal["lucene-english", "none"] = "lucene-english"

    def __post_init__(self) -> None:
        if self.stemmer != "none":
            languages = stemmer_languages()
            if self.stemmer not in languages:
                raise RetrievalError(
                    f'unknown stemmer "{self.stemmer}"{did_you_mean(self.stemmer, languages)}; '
                    f'use "none" or one of {", ".join(languages)}'
                )
        if self.stopwords not in ("lucene-english", "none"):
            raise RetrievalError(
                f'unknown stopwords "{self.stopwords}"; use "lucene-english" or "none"'
            )

    def describe(self) -> dict[str, str]:
        return {
            "tokenizer": f"lowercase, regex {TOKEN_PATTERN} (unicode)",
            "stopwords": "lucene-english-33" if self.stopwords == "lucene-english" else "none",
            "stemmer": "none"
            if self.stemmer == "none"
            else f"snowball-{self.stemmer} (PyStemmer {_pystemmer_version()})",
        }

    def term_mapper(self) -> _TermMapper:
        return _TermMapper(self)


class _TermMapper:
    """Words to terms, each distinct word analysed once (stemming is the slow part)."""

    def __init__(self, analyzer: Analyzer) -> None:
        self._stop = (
            LUCENE_ENGLISH_STOPWORDS if analyzer.stopwords == "lucene-english" else frozenset()
        )
        self._stem: Any = None
        if analyzer.stemmer != "none":
            import Stemmer

            self._stem = Stemmer.Stemmer(analyzer.stemmer).stemWord
        self._cache: dict[str, str | None] = {}

    def terms(self, text: str) -> list[str]:
        cache = self._cache
        out: list[str] = []
        for word in _TOKEN.findall(text.lower()):
            term = cache.get(word, "")
            if term == "":
                term = None if word in self._stop else (self._stem(word) if self._stem else word)
                cache[word] = term
            if term is not None:
                out.append(term)
        return out

    def term_ids(
        self, texts: Sequence[str], vocabulary: dict[str, int], on_progress: Progress
    ) -> tuple[Any, Any]:
        """The texts' term ids in order (new terms numbered in `vocabulary` as they occur)
        and each text's count of them; Python runs only for a word not seen before."""
        import numpy as np

        ids: dict[str, int] = {}  # word -> its term id, -1 for a stopword
        found: list[int] = []  # extended in C (`map`); faster than an array("q")
        known, words_in = ids.__getitem__, []
        for i, text in enumerate(texts):
            words = _TOKEN.findall(text.lower())
            words_in.append(len(words))
            before = len(found)
            try:
                found.extend(map(known, words))
            except KeyError:  # a new word: number it, then look the text up again
                del found[before:]
                for word in words:
                    if word not in ids:
                        term = self.terms(word)
                        ids[word] = vocabulary.setdefault(term[0], len(vocabulary)) if term else -1
                found.extend(map(known, words))
            if on_progress is not None and i % 2000 == 1999:
                on_progress(i + 1, len(texts))
        every = np.array(found, dtype=np.int64)
        found.clear()  # one copy of the ids at a time: the peak memory of a build
        keep = every >= 0
        term_ids, kept = every[keep], np.cumsum(keep)
        del every, keep
        ends = np.cumsum(np.array(words_in, dtype=np.int64))
        upto = kept[np.maximum(ends - 1, 0)] if len(kept) else np.zeros(len(ends), np.int64)
        return term_ids, np.diff(np.where(ends > 0, upto, 0), prepend=0)


class BM25Index:
    """A BM25 index over a fixed corpus. Build it with `BM25Index.build`."""

    def __init__(
        self,
        doc_ids: list[str],
        vocabulary: dict[str, int],
        weights: TermMatrix,
        analyzer: Analyzer,
        k1: float,
        b: float,
        variant: Variant,
    ) -> None:
        self._doc_ids = doc_ids
        self._vocabulary = vocabulary
        # terms x documents, and term id -> its row over all documents for the most frequent
        self._weights, self._dense = dense_rows(weights, len(doc_ids))
        self._analyzer = analyzer
        self._mapper = analyzer.term_mapper()
        self.k1 = k1
        self.b = b
        self.variant: Variant = variant

    @classmethod
    def build(
        cls,
        doc_ids: Sequence[str],
        texts: Sequence[str],
        *,
        k1: float = 1.5,
        b: float = 0.75,
        variant: Variant = "lucene",
        stemmer: str = "english",
        stopwords: Literal["lucene-english", "none"] = "lucene-english",
        on_progress: Progress = None,
    ) -> BM25Index:
        """Index `texts`, named by `doc_ids` (unique, same length). `on_progress(done,
        total)` is called as the texts are analysed (most of the time it takes), every
        2,000 of them and at the end."""
        import numpy as np

        if len(doc_ids) != len(texts):
            raise RetrievalError(
                f"doc_ids has {len(doc_ids)} items but texts has {len(texts)}; they pair up"
            )
        if len(set(doc_ids)) != len(doc_ids):
            raise RetrievalError("doc_ids must be unique; a document id appears twice")
        if not k1 >= 0 or not 0 <= b <= 1:
            raise RetrievalError(f"BM25 needs k1 >= 0 and 0 <= b <= 1; got k1={k1}, b={b}")
        if variant not in ("lucene", "okapi"):
            raise RetrievalError(f'unknown BM25 variant "{variant}"; use "lucene" or "okapi"')
        analyzer = Analyzer(stemmer=stemmer, stopwords=stopwords)
        mapper = analyzer.term_mapper()

        vocabulary: dict[str, int] = {}
        term_ids, lengths = mapper.term_ids(texts, vocabulary, on_progress)
        if on_progress is not None:
            on_progress(len(texts), len(texts))
        n_docs, n_terms = len(texts), len(vocabulary)
        tf = TermMatrix.count(term_ids, lengths, n_terms)
        del term_ids
        df = np.diff(tf.indptr).astype(np.float64)
        idf = _idf(df, n_docs, variant)
        avgdl = float(lengths.sum()) / n_docs if n_docs else 0.0
        norm = k1 * (1.0 - b + b * lengths / avgdl) if avgdl > 0 else np.full(n_docs, k1)
        freq = tf.data
        doc_of_entry = tf.indices
        scale = (k1 + 1.0) if variant == "okapi" else 1.0
        tf.data = np.repeat(idf, np.diff(tf.indptr)) * freq * scale / (freq + norm[doc_of_entry])
        return cls(list(doc_ids), vocabulary, tf, analyzer, k1, b, variant)

    def __len__(self) -> int:
        return len(self._doc_ids)

    def describe(self) -> dict[str, Any]:
        """Everything that decides the rankings, recorded with the results."""
        return {
            "method": "bm25",
            "variant": self.variant,
            "k1": self.k1,
            "b": self.b,
            **self._analyzer.describe(),
            "implementation": "lasagna BM25Index (numpy, term-major CSR)",
            "documents": len(self._doc_ids),
        }

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        """The `k` best documents for `query`, best first, as (doc_id, score)."""
        return self.search_many([query], k)[0]

    def search_many(
        self, queries: Sequence[str], k: int, *, seconds: list[float] | None = None
    ) -> list[list[tuple[str, float]]]:
        """`search` for each query, in order; each query's time is appended to `seconds`."""
        import time

        import numpy as np

        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise RetrievalError(f"k must be a whole number >= 1, got {k!r}")
        weights = self._weights
        indptr, indices, data = weights.indptr, weights.indices, weights.data
        n_docs = len(self._doc_ids)
        scores = np.zeros(n_docs, dtype=np.float64)  # reused: only touched entries are reset
        ids = self._doc_ids
        dense = self._dense
        results: list[list[tuple[str, float]]] = []
        clock = time.perf_counter
        for query in queries:
            started = clock()
            terms: dict[int, int] = {}
            for term in self._mapper.terms(query):
                term_id = self._vocabulary.get(term)
                if term_id is not None:
                    terms[term_id] = terms.get(term_id, 0) + 1
            if not terms:
                results.append([])
                if seconds is not None:
                    seconds.append(clock() - started)
                continue
            postings = 0
            # Sorted term ids: the sum runs in one fixed order, so scores are reproducible. A
            # dense row adds 0.0 to the documents without its term: the same sums exactly.
            for term_id in sorted(terms):
                lo, hi = indptr[term_id], indptr[term_id + 1]
                row = dense.get(term_id)
                if row is not None:
                    scores += row if terms[term_id] == 1 else terms[term_id] * row
                elif terms[term_id] == 1:
                    scores[indices[lo:hi]] += data[lo:hi]
                else:  # a repeated query term counts once per occurrence
                    scores[indices[lo:hi]] += terms[term_id] * data[lo:hi]
                postings += hi - lo if row is None else n_docs
            if postings * 16 < n_docs:  # few matches: gather them rather than scan
                touched = np.unique(
                    np.concatenate([indices[indptr[t] : indptr[t + 1]] for t in terms])
                )
                values = scores[touched]
                scores[touched] = 0.0
            else:
                touched = np.flatnonzero(scores >= _floor_of_top(scores, k))
                values = scores[touched]
                scores.fill(0.0)
            keep = values > 0
            found = _top_k(touched[keep], values[keep], k)
            results.append([(ids[d], s) for d, s in found])
            if seconds is not None:
                seconds.append(clock() - started)
        return results


def _idf(df: npt.NDArray[np.float64], n_docs: int, variant: Variant) -> npt.NDArray[np.float64]:
    import numpy as np

    if variant == "lucene":
        return np.log1p((n_docs - df + 0.5) / (df + 0.5))
    idf = np.log(n_docs - df + 0.5) - np.log(df + 0.5)
    if len(idf):
        # rank-bm25: a term in more than half the documents gets epsilon x the mean idf. The
        # sum runs term by term in vocabulary order, as rank-bm25's does: numpy's pairwise
        # sum rounds otherwise, and a mean near 0 could then change sign.
        idf[idf < 0] = 0.25 * (sum(idf.tolist()) / len(idf))
    return idf


def _floor_of_top(scores: npt.NDArray[np.float64], k: int) -> float:
    """A score that at least `k` documents reach (so every one of the top k does): the k-th
    highest of every 64th score, or 0 when that sample is too small."""
    import numpy as np

    sample = scores[:: max(1, min(64, len(scores) // (8 * k)))]
    if len(sample) < k:
        return 0.0
    return float(np.sort(sample)[len(sample) - k])


def _top_k(
    docs: npt.NDArray[np.int32], values: npt.NDArray[np.float64], k: int
) -> list[tuple[int, float]]:
    """The k highest values, ties broken by document position (`docs` ascending), without
    sorting them all.

    numpy's partition slows down by orders of magnitude when the k-th value sits in a large
    block of equal scores (short passages sharing one query term); sorting what reaches a
    sample's floor does not, and the tie block is cut by position rather than sorted."""
    import numpy as np

    if len(values) > k:
        kth = np.sort(values[values >= _floor_of_top(values, k)])[-k]
        above = np.flatnonzero(values > kth)
        tied = np.flatnonzero(values == kth)[: k - len(above)]
        chosen = np.sort(np.concatenate((above, tied))) if len(above) else tied  # disjoint
        docs, values = docs[chosen], values[chosen]
    order = np.lexsort((docs, -values))[:k]
    return list(zip(docs[order].tolist(), values[order].tolist(), strict=True))


# -- the index's matrix -----------------------------------------------------------------------
#
# The BM25 index's matrix: term-major sparse rows of per-document weights, counted from
# the documents' term ids with numpy alone, and dense rows for the most frequent terms.
#
# A term in at least 1/16 of the documents is scored faster from a dense row over all the
# documents (added as one contiguous array) than from its posting list (scattered); its
# postings then leave the sparse matrix, and the dense rows together take no more memory than
# the sparse matrix did.


class TermMatrix:
    """Term-major compressed sparse rows: the documents of term t are
    `indices[indptr[t]:indptr[t+1]]` (ascending), with their values in `data`. numpy alone
    builds it (scipy.sparse would be a heavy install for this one use)."""

    def __init__(self, indptr: Any, indices: Any, data: Any) -> None:
        self.indptr, self.indices, self.data = indptr, indices, data

    @classmethod
    def count(cls, term_ids: Any, lengths: Any, n_terms: int) -> TermMatrix:
        """The frequency of each term in each document, from the documents' term ids in
        order (`lengths[d]` of them for document d)."""
        import numpy as np

        n_docs = len(lengths)
        docs = np.repeat(np.arange(n_docs, dtype=np.int64), lengths)
        # One key per (term, document): sorting groups a term's documents, ascending, and
        # puts a document's repeats of a term side by side (sorted in place: np.unique
        # would be much slower here).
        keys = term_ids * max(n_docs, 1) + docs
        keys.sort()
        starts = np.flatnonzero(np.diff(keys)) + 1 if len(keys) else np.zeros(0, np.int64)
        starts = np.concatenate(([0], starts)) if len(keys) else starts
        freq = np.diff(np.append(starts, len(keys)))
        keys = keys[starts]
        terms = keys // max(n_docs, 1)
        indptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(np.bincount(terms, minlength=n_terms), out=indptr[1:])
        indices = (keys % max(n_docs, 1)).astype(np.int32)
        return cls(indptr, indices, freq.astype(np.float64))


def dense_rows(
    weights: TermMatrix, n_docs: int
) -> tuple[TermMatrix, dict[int, npt.NDArray[np.float64]]]:
    """Dense rows for the terms in at least 1/16 of the documents, most frequent first,
    while they take no more memory than the sparse matrix, and the matrix without them."""
    import numpy as np

    df = np.diff(weights.indptr)
    budget = weights.data.nbytes + weights.indices.nbytes
    rows: dict[int, npt.NDArray[np.float64]] = {}
    for term_id in np.argsort(-df, kind="stable").tolist():
        if df[term_id] * 16 < n_docs or (len(rows) + 1) * n_docs * 8 > budget:
            break
        lo, hi = weights.indptr[term_id], weights.indptr[term_id + 1]
        row = np.zeros(n_docs, dtype=np.float64)
        row[weights.indices[lo:hi]] = weights.data[lo:hi]
        rows[term_id] = row
    if not rows:
        return weights, rows
    kept = np.repeat(~np.isin(np.arange(len(df)), list(rows)), df)
    df[list(rows)] = 0
    indptr = np.concatenate(([0], np.cumsum(df)))
    return TermMatrix(indptr, weights.indices[kept], weights.data[kept]), rows
