"""Every request to a model server goes through `RetryingSender`, once for every provider:
retries, the concurrency bound, the rate limit and the metering of each attempt. The SDKs
(openai, anthropic, ollama) send through it: `policy_transport` is the httpx2 transport
under their one client, their own retries off (max_retries=0), so one policy decides.

- A slot of the semaphore is held only while a request is on the wire, not during backoff.
- The rate limit (`RateLimiter`) and the adaptive pace (`AdaptivePace`) space the requests.
- 408, 409, 429 and 5xx replies, timeouts, connection errors and 2xx JSON replies whose body
  is not JSON are retried with full-jitter backoff, Retry-After honoured up to the policy's
  cap; any other 4xx is final at once. Each failure is recorded with the server's own
  message, which ends the call's one line.
- What would fail the same way again is not retried (`WireError.retried`), nor a 2xx whose
  token counts cannot be believed (kind `reply`: they never enter a sum).
- A request's `deadline` bounds the whole call from its first attempt, retries and waits
  included.
- A wait over `SAID_WAIT` seconds is told to `on_wait` with its reason before it starts.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from lasagna_judge._adaptive import AdaptivePace
from lasagna_judge._providers import error_detail
from lasagna_judge._ratelimit import RateLimiter
from lasagna_judge._retry import RetryPolicy, is_retryable_status, parse_retry_after
from lasagna_judge._usage import BadUsage, Meter, record_attempt, usage_from_body
from lasagna_judge._wire import HttpSender, WireResponse
from lasagna_judge._wire_errors import WireError
from lasagna_metrics import parse_json

if TYPE_CHECKING:
    import httpx2

REFUSALS = frozenset({429, 503, 529})
"""A provider saying "too many": rate limited, unavailable, overloaded."""

SAID_WAIT = 10.0
"""A wait longer than this many seconds is said (`on_wait`) before it starts."""

CALL_HEADER = "x-lasagna-call"
"""A header the transport takes off before sending, saying how to treat the request: `raw`
(not read as tokens), `stream` (a 2xx body left unread, for disk), `once` (no retry: the
caller finds out what happened), `long` (ten times the deadline)."""

OnWait = Callable[[str], None]


class RetryingSender:
    """Sends httpx2 requests with retries, a concurrency bound, a rate limit and metering."""

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
        on_wait: OnWait | None = None,
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
        self.on_wait = on_wait
        self._said_until = 0.0  # when the last wait told ends: a wait shared is told once

    async def send(
        self,
        request: httpx2.Request,
        *,
        idle: float | None,
        deadline: float | None,
        raw: bool = False,
        stream: bool = False,
        once: bool = False,
    ) -> WireResponse:
        """The reply to `request` (its body read), after retries; `raw`, `stream` and `once`
        as `CALL_HEADER` says."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            # A semaphore belongs to the loop it first waited on: a new one for a new loop.
            if self._loop is not None:
                self._semaphore = asyncio.Semaphore(self._concurrency)
            self._loop = loop
        ends: list[float] = []  # when the call's deadline passes, from its first attempt
        retry = 0
        limit = 0 if once else self._policy.max_retries
        while True:
            response, error, retry_after = await self._attempt(
                request, idle, deadline, ends, raw, stream, once
            )
            if retry >= limit or retry_after is None:
                break
            wait = self._policy.delay(retry, retry_after, self._rng)
            if ends and ends[0] - loop.time() - wait <= 0:
                break  # the call's deadline comes before the retry could
            self._say(wait, _why(response, error, retry_after, self._policy))
            await asyncio.sleep(wait)
            retry += 1
        if error is not None:
            raise error
        assert response is not None
        return response

    def _say(self, wait: float, why: str) -> None:
        """Tell `on_wait` of a wait over SAID_WAIT seconds, once for waits ending together."""
        now = time.monotonic()
        if wait <= SAID_WAIT or self.on_wait is None or now + wait <= self._said_until + 1.0:
            return
        self._said_until = now + wait
        self.on_wait(f"waiting {wait:.3g} s: {why}")

    async def _attempt(
        self,
        request: httpx2.Request,
        idle: float | None,
        deadline: float | None,
        ends: list[float],
        raw: bool,
        stream: bool,
        once: bool = False,
    ) -> tuple[WireResponse | None, WireError | None, float | None]:
        """One attempt: (response, error, retry_after), retry_after None when the outcome is
        final, else the server's Retry-After (0.0 for none). The deadline starts with the
        first attempt on the wire (`ends`); each later one gets what is left of it."""
        async with self._semaphore:
            tokens = len(request.content) // 4 + 1  # the prompt's tokens, about
            if self._limiter is not None:
                due = self._limiter.due(tokens)
                if due > SAID_WAIT:
                    self._say(due, "the rate limit given (requests or tokens a minute)")
                await self._limiter.acquire(tokens)
            paced = 0.0
            if self._pace is not None:
                due = self._pace.due()
                if due > SAID_WAIT:
                    self._say(due, "the provider asked every call to hold (Retry-After)")
                paced = await self._pace.acquire()
            left = deadline
            if deadline is not None:
                now = asyncio.get_running_loop().time()
                if not ends:
                    ends.append(now + deadline)
                left = max(ends[0] - now, 0.001)
            start = time.perf_counter()
            try:
                response = await self._sender.exchange(
                    request, idle=idle, deadline=left, stream=stream, once=once
                )
            except WireError as exc:
                if exc.kind == "deadline":  # the sender knew what was left; the user, all of it
                    exc = WireError("deadline", f"{exc} ({deadline:g} s, retries included)")
                record_attempt(self._meter, seconds=time.perf_counter() - start, failure=str(exc))
                return None, exc, 0.0 if exc.retried else None
            seconds = time.perf_counter() - start

        status = response.status
        if self._pace is not None and status in REFUSALS:
            retry_after = parse_retry_after(response.headers, time.time())
            held = min(retry_after or 0.0, self._policy.max_retry_after)
            self._pace.refused(paced, held)
        elif self._pace is not None and 200 <= status < 300:
            self._pace.admitted(paced)
        if is_retryable_status(status):
            after = parse_retry_after(response.headers, time.time())
            failure = f"HTTP {status}{_said(response)}"
            record_attempt(self._meter, seconds=seconds, status=status, failure=failure)
            return response, None, after if after is not None else 0.0
        if response.stream is not None:
            record_attempt(self._meter, seconds=seconds, status=status)
            return response, None, None
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
        final = None if 200 <= status < 300 else f"HTTP {status}{_said(response)}"
        record_attempt(self._meter, seconds=seconds, status=status, failure=final)
        return response, None, None

    async def aclose(self) -> None:
        await self._sender.aclose()


