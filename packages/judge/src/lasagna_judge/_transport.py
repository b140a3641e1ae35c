"""Every request to a model server goes through `RetryingSender`: retries, the concurrency
bound, the rate limit and the metering of each network attempt live here, once, for every
provider.

- A slot of the LLM's semaphore is held only while a request is on the wire, not during
  backoff, so waiting retries do not starve other calls.
- The rate limit (`RateLimiter`: requests and tokens a minute) and the adaptive pace
  (`AdaptivePace`: slower after a 429, Retry-After honoured by every call, faster while
  calls succeed) space the requests within that bound.
- 429, 408, 409 and 5xx replies, timeouts, connection errors and 2xx JSON replies whose body
  is not JSON are retried with full-jitter backoff, honouring Retry-After.
- Certificate failures, a proxy's 407, a reply that breaks HTTP or passes the size cap and a
  request that cannot be sent are not retried (`WireError.retried`): they would fail the
  same way again. So is a 2xx reply whose token counts are negative or not numbers
  (`WireError` kind `reply`): the call fails, and its counts never enter a sum.
- A request's `deadline` bounds the whole call from its first attempt on the wire, retries
  and their waits included: each attempt gets what is left, and no retry starts once it is
  spent.
- After the last retry the last reply is returned (or the last WireError raised), and the
  backend turns it into an LLMCallError.

OpenAI-compatible servers are spoken to directly (see `_openai_compat`); SDK-based providers
(Anthropic) get an httpx2 transport, `HttpxBridge`, that sends through the same sender,
with the SDK's own retries off.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import time
from typing import TYPE_CHECKING

from lasagna_judge._adaptive import AdaptivePace
from lasagna_judge._ratelimit import RateLimiter
from lasagna_judge._retry import RetryPolicy, is_retryable_status, parse_retry_after
from lasagna_judge._usage import BadUsage, Meter, record_attempt, usage_from_body
from lasagna_judge._wire import HttpSender, WireError, WireRequest, WireResponse
from lasagna_metrics import parse_json

if TYPE_CHECKING:
    import httpx2

REFUSALS = frozenset({429, 503, 529})
"""A provider saying "too many": rate limited, unavailable, overloaded."""


class RetryingSender:
    """Sends WireRequests with retries, a concurrency bound, a rate limit and metering."""

    def __init__(
        self,
        sender: HttpSender,
        *,
        policy: RetryPolicy,
        concurrency: int,
        meter: Meter,
        limiter: RateLimiter | None = None,
        pace: AdaptivePace | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self._sender = sender
        self._policy = policy
        self._concurrency = concurrency
        self._semaphore = asyncio.Semaphore(concurrency)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._meter = meter
        self._limiter = limiter
        self._pace = pace
        self._rng = rng or random.Random()

    async def send(self, request: WireRequest, *, raw: bool = False) -> WireResponse:
        """The reply to `request`, after retries. `raw`: a 2xx body is returned as it came,
        not read as JSON nor counted as tokens (a batch's files and status replies: their
        tokens are counted per item, at the batch price)."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            # An asyncio.Semaphore belongs to the loop it first waited on: an LLM reused
            # under a new asyncio.run() gets a fresh one with the same bound.
            if self._loop is not None:
                self._semaphore = asyncio.Semaphore(self._concurrency)
            self._loop = loop
        ends: list[float] = []  # when the call's deadline passes, from its first attempt
        retry = 0
        while True:
            response, error, retry_after = await self._attempt(request, ends, raw)
            if retry >= self._policy.max_retries or retry_after is None:
                break
            wait = self._policy.delay(retry, retry_after, self._rng)
            if ends and ends[0] - loop.time() - wait <= 0:
                break  # the call's deadline comes before the retry could
            await asyncio.sleep(wait)
            retry += 1
        if error is not None:
            raise error
        assert response is not None
        return response

    async def _attempt(
        self, request: WireRequest, ends: list[float], raw: bool = False
    ) -> tuple[WireResponse | None, WireError | None, float | None]:
        """One request on the wire: (response, error, retry_after), where retry_after is
        None when the outcome is final, else the server's Retry-After (0.0 for none). The
        call's deadline starts with its first attempt on the wire (`ends`), not while it
        waits for a slot, and each later attempt gets what is left of it."""
        async with self._semaphore:
            tokens = len(request.body) // 4 + 1  # the prompt's tokens, about (and the JSON's)
            if self._limiter is not None:
                await self._limiter.acquire(tokens)
            paced = await self._pace.acquire() if self._pace is not None else 0.0
            sent = request
            if request.deadline is not None:
                now = asyncio.get_running_loop().time()
                if not ends:
                    ends.append(now + request.deadline)
                sent = dataclasses.replace(request, deadline=max(ends[0] - now, 0.001))
            start = time.perf_counter()
            try:
                response = await self._sender.send(sent)
            except WireError as exc:
                if exc.kind == "deadline":  # the sender knew what was left; the user, all of it
                    exc = WireError("deadline", f"{exc} ({request.deadline:g} s, retries included)")
                record_attempt(self._meter, seconds=time.perf_counter() - start, failure=str(exc))
                return None, exc, 0.0 if exc.retried else None
            seconds = time.perf_counter() - start

        status = response.status
        if self._pace is not None and status in REFUSALS:
            retry_after = parse_retry_after(response.headers, time.time())
            self._pace.refused(paced, retry_after or 0.0)
        elif self._pace is not None and 200 <= status < 300:
            self._pace.admitted(paced)
        if is_retryable_status(status):
            after = parse_retry_after(response.headers, time.time())
            record_attempt(self._meter, seconds=seconds, status=status, failure=f"HTTP {status}")
            return response, None, after if after is not None else 0.0
        if not raw and 200 <= status < 300 and "json" in response.headers.get("content-type", ""):
            try:
                response.json = parse_json(response.body)
            except ValueError:
                record_attempt(
                    self._meter,
                    seconds=seconds,
                    status=status,
                    failure=f"HTTP {status} with a body that is not JSON",
                )
                return response, None, 0.0
            try:
                usage = usage_from_body(response.json)
            except BadUsage as exc:  # never summed; the same reply would come again
                failure = f"HTTP {status} with {exc}"
                record_attempt(self._meter, seconds=seconds, status=status, failure=failure)
                return None, WireError("reply", failure), None
            if usage is not None and self._limiter is not None:
                self._limiter.settle(tokens, usage.input_tokens + usage.output_tokens)
            record_attempt(self._meter, seconds=seconds, usage=usage, status=status)
            return response, None, None
        final_failure = None if 200 <= status < 300 else f"HTTP {status}"
        record_attempt(self._meter, seconds=seconds, status=status, failure=final_failure)
        return response, None, None

    async def aclose(self) -> None:
        await self._sender.aclose()


