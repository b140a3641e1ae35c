"""The `LLM` object: the one door every lasagna package uses to reach a model.

    llm = make_llm("openai/gpt-4o-mini", api_key=...)
    c = await llm.complete([{"role": "user", "content": "Say hi"}])
    s = await llm.structured(messages, Verdict)       # s.status "ok" or "unparsed"

An LLM bounds its own concurrency, retries transport failures, caches successful calls in
SQLite, and meters tokens and cost. Libraries take an LLM; only the CLI reads environment
variables to build one (with `make_llm`, in `_make_llm`).
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from lasagna_judge._cache import ResponseCache, cache_key_of_parts, canonical_json
from lasagna_judge._cache_values import (
    completion_hit,
    completion_value,
    structured_hit,
    structured_value,
)
from lasagna_judge._errors import JudgeError, LLMCallError
from lasagna_judge._providers import (
    Backend,
    CallOptions,
    Message,
    check_messages,
    is_reasoning_model,
)
from lasagna_judge._redact import redact, secrets_of
from lasagna_judge._types import Completion, Structured, Usage
from lasagna_judge._usage import BATCH_PRICE, Meter, Prices, call_record, cost_usd

if TYPE_CHECKING:
    from pydantic import BaseModel

T = TypeVar("T", bound="BaseModel")

# Bump when the cached value's layout changes, so old rows are simply not found.
_CACHE_VERSION = 1


class LLM:
    """A model behind retries, a concurrency bound, a cache and a meter. Build with `make_llm`.

    Calls are async and safe to run many at once, from one event loop at a time;
    `await llm.aclose()` (or `async with llm:`) before that loop ends.
    """

    def __init__(
        self,
        model: str,
        backend: Backend,
        *,
        meter: Meter,
        cache: ResponseCache | None,
        temperature: float | None,
        prices: Prices | None,
        secrets: Sequence[str] = (),
        endpoint: str | None = None,
    ) -> None:
        self.model = model
        self._backend = backend
        self._meter = meter
        self._cache = cache
        self._temperature = temperature
        self._prices = dict(prices) if prices else None
        self._secrets = secrets_of(secrets)
        # A server named by base_url is part of the model's identity in the cache key: the
        # same model name on two servers may be two models (or two fake servers in tests).
        self._endpoint = endpoint.rstrip("/") if endpoint else None
        self._model_json = canonical_json(model)
        self._endpoint_json = canonical_json(self._endpoint)
        self._key_locks: dict[str, tuple[asyncio.Lock, int]] = {}
        # The keys this process's batches answered (`run_batch`): their hits are this run's.
        self._batch_keys: set[str] = set()

    def __repr__(self) -> str:  # never shows a key
        return f"LLM({self.model!r})"

    # -- the calls -------------------------------------------------------------------------

    async def complete(
        self,
        messages: Sequence[Mapping[str, str]],
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        """The model's text reply. Raises LLMCallError when the call fails for good."""
        checked = check_messages(messages)
        options = self._options(temperature, max_tokens)
        if self._cache is None:  # no key to hash, no lock to hold: the call alone
            return await self._complete(checked, options)
        key = self._key("complete", checked, options)
        async with self._key_lock(key):
            hit = self._cache_get(key)
            if hit is not None:
                return completion_hit(hit, self.model, paid_now=key in self._batch_keys)
            result = await self._complete(checked, options)
            self._cache_put(key, completion_value(result))
            return result

    async def _complete(self, checked: list[Message], options: CallOptions) -> Completion:
        with call_record() as record:
            try:
                text = await self._backend.complete(checked, options)
            except LLMCallError as exc:
                raise self._redacted(exc) from None
        return Completion(
            text=text,
            usage=record.usage,
            latency_s=record.wire_s,
            cached=False,
            model=self.model,
            attempts=record.attempts,
        )

    async def structured(
        self,
        messages: Sequence[Mapping[str, str]],
        response_model: type[T],
        max_validation_retries: int = 2,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> Structured[T]:
        """The reply validated as `response_model`, through instructor.

        Output that never validates (after `max_validation_retries` re-asks) gives status
        "unparsed" with the raw text kept; it is not an exception. Transport failure after
        all retries raises LLMCallError.
        """
        from pydantic import BaseModel

        if not (isinstance(response_model, type) and issubclass(response_model, BaseModel)):
            raise JudgeError(
                f"response_model must be a pydantic BaseModel subclass, got {response_model!r}"
            )
        if max_validation_retries < 0:
            raise JudgeError(f"max_validation_retries must be >= 0, got {max_validation_retries}")
        checked = check_messages(messages)
        options = self._options(temperature, max_tokens)
        key = self._structured_key(checked, options, response_model, max_validation_retries)
        async with self._key_lock(key):
            hit = self._cache_get(key)
            if hit is not None:
                paid_now = key in self._batch_keys
                cached = structured_hit(hit, response_model, self.model, paid_now=paid_now)
                if cached is not None:
                    return cached
            with call_record() as record:
                try:
                    outcome = await self._backend.structured(
                        checked, response_model, options, max_validation_retries
                    )
                except LLMCallError as exc:
                    raise self._redacted(exc) from None
            value: T | None = None
            if outcome.value is not None:
                # A fresh instance: instructor hangs its raw response on the one it returns.
                value = response_model.model_validate(outcome.value.model_dump())
            result: Structured[T] = Structured(
                value=value,
                status="ok" if value is not None else "unparsed",
                raw=outcome.raw,
                usage=record.usage,
                latency_s=record.wire_s,
                cached=False,
                model=self.model,
                attempts=record.attempts,
                validation_errors=tuple(self._redact(e) for e in outcome.errors),
            )
            # "unparsed" is cached too: the call succeeded and at temperature 0 a rerun
            # would only pay for the same output again (the key includes the re-ask count).
            self._cache_put(key, structured_value(result))
            return result

    # -- totals ----------------------------------------------------------------------------

    @property
    def usage(self) -> Usage:
        """Tokens spent by this object's network calls (cache hits excluded)."""
        return self._meter.usage

    @property
    def calls_made(self) -> int:
        """Network requests made (retries and validation re-asks included; cache hits not)."""
        return self._meter.calls_made

    @property
    def batch_usage(self) -> Usage:
        """Tokens of the items answered through a batch API (in `usage` too)."""
        return self._meter.batch_usage

    @property
    def cost_usd(self) -> float | None:
        """Dollars spent, from the price table given to make_llm; None without a price.
        Tokens answered through a batch API cost `BATCH_PRICE` of the price."""
        return self.cost_of(self._meter.usage, batch=self._meter.batch_usage)

    def cost_of(self, usage: Usage, *, batch: Usage | None = None) -> float | None:
        """Dollars for a given usage at this model's price, its `batch` part (tokens among
        `usage` that a batch API answered) at `BATCH_PRICE` of it; None without a price."""
        full = cost_usd(self._prices, self.model, usage)
        discounted = cost_usd(self._prices, self.model, batch) if batch is not None else 0.0
        if full is None or discounted is None:
            return None
        return full - discounted * (1 - BATCH_PRICE)

    @property
    def cache_path(self) -> Path | None:
        return self._cache.path if self._cache is not None else None

    @property
    def cache_failure(self) -> str | None:
        """Why the cache was turned off during the run (its disk refused a write), in a line
        to warn with; None while it works or when there is none. The calls go on."""
        return self._cache.failure if self._cache is not None else None

    async def aclose(self) -> None:
        """Close connections and the cache file. The LLM stays usable: a later call (in this
        event loop or a new one) opens them again. Close before the event loop ends."""
        await self._backend.aclose()
        if self._cache is not None:
            self._cache.close()

    async def __aenter__(self) -> LLM:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # -- helpers ---------------------------------------------------------------------------

    def _options(self, temperature: float | None, max_tokens: int | None) -> CallOptions:
        if temperature is None:
            # The default is not sent to models that reject a temperature.
            rejects = self._backend.provider in ("openai", "ollama") and is_reasoning_model(
                self._backend.name
            )
            temperature = None if rejects else self._temperature
        if max_tokens is not None and max_tokens <= 0:
            raise JudgeError(f"max_tokens must be > 0, got {max_tokens}")
        return CallOptions(temperature=temperature, max_tokens=max_tokens)

    def _key(
        self, kind: str, messages: list[dict[str, str]], options: CallOptions, **extra: Any
    ) -> str:
        if self._cache is None:
            return ""  # no cache, no key to hash
        # The sha256 of the canonical JSON of {"v", "kind", "model", "endpoint", "messages",
        # "params", **extra}: each value encoded on its own (the schema once per class).
        parts = {
            "v": str(_CACHE_VERSION),
            "kind": canonical_json(kind),
            "model": self._model_json,
            "messages": canonical_json(messages),
            "params": canonical_json(
                {"temperature": options.temperature, "max_tokens": options.max_tokens}
            ),
        }
        if self._endpoint:
            parts["endpoint"] = self._endpoint_json
        for name, value in extra.items():
            parts[name] = value if name == "schema" else canonical_json(value)
        return cache_key_of_parts(parts)

    def _structured_key(
        self,
        checked: list[Message],
        options: CallOptions,
        response_model: type[BaseModel],
        max_validation_retries: int,
    ) -> str:
        return self._key(
            "structured",
            checked,
            options,
            schema=_schema_json(response_model),
            schema_name=response_model.__name__,
            mode=self._backend.mode,
            max_validation_retries=max_validation_retries,
        )

    def _key_lock(self, key: str) -> _KeyLock:
        return _KeyLock(self._key_locks, key, enabled=self._cache is not None)

    def _cache_get(self, key: str) -> dict[str, Any] | None:
        return self._cache.get(key) if self._cache is not None else None

    def _cache_put(self, key: str, value: dict[str, Any]) -> None:
        if self._cache is not None:
            self._cache.put(key, self.model, value)

    def _redact(self, text: str) -> str:
        return redact(text, self._secrets)

    def _redacted(self, exc: LLMCallError) -> LLMCallError:
        return LLMCallError(self._redact(str(exc)), status=exc.status, attempts=exc.attempts)


_schemas: weakref.WeakKeyDictionary[type[BaseModel], str] = weakref.WeakKeyDictionary()


def _schema_json(model: type[BaseModel]) -> str:
    """The canonical JSON of the model's schema, computed once per class (it is part of
    every cache key)."""
    schema = _schemas.get(model)
    if schema is None:
        schema = _schemas[model] = canonical_json(model.model_json_schema())
    return schema


class _KeyLock:
    """One lock per cache key while a call is in flight, so that concurrent identical
    requests make one call and the others read the cache."""

    def __init__(
        self, locks: dict[str, tuple[asyncio.Lock, int]], key: str, *, enabled: bool
    ) -> None:
        self._locks = locks
        self._key = key
        self._enabled = enabled

    async def __aenter__(self) -> None:
        if not self._enabled:
            return
        lock, users = self._locks.get(self._key, (None, 0))
        if lock is None:
            lock = asyncio.Lock()
        self._locks[self._key] = (lock, users + 1)
        try:
            await lock.acquire()
        except BaseException:
            self._release_user(lock)
            raise

    async def __aexit__(self, *exc_info: object) -> None:
        if not self._enabled:
            return
        lock, _ = self._locks[self._key]
        lock.release()
        self._release_user(lock)

    def _release_user(self, lock: asyncio.Lock) -> None:
        # Forget the lock once nobody holds or waits on it: the dict stays as small as the
        # number of calls in flight.
        _, users = self._locks[self._key]
        if users <= 1:
            del self._locks[self._key]
        else:
            self._locks[self._key] = (lock, users - 1)