def _said(response: WireResponse) -> str:
    """The server's own words from an error reply, after a colon; nothing for none."""
    detail = error_detail(response.body)
    return f": {detail}" if detail else ""


def _why(
    response: WireResponse | None,
    error: WireError | None,
    retry_after: float,
    policy: RetryPolicy,
) -> str:
    """Why a retry waits, for a wait that is said."""
    if response is None:
        return f"retrying after {error}"
    asked = ""
    if retry_after > policy.max_retry_after:
        asked = (
            f" and asked for {retry_after:,.0f} s (Retry-After), capped at "
            f"{policy.max_retry_after:g} s"
        )
    elif retry_after:
        asked = f" and asked for {retry_after:,.0f} s (Retry-After)"
    return f"the provider answered HTTP {response.status}{asked}; then trying again"


def policy_transport(sender: RetryingSender, deadline: float | None) -> httpx2.AsyncBaseTransport:
    """The httpx2 transport under a provider SDK's client: every request through `sender`,
    held at most `deadline` seconds in all (a request marked `long`: ten times that)."""
    import httpx2

    class PolicyTransport(httpx2.AsyncBaseTransport):
        async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
            flags = set(request.headers.get(CALL_HEADER, "").split(","))
            if CALL_HEADER in request.headers:
                del request.headers[CALL_HEADER]
            await request.aread()
            timeouts = request.extensions.get("timeout") or {}
            idle = timeouts.get("read") if isinstance(timeouts, dict) else None
            held = deadline * 10 if deadline is not None and "long" in flags else deadline
            try:
                response = await sender.send(
                    request,
                    idle=idle,
                    deadline=held,
                    raw="raw" in flags or "stream" in flags,
                    stream="stream" in flags,
                    once="once" in flags,
                )
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
            if response.stream is not None:
                return response.stream
            return httpx2.Response(
                response.status, headers=list(response.headers.items()), content=response.body
            )

        async def aclose(self) -> None:
            await sender.aclose()

    return PolicyTransport()
