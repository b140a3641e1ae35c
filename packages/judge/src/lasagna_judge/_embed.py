"""The `Embedder`: texts to vectors through the same door as models.

    embedder = make_embedder("local/wordllama")            # in-process, no key, no download
    embedder = make_embedder("openai/text-embedding-3-small", api_key=...)
    vectors = await embedder.embed(["a passage", "another"])   # float32, one unit row each

An embedder sends through the transport every model call uses (batching, the concurrency
bound, retries with Retry-After), caches each text's vector in the SQLite cache LLM replies
use (a rerun embeds nothing twice), and meters tokens and cost. Vectors come back
L2-normalised, so a dot product is the cosine similarity every index here ranks by. Every
vector of one embedder has the same dimension; a server that changes it is an error, not a
silent mix. An input over the model's limit (`max_input_tokens`, 8,192 for OpenAI's models)
is cut to it, or refused, before any call, the count said: a server refuses the whole
request for one such input, or cuts it silently. Tokens are counted from UTF-8 bytes
(`BYTES_PER_TOKEN`), an estimate that errs towards too many for text (English runs about 4
bytes a token).
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

from lasagna_judge._cache import ResponseCache, cache_key_of_parts, canonical_json
from lasagna_judge._errors import JudgeError, MissingExtraError
from lasagna_judge._types import Usage
from lasagna_judge._usage import Meter, Prices, cost_usd

OverLimit = Literal["cut", "refuse"]

MAX_INPUT_TOKENS = 8192
"""An embedding input's tokens at most, by default: OpenAI's text-embedding models' limit."""
BYTES_PER_TOKEN = 3
"""UTF-8 bytes counted as one token when an input is measured against the limit."""