def httpx_bridge(
    sender: RetryingSender, deadline: float | None = None
) -> httpx2.AsyncBaseTransport:
    """An httpx2 transport for a vendor SDK that sends through `sender`, each request held
    at most `deadline` seconds in all."""
    import httpx2

    class HttpxBridge(httpx2.AsyncBaseTransport):
        async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
            timeouts = request.extensions.get("timeout") or {}
            read = timeouts.get("read") if isinstance(timeouts, dict) else None
            headers = [
                (name.decode("latin-1"), value.decode("latin-1"))
                for name, value in request.headers.raw
                if name.lower() not in (b"host", b"content-length", b"transfer-encoding")
            ]
            wire = WireRequest(
                request.method, str(request.url), headers, await request.aread(), read, deadline
            )
            try:
                response = await sender.send(wire)
            except WireError as exc:
                error = {
                    "timeout": httpx2.ReadTimeout,
                    "connect": httpx2.ConnectError,
                    "network": httpx2.ReadError,
                    "certificate": httpx2.ConnectError,
                    "proxy": httpx2.ProxyError,
                    "request": httpx2.LocalProtocolError,
                }.get(exc.kind, httpx2.RemoteProtocolError)
                raise error(str(exc), request=request) from exc
            return httpx2.Response(
                response.status, headers=list(response.headers.items()), content=response.body
            )

        async def aclose(self) -> None:
            await sender.aclose()

    return HttpxBridge()
