"""The BM25 index's matrix: term-major sparse rows of per-document weights, counted from
the documents' term ids with numpy alone, and dense rows for the most frequent terms.

A term in at least 1/16 of the documents is scored faster from a dense row over all the
documents (added as one contiguous array: 12 us over 100,000 documents) than from its
posting list (scattered: 250 us); its postings then leave the sparse matrix, and the dense
rows together take no more memory than the sparse matrix did.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


class TermMatrix:
    """Term-major compressed sparse rows: the documents of term t are
    `indices[indptr[t]:indptr[t+1]]` (ascending), with their values in `data`. numpy alone
    builds it (scipy.sparse would add 114 MB to the install for this)."""

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
        # would be ten times slower here).
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
