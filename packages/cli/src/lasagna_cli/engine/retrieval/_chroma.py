"""Dense retrieval in a vector database teams run as a server: Chroma, over its HTTP API
(v2), with the HTTP client lasagna already has (lasagna-judge's `HttpSender`, httpx2
underneath: its size cap, deadline and error kinds), so no client package is needed.

A collection named by the user is used as it is: its ids must be the benchmark's passage
ids, and its dimension must be the embedder's. Without a name, the collection is named
after the corpus and the embedder (`lasagna-<sha256 prefix>`), filled from the corpus's
vectors the first time, and found full (nothing embedded, nothing sent) afterwards.
"""

from __future__ import annotations

import json
import time
from typing import Any

from lasagna_cli.engine._errors import EngineError, EngineUsageError

_API = "/api/v2/tenants/default_tenant/databases/default_database"
_UPSERT_BATCH = 1000
_QUERY_BATCH = 100
_TIMEOUT = 120.0


class ChromaStore:
    """One Chroma collection: checked, filled when it is lasagna's own, queried."""

    def __init__(self, url: str, collection: str, *, owned: bool) -> None:
        self.url = url.rstrip("/")
        self.collection = collection
        self.owned = owned  # named by lasagna: it may be filled
        self._id: str | None = None
        self.dimension: int | None = None
        self.count = 0
        self.space = "cosine"
        self._session: Any = None

    async def __aenter__(self) -> ChromaStore:
        from lasagna_judge.http import HttpSender

        self._session = HttpSender(1)  # one request at a time, no proxy (trust_env off)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._session is not None:
            await self._session.aclose()

    async def _call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        from lasagna_judge.http import WireError, WireRequest
        from lasagna_metrics import parse_json

        assert self._session is not None
        data = b"" if body is None else json.dumps(body).encode()
        headers = [("Content-Type", "application/json")] if body is not None else []
        request = WireRequest(method, self.url + path, headers, data, _TIMEOUT, _TIMEOUT)
        try:
            reply = await self._session.send(request)
        except WireError as exc:
            if exc.kind in ("connect", "request"):
                raise EngineUsageError(
                    f"vector store {self.url}: cannot reach it ({exc}); start Chroma's server "
                    "(`chroma run --host 127.0.0.1 --port 8000`) or fix the store URL"
                ) from None
            raise EngineError(f"vector store {self.url}: {method} {path} failed ({exc})") from None
        try:
            return reply.status, parse_json(reply.body) if reply.body.strip() else None
        except ValueError:
            raise EngineError(
                f"vector store {self.url}: {method} {path} answered with something that is "
                "not JSON; is this Chroma's server (API v2)?"
            ) from None

    def _failed(self, what: str, status: int, data: Any) -> EngineError:
        message = data.get("message") if isinstance(data, dict) else data
        return EngineError(f"vector store {self.url}: {what} failed (HTTP {status}: {message})")

    async def open(self, dimension: int) -> None:
        """Find the collection (creating lasagna's own), check its space and dimension."""
        status, data = await self._call("GET", f"{_API}/collections/{self.collection}")
        if status == 404 or (isinstance(data, dict) and data.get("error") == "NotFoundError"):
            if not self.owned:
                raise EngineUsageError(
                    f"vector store {self.url}: no collection {self.collection!r}; give one "
                    "that exists, or leave the collection out and lasagna makes its own"
                )
            status, data = await self._call(
                "POST",
                f"{_API}/collections",
                {
                    "name": self.collection,
                    "configuration": {"hnsw": {"space": "cosine"}},
                    "get_or_create": True,
                },
            )
        if status != 200 or not isinstance(data, dict) or "id" not in data:
            raise self._failed(f"opening collection {self.collection!r}", status, data)
        self._id = str(data["id"])
        # A user's collection may rank by l2 or inner product: on unit vectors (lasagna's)
        # both order passages as cosine does; the score recorded is then -distance.
        space = ((data.get("configuration_json") or {}).get("hnsw") or {}).get("space")
        self.space = space or "l2"
        found = data.get("dimension")
        if isinstance(found, int) and found != dimension:
            raise EngineUsageError(
                f"vector store {self.url}: collection {self.collection!r} holds vectors of "
                f"{found} dimensions and the embedder makes {dimension}; use the embedder "
                "the collection was built with, or another collection"
            )
        self.dimension = found if isinstance(found, int) else None
        status, count = await self._call("GET", f"{_API}/collections/{self._id}/count")
        if status != 200 or not isinstance(count, int):
            raise self._failed("counting the collection", status, count)
        self.count = count

    async def fill(self, ids: list[str], vectors: Any) -> float:
        """Upsert every passage's vector (lasagna's own collection only); the seconds."""
        started = time.perf_counter()
        for start in range(0, len(ids), _UPSERT_BATCH):
            body = {
                "ids": ids[start : start + _UPSERT_BATCH],
                "embeddings": vectors[start : start + _UPSERT_BATCH].tolist(),
            }
            status, data = await self._call("POST", f"{_API}/collections/{self._id}/upsert", body)
            if status not in (200, 201):
                raise self._failed("adding vectors", status, data)
        self.count = len(ids)
        return time.perf_counter() - started

    async def search_many(
        self, queries: Any, depth: int, known: set[str], seconds: list[float]
    ) -> list[list[tuple[str, float]]]:
        """The `depth` nearest passages of each query vector, best first (cosine similarity,
        1 - Chroma's distance; -distance in an l2 collection); an id that is not a passage
        of the corpus is an error."""
        results: list[list[tuple[str, float]]] = []
        depth = min(depth, self.count)
        for start in range(0, len(queries), _QUERY_BATCH):
            block = queries[start : start + _QUERY_BATCH]
            began = time.perf_counter()
            status, data = await self._call(
                "POST",
                f"{_API}/collections/{self._id}/query",
                {"query_embeddings": block.tolist(), "n_results": depth, "include": ["distances"]},
            )
            if status != 200 or not isinstance(data, dict):
                raise self._failed("querying", status, data)
            each = (time.perf_counter() - began) / max(1, len(block))
            for ids, distances in zip(data["ids"], data["distances"], strict=True):
                for doc in ids:
                    if doc not in known:
                        raise EngineUsageError(
                            f"vector store {self.url}: collection {self.collection!r} holds "
                            f"id {doc!r}, which is not a passage of the benchmark's corpus; "
                            "its ids must be the corpus's passage ids"
                        )
                offset = 1.0 if self.space in ("cosine", "ip") else 0.0
                results.append(
                    [(doc, offset - float(d)) for doc, d in zip(ids, distances, strict=True)]
                )
                seconds.append(each)
        return results
