"""Our own HTTP transport under the vendor SDKs: retries, the concurrency bound, the rate
limit and the metering of every network attempt.

The SDKs are built with `max_retries=0` and an httpx2 client whose transport is this one,
so the same rules hold for OpenAI, Anthropic and any OpenAI-compatible server, and every
request an SDK (or instructor's validation re-asks) makes is bounded, counted and retried:

- a slot of the LLM's semaphore is held only while a request is on the wire, not during
  backoff, so waiting retries do not starve other calls;
- 429, 408, 409 and 5xx replies, timeouts, connection errors and 2xx JSON replies whose
  body is not JSON are retried with full-jitter backoff, honouring Retry-After;
- after the last retry the last reply (or error) goes back to the SDK, which raises, and
  the LLM turns that into an LLMCallError.
"""

from __future__ import annotations

import asyncio
import json
import random
import time

import httpx2

from lasagna_judge._ratelimit import RateLimiter
from lasagna_judge._retry import RetryPolicy, is_retryable_status, parse_retry_after
from lasagna_judge._usage import Meter, record_attempt, usage_from_body

# Transport errors worth another try; a bad URL or a proxy misconfiguration is not.
_RETRYABLE_ERRORS = (httpx2.TimeoutException, httpx2.NetworkError, httpx2.RemoteProtocolError)
_DROPPED_HEADERS = (b"content-encoding", b"content-length", b"transfer-encoding")


def _describe(exc: Exception, request: httpx2.Request) -> str:
    if isinstance(exc, httpx2.TimeoutException):
        timeout = request.extensions.get("timeout", {})
        read = timeout.get("read") if isinstance(timeout, dict) else None
        return f"timed out after {read:g} s" if isinstance(read, int | float) else "timed out"
    if isinstance(exc, httpx2.ConnectError):
        return f"cannot connect to {request.url.scheme}://{request.url.netloc.decode()}"
    return f"connection error ({type(exc).__name__})"


class RetryingTransport(httpx2.AsyncBaseTransport):
    """Wraps a real transport with retries, a concurrency bound, a rate limit and metering."""

    def __init__(
        self,
        inner: httpx2.AsyncBaseTransport,
        *,
        policy: RetryPolicy,
        semaphore: asyncio.Semaphore,
        meter: Meter,
        limiter: RateLimiter | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self._inner = inner
        self._policy = policy
        self._semaphore = semaphore
        self._meter = meter
        self._limiter = limiter
        self._rng = rng or random.Random()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        retry = 0
        while True:
            response, error, retry_after = await self._attempt(request)
            if retry >= self._policy.max_retries or (response is not None and retry_after is None):
                break
            await asyncio.sleep(self._policy.delay(retry, retry_after, self._rng))
            retry += 1
        if error is not None:
            raise error
        assert response is not None
        return response

    async def _attempt(
        self, request: httpx2.Request
    ) -> tuple[httpx2.Response | None, Exception | None, float | None]:
        """One request on the wire. Returns (response, error, retry_after) where
        retry_after is None when the outcome is final, else the server's Retry-After
        (0.0 when it gave none)."""
        async with self._semaphore:
            if self._limiter is not None:
                await self._limiter.acquire()
            start = time.perf_counter()
            try:
                raw = await self._inner.handle_async_request(request)
                try:
                    body = await raw.aread()
                finally:
                    await raw.aclose()
            except _RETRYABLE_ERRORS as exc:
                failure = _describe(exc, request)
                record_attempt(self._meter, seconds=time.perf_counter() - start, failure=failure)
                return None, exc, 0.0
            seconds = time.perf_counter() - start

        headers = [(k, v) for k, v in raw.headers.raw if k.lower() not in _DROPPED_HEADERS]
        response = httpx2.Response(
            raw.status_code, headers=headers, content=body, extensions=raw.extensions
        )
        status = raw.status_code
        if is_retryable_status(status):
            after = parse_retry_after(raw.headers, time.time())
            record_attempt(self._meter, seconds=seconds, status=status, failure=f"HTTP {status}")
            return response, None, after if after is not None else 0.0
        if 200 <= status < 300 and "json" in raw.headers.get("content-type", ""):
            try:
                parsed = json.loads(body)
            except ValueError:
                record_attempt(
                    self._meter,
                    seconds=seconds,
                    status=status,
                    failure=f"HTTP {status} with a body that is not JSON",
                )
                return response, None, 0.0
            record_attempt(
                self._meter, seconds=seconds, usage=usage_from_body(parsed), status=status
            )
            return response, None, None
        final_failure = None if 200 <= status < 300 else f"HTTP {status}"
        record_attempt(self._meter, seconds=seconds, status=status, failure=final_failure)
        return response, None, None

    async def aclose(self) -> None:
        await self._inner.aclose()
