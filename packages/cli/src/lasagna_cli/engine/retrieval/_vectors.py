"""Dense retrieval in-process: a corpus's vectors, made once and kept, and the index that
searches them.

The vectors of a corpus are kept under the sha256 of (the corpus's ids and texts, the
embedder and its server, the dimensions asked for), in the folder the caller gives, so a
second run (or another setup on the same corpus) embeds nothing: OpenViking's
`skip_ingestion`, without the risk of a stale index. Every vector is unit length, so a
dot product is the cosine similarity.

The index is exact (one matrix product per block of queries, numpy) up to EXACT_LIMIT
passages, where it is faster than building a graph and gives the true top-k; above it,
usearch's HNSW graph (cosine, the extra `hnsw`), kept beside the vectors; without usearch
a large corpus is searched exactly too, only slower.
"""

from __future__ import annotations

import hashlib
import io
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lasagna_cli.engine._data import Corpus
from lasagna_cli.engine.records._store import write_bytes_atomic

if TYPE_CHECKING:
    from lasagna_judge import Embedder

#: Up to this many passages the index is exact (numpy); above, usearch's HNSW graph.
EXACT_LIMIT = 200_000
_BLOCK_SCORES = 1 << 24  # scores per matrix product (64 MB of float32): queries go in blocks

Ranking = list[tuple[str, float]]


@dataclass
class VectorFacts:
    """What a dense index cost and is, for records and reports."""

    embedder: str
    endpoint: str | None
    dimension: int
    index: str  # "exact", "hnsw" or the vector database's URL
    documents: int
    embedding_tokens: int = 0
    insertion_seconds: float = 0.0
    reused: bool = False

    def describe(self) -> dict[str, Any]:
        """What a task record holds of its index (what decides the ranking)."""
        return {
            "embedder": self.embedder,
            "endpoint": self.endpoint,
            "dimension": self.dimension,
            "index": self.index,
        }


def corpus_digest(corpus: Corpus) -> str:
    """The sha256 of a corpus's ids and texts, in order."""
    digest = hashlib.sha256()
    for doc_id, text in corpus.texts.items():
        digest.update(doc_id.encode("utf-8", "surrogatepass") + b"\0")
        digest.update(text.encode("utf-8", "surrogatepass") + b"\0")
    return digest.hexdigest()


def vectors_key(corpus: Corpus, embedder: Embedder, dimensions: int | None) -> str:
    identity = json.dumps(
        {
            "corpus": corpus_digest(corpus),
            "embedder": embedder.model,
            "endpoint": embedder.endpoint,
            "dimensions": dimensions,
            "normalised": True,
        },
        sort_keys=True,
    )
    return hashlib.sha256(identity.encode("utf-8")).hexdigest()


async def corpus_vectors(
    corpus: Corpus,
    embedder: Embedder,
    key: str,
    folder: Path | None,
    say: Any = lambda line: None,
    *,
    per_document: bool = False,
) -> tuple[Any, VectorFacts]:
    """The corpus's vectors (float32, one unit row per passage, in corpus order), read from
    `folder` when a run made them before, else embedded (and kept there). `per_document`:
    one embedding job per source document (OpenViking's per_file ingestion), the embedder's
    concurrency bounding how many run at once; the vectors are the same."""
    import numpy as np

    kept = folder / f"{key}.npy" if folder is not None else None
    if kept is not None and kept.is_file():
        try:
            vectors = np.load(kept, allow_pickle=False)
        except (OSError, ValueError):
            vectors = None  # a damaged file is made again
        if vectors is not None and vectors.shape[0] == len(corpus.texts):
            facts = VectorFacts(
                embedder.model, embedder.endpoint, int(vectors.shape[1]), "", len(vectors)
            )
            facts.reused = True
            embedder.dimension = embedder.dimension or facts.dimension
            return vectors, facts
    tokens_before = embedder.usage.input_tokens
    started = time.perf_counter()
    texts = list(corpus.texts.values())
    last = [0.0]

    def progress(done: int, total: int) -> None:
        now = time.perf_counter()
        if done == total or now - last[0] >= 5.0:
            last[0] = now
            say(f"embedding {total:,} passages with {embedder.model}: {done:,} done")

    if per_document and corpus.document_of:
        vectors = await _per_document(corpus, embedder, texts, progress)
    else:
        vectors = await embedder.embed(texts, on_progress=progress)
    seconds = time.perf_counter() - started
    if kept is not None:
        buffer = io.BytesIO()
        np.save(buffer, vectors, allow_pickle=False)
        write_bytes_atomic(kept, buffer.getvalue())
    facts = VectorFacts(
        embedder.model,
        embedder.endpoint,
        int(vectors.shape[1]) if vectors.size else int(embedder.dimension or 0),
        "",
        len(texts),
        embedding_tokens=embedder.usage.input_tokens - tokens_before,
        insertion_seconds=seconds,
    )
    return vectors, facts