def over_limit(texts: list[str], max_tokens: int) -> list[int]:
    """The positions of the texts whose estimated tokens pass `max_tokens`."""
    most = max_tokens * BYTES_PER_TOKEN
    return [i for i, t in enumerate(texts) if len(t) > most // 4 and len(t.encode()) > most]


def cut_to(text: str, max_tokens: int) -> str:
    """`text` cut to `max_tokens` estimated tokens, at a character's boundary."""
    return text.encode()[: max_tokens * BYTES_PER_TOKEN].decode("utf-8", "ignore")


if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vectors = npt.NDArray[np.float32]

# Called as batches finish: (texts embedded so far, texts to embed in this call).
EmbedProgress = Callable[[int, int], None]

# Bump when the cached value's layout changes, so old rows are simply not found.
_CACHE_VERSION = 1


class EmbedBackend(Protocol):
    """What turns one batch of texts into vectors (an HTTP server or an in-process model)."""

    batch_size: int
    cacheable: bool  # an in-process model is faster than the cache: it is not cached

    async def embed_batch(self, texts: list[str]) -> list[Sequence[float]] | Vectors: ...

    # An HTTP backend's `max_input_tokens`: an input's tokens at most (None: no limit).

    async def aclose(self) -> None: ...


def numpy_module() -> Any:
    try:
        import numpy
    except ImportError:
        raise MissingExtraError("embedding", "embed", "numpy") from None
    return numpy


class Embedder:
    """An embedding model behind batching, retries, a cache and a meter. Build with
    `make_embedder`; `await embedder.aclose()` (or `async with embedder:`) at the end."""

    def __init__(
        self,
        model: str,
        backend: EmbedBackend,
        *,
        meter: Meter,
        cache: ResponseCache | None,
        prices: Prices | None = None,
        dimensions: int | None = None,
        endpoint: str | None = None,
        dimension: int | None = None,
        over_limit: OverLimit = "cut",
        on_cut: Callable[[str], None] | None = None,
    ) -> None:
        self.model = model
        self._backend = backend
        self._meter = meter
        self._cache = cache if backend.cacheable else None
        self._prices = dict(prices) if prices else None
        self._dimensions = dimensions
        self.endpoint = endpoint.rstrip("/") if endpoint else None
        self.dimension = dimension  # known up front for an in-process model, else on first use
        self.cached = 0  # texts found in the cache
        self.cut = 0
        """Inputs cut to the model's limit before they were sent (`over_limit="cut"`)."""
        self._over_limit = over_limit
        self._on_cut = on_cut
        self._key_parts = {
            "embed": canonical_json(model),
            "endpoint": canonical_json(self.endpoint),
            "dimensions": canonical_json(dimensions),
            "v": canonical_json(_CACHE_VERSION),
        }

    def __repr__(self) -> str:  # never shows a key
        return f"Embedder({self.model!r})"

    async def __aenter__(self) -> Embedder:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    @property
    def usage(self) -> Usage:
        """Tokens sent to the server by this embedder (cache hits excluded)."""
        return self._meter.usage

    @property
    def calls_made(self) -> int:
        return self._meter.calls_made

    def cost_usd(self) -> float | None:
        """What this embedder's tokens cost, when a price table names its model."""
        return cost_usd(self._prices, self.model, self._meter.usage)

    def identity(self) -> dict[str, Any]:
        """What results record of it (never a key): the model, its server and dimension."""
        return {"model": self.model, "endpoint": self.endpoint, "dimension": self.dimension}

    async def embed(
        self, texts: Sequence[str], *, on_progress: EmbedProgress | None = None
    ) -> Vectors:
        """One unit-length float32 row per text, in order. Raises LLMCallError when a batch
        fails for good, JudgeError when the server's vectors change dimension."""
        np = numpy_module()
        texts = list(texts)
        unique = list(dict.fromkeys(texts))
        found: dict[str, Vectors] = {}
        keys: dict[str, str] = {}
        if self._cache is not None:
            for text in unique:
                key = cache_key_of_parts({**self._key_parts, "input": canonical_json(text)})
                keys[text] = key
                value = self._cache.get(key)
                if value is not None and isinstance(value.get("v"), str):
                    found[text] = np.frombuffer(base64.b64decode(value["v"]), dtype=np.float32)
            self.cached += len(found)
        missing = [t for t in unique if t not in found]
        sent = self._within_limit(missing)
        size = max(1, self._backend.batch_size)
        batches = [missing[i : i + size] for i in range(0, len(missing), size)]
        done = [len(texts) - len(missing)]
        if on_progress is not None:
            on_progress(done[0], len(texts))

        async def one(batch: list[str]) -> None:
            # The servers refuse an empty input; a space embeds as "nothing said".
            rows = await self._backend.embed_batch([sent.get(t, t) or " " for t in batch])
            vectors = self._checked(np.asarray(rows, dtype=np.float32), len(batch))
            for text, vector in zip(batch, vectors, strict=True):
                found[text] = vector
                if self._cache is not None:
                    encoded = base64.b64encode(vector.tobytes()).decode("ascii")
                    self._cache.put(keys[text], self.model, {"v": encoded})
            done[0] += len(batch)
            if on_progress is not None:
                on_progress(done[0], len(texts))

        await asyncio.gather(*(one(batch) for batch in batches))
        if not texts:
            return np.zeros((0, self.dimension or 0), dtype=np.float32)  # type: ignore[no-any-return]
        return np.stack([found[t] for t in texts])  # type: ignore[no-any-return]

    def _within_limit(self, texts: list[str]) -> dict[str, str]:
        """What is sent for each text (cut to the model's limit, a blank one as a space),
        decided before any call; a JudgeError with the count when they are refused."""
        sent = {t: " " for t in texts if not t.strip()}
        limit = getattr(self._backend, "max_input_tokens", None)
        over = over_limit(texts, limit) if limit else []
        if not over or limit is None:
            return sent
        longest = max(len(texts[i].encode()) for i in over) // BYTES_PER_TOKEN
        said = (
            f"{self.model}: {len(over):,} input{'s' if len(over) > 1 else ''} over the model's "
            f"limit of {limit:,} tokens (the longest about {longest:,})"
        )
        if self._over_limit == "refuse":
            raise JudgeError(
                f"{said}, refused before any call: shorten them, or let them be cut to the "
                "limit (over_limit='cut')"
            )
        self.cut += len(over)
        if self._on_cut is not None:
            self._on_cut(f"{said}: cut to the limit before they were sent")
        sent.update((texts[i], cut_to(texts[i], limit)) for i in over)
        return sent

    def _checked(self, vectors: Vectors, count: int) -> Vectors:
        np = numpy_module()
        if vectors.ndim != 2 or vectors.shape[0] != count:
            raise JudgeError(
                f"{self.model}: expected {count} vectors from the embedding server, got an "
                f"array of shape {vectors.shape}; check that the model is an embedding model"
            )
        dimension = int(vectors.shape[1])
        if self.dimension is None:
            self.dimension = dimension
        elif dimension != self.dimension:
            raise JudgeError(
                f"{self.model}: the server returned vectors of {dimension} dimensions, "
                f"expected {self.dimension}; one index cannot mix them (check the model "
                "and its `dimensions` setting)"
            )
        if not np.isfinite(vectors).all():
            raise JudgeError(f"{self.model}: the server returned vectors with NaN or infinity")
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms > 0, norms, 1.0)  # type: ignore[no-any-return]

    async def aclose(self) -> None:
        try:
            await self._backend.aclose()
        finally:
            if self._cache is not None:
                self._cache.close()
