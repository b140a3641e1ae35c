"""`--system http://host:port/path`: a system behind an HTTP endpoint.

The contract (docs/how-to/own-system.md, "An HTTP endpoint"): lasagna POSTs, per question,

    {"question": "...", "id": "q01", "top_k": 10}          Content-Type: application/json

and expects 200 with a JSON body in any shape a Python system may return, usually

    {"answer": "...", "retrieved": ["doc-id or passage text", ...]}

- Up to `--concurrency` requests are in flight (one connection each, kept alive).
- Each attempt has `--system-timeout` seconds (default 60) for the whole exchange.
- 408, 409, 429 and 5xx replies, timeouts and connection errors are retried up to
  `--system-retries` times (default 3), with exponential backoff and full jitter; a
  Retry-After header (seconds or an HTTP date) or OpenAI's retry-after-ms sets the least
  wait, at most 60 s. The rules are lasagna-judge's, the same as for every model call.
- Any other 4xx is final at once (retrying a bad request cannot help), and so is a 2xx
  body that is not JSON, and what would fail the same way again: a certificate refused, a
  proxy's 407, a reply that breaks HTTP/1.1's framing or is over 64 MB after decompression.
- A question whose last attempt fails is recorded as that item's error, never scored.
- The values of `--system-header` (and a sweep's `headers:`) never appear in an error:
  a server quoting what it was sent (`401: bad token abc...`) has them replaced by `***`,
  as a model call's key is (lasagna-judge's `redact`).
- HTTP_PROXY, HTTPS_PROXY and NO_PROXY are honoured: the command reads them into the spec
  (`SystemSpec.proxies`).
- The requests go through lasagna-judge's sender (`HttpSender`, httpx2 underneath), as
  every model call does: the same proxies, certificates (SSL_CERT_FILE), IDNA 2008 host
  names, size cap and error kinds.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from lasagna_cli.engine.systems._errors import SystemFailure, SystemOutputError
from lasagna_cli.engine.systems._spec import SystemSpec, redact_url
from lasagna_judge import RetryPolicy, is_retryable_status, parse_retry_after
from lasagna_metrics import parse_json

if TYPE_CHECKING:
    from lasagna_judge.http import HttpSender

MAX_RETRY_AFTER = 60.0
MAX_BACKOFF = 10.0


def _snippet(body: bytes) -> str:
    text = " ".join(body.decode("utf-8", "replace").split())
    return text if len(text) <= 200 else text[:197] + "..."


class HttpSystem:
    """POSTs each question to the endpoint, with retries; the JSON reply is the output."""

    kind = "http"

    def __init__(self, spec: SystemSpec, concurrency: int, *, seed: int | None = None) -> None:
        self.spec = spec
        self.url = spec.target
        self.shown = redact_url(spec.target)
        self._concurrency = concurrency
        self._sender: HttpSender | None = None
        self._rng = random.Random(seed)
        self._policy = RetryPolicy(
            max_retries=spec.retries,
            base_delay=spec.backoff,
            max_delay=MAX_BACKOFF,
            max_retry_after=MAX_RETRY_AFTER,
        )
        self.attempts = 0
        self._headers = [*spec.headers, ("Content-Type", "application/json")]
        from lasagna_judge.http import secrets_of

        self._secrets = secrets_of(value for _, value in spec.headers)

    def describe(self) -> dict[str, Any]:
        return {"adapter": "http"}

    def _client(self) -> HttpSender:
        from lasagna_judge.http import HttpSender

        if self._sender is None:
            # HTTP(S)_PROXY / NO_PROXY as the command read them: the engine reads no
            # environment variable.
            self._sender = HttpSender(self._concurrency, self.spec.proxies)
        return self._sender

    async def ask(self, question: str, row: Mapping[str, Any], top_k: int) -> Any:
        try:
            return await self._ask(question, row, top_k)
        except SystemFailure as exc:  # its message may quote what the server was sent
            from lasagna_judge.http import redact

            raise type(exc)(redact(str(exc), self._secrets)) from None

    async def _ask(self, question: str, row: Mapping[str, Any], top_k: int) -> Any:
        body = json.dumps({"question": question, "id": row["id"], "top_k": top_k}).encode()
        attempts = self.spec.retries + 1
        problem = ""
        for attempt in range(attempts):
            status, reply, wait = await self._attempt(body)
            if status is not None and 200 <= status < 300:
                try:
                    return parse_json(reply)
                except ValueError:
                    raise SystemOutputError(
                        f"{self.shown} replied {status} with a body that is not JSON: "
                        f"{_snippet(reply)!r}"
                    ) from None
            if status is not None and not is_retryable_status(status):
                raise SystemFailure(f"HTTP {status} from {self.shown}: {_snippet(reply)}")
            problem = f"HTTP {status}: {_snippet(reply)}" if status is not None else reply.decode()
            if attempt + 1 < attempts:
                await asyncio.sleep(self._policy.delay(attempt, wait, self._rng))
        tries = f"{attempts} attempt{'s' if attempts > 1 else ''}"
        raise SystemFailure(f"{self.shown}: {problem} (after {tries})")

    async def _attempt(self, body: bytes) -> tuple[int | None, bytes, float | None]:
        """(status, body, Retry-After) of one request; status None for a transport failure,
        with the reason as the body. SystemFailure for one no retry can cure."""
        from lasagna_judge.http import WireError, WireRequest

        self.attempts += 1
        timeout = self.spec.http_timeout
        request = WireRequest("POST", self.url, self._headers, body, timeout, timeout)
        try:
            response = await self._client().send(request)
        except WireError as exc:
            if exc.kind in ("timeout", "deadline"):
                return None, f"no reply within {timeout:g} s".encode(), None
            if not exc.retried:
                raise SystemFailure(f"{self.shown}: {exc}") from None
            return None, f"cannot reach the endpoint ({exc})".encode(), None
        wait = parse_retry_after(response.headers, time.time())
        return response.status, response.body, wait

    async def aclose(self) -> None:
        if self._sender is not None:
            await self._sender.aclose()
        self._sender = None