async def _per_document(corpus: Corpus, embedder: Embedder, texts: list[str], progress: Any) -> Any:
    import asyncio

    import numpy as np

    rows: dict[str, list[int]] = {}
    for i, doc_id in enumerate(corpus.texts):
        rows.setdefault(corpus.document_of.get(doc_id, doc_id), []).append(i)
    done = [0]

    async def one(indices: list[int]) -> Any:
        vectors = await embedder.embed([texts[i] for i in indices])
        done[0] += len(indices)
        progress(done[0], len(texts))
        return vectors

    parts = await asyncio.gather(*(one(indices) for indices in rows.values()))
    vectors = np.zeros((len(texts), parts[0].shape[1] if parts else 0), dtype=np.float32)
    for indices, part in zip(rows.values(), parts, strict=True):
        vectors[indices] = part
    return vectors


class VectorIndex:
    """Top-k by cosine similarity over a corpus's unit vectors: exact, or HNSW when large."""

    def __init__(self, doc_ids: Sequence[str], vectors: Any, *, hnsw_path: Path | None = None):
        self._ids = list(doc_ids)
        self._vectors = vectors
        self._hnsw: Any = None
        self.kind = "exact" if len(self._ids) <= EXACT_LIMIT or not has_hnsw() else "hnsw"
        if self.kind == "hnsw":
            self._hnsw = _hnsw_index(vectors, hnsw_path)

    def __len__(self) -> int:
        return len(self._ids)

    def search_many(
        self, queries: Any, depth: int, *, seconds: list[float] | None = None
    ) -> list[Ranking]:
        """The `depth` best passages of each query vector, best first, with its time."""
        import numpy as np

        depth = min(depth, len(self._ids))
        if depth == 0 or len(queries) == 0:
            if seconds is not None:
                seconds.extend([0.0] * len(queries))
            return [[] for _ in range(len(queries))]
        results: list[Ranking] = []
        size = max(1, _BLOCK_SCORES // len(self._ids))
        for start in range(0, len(queries), size):
            block = queries[start : start + size]
            began = time.perf_counter()
            if self._hnsw is not None:
                matches = self._hnsw.search(block, depth)
                keys = np.asarray(matches.keys).reshape(len(block), -1)
                scores = 1.0 - np.asarray(matches.distances).reshape(len(block), -1)
            else:
                similarity = block @ self._vectors.T
                if depth < similarity.shape[1]:
                    part = np.argpartition(similarity, -depth, axis=1)[:, -depth:]
                else:
                    part = np.tile(np.arange(similarity.shape[1]), (len(block), 1))
                picked = np.take_along_axis(similarity, part, axis=1)
                # Best first; equal scores in corpus order, so a ranking is reproducible.
                order = np.lexsort((part, -picked), axis=1)
                keys = np.take_along_axis(part, order, axis=1)
                scores = np.take_along_axis(picked, order, axis=1)
            each = (time.perf_counter() - began) / len(block)
            for row_keys, row_scores in zip(keys.tolist(), scores.tolist(), strict=True):
                results.append(
                    [
                        (self._ids[k], float(s))
                        for k, s in zip(row_keys, row_scores, strict=True)
                        if k >= 0  # usearch pads a short result with -1
                    ]
                )
            if seconds is not None:
                seconds.extend([each] * len(block))
        return results


def has_hnsw() -> bool:
    """Whether usearch (the extra `hnsw`) is installed: without it, every index is exact."""
    import importlib.util

    return importlib.util.find_spec("usearch") is not None


def _hnsw_index(vectors: Any, path: Path | None) -> Any:
    import numpy as np
    from usearch.index import Index

    index = Index(ndim=int(vectors.shape[1]), metric="cos", dtype="f32")
    if path is not None and path.is_file():
        try:
            index.load(str(path))
            if len(index) == len(vectors):
                return index
        except (OSError, RuntimeError, ValueError):
            pass  # made again below
        index = Index(ndim=int(vectors.shape[1]), metric="cos", dtype="f32")
    index.add(np.arange(len(vectors), dtype=np.uint64), vectors)
    if path is not None:
        temporary = path.with_name(path.name + ".partial")
        index.save(str(temporary))
        temporary.replace(path)
    return index
