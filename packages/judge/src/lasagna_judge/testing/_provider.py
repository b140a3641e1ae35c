"""What makes a FakeLLMServer behave like a paid provider: latency that varies as a real
model's does, and a rate limit that answers 429 with Retry-After.

    limits = RateLimits(requests_per_minute=600, minute=6.0)  # time running 10x faster
    with FakeLLMServer(latency=lognormal_latency(0.05, seed=1), limits=limits) as server:
        ...
    limits.admitted, limits.rejected

`RateLimits` is a sliding window, as providers describe theirs: a request is refused while
the last `minute` seconds already hold `requests_per_minute` admitted requests, or their
tokens and this request's would pass `tokens_per_minute`. A request's tokens are counted
at admission as its prompt (characters / 4, as the server reports usage) plus its
`max_tokens`, and replaced by its real usage once it is answered. The refusal says when
the window has room again, in `Retry-After` (whole seconds, as HTTP has it) and
`retry-after-ms` (as OpenAI sends it: the exact figure, which compressed time needs).
"""

from __future__ import annotations

import math
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lasagna_judge.testing._responses import _input_tokens


def lognormal_latency(
    median: float = 0.5, sigma: float = 0.75, *, seed: int = 0, cap: float = 20.0
) -> Callable[[], float]:
    """Seconds a reply takes, drawn from a lognormal distribution: half the calls under
    `median`, a long tail (sigma 0.75: 1 in 100 over 5.7x the median), none over `cap` x
    the median. Seeded: the same draws on every run."""
    rng = random.Random(seed)

    def draw() -> float:
        return min(rng.lognormvariate(math.log(median), sigma), cap * median)

    return draw


@dataclass
class _Admitted:
    at: float
    tokens: int


@dataclass
class RateLimits:
    """A provider's requests-per-minute and tokens-per-minute limits (None: no limit).

    `minute` is how many seconds a minute lasts: less than 60 compresses time (a test's
    limit of 600 a minute, over a 0.6-second minute, takes a hundredth of the time).
    Counts: `admitted`, `rejected` and `rejected_at` (the server's monotonic time of each
    refusal)."""

    requests_per_minute: int | None = None
    tokens_per_minute: int | None = None
    minute: float = 60.0
    admitted: int = 0
    rejected: int = 0
    rejected_at: list[float] = field(default_factory=list)
    _window: deque[_Admitted] = field(default_factory=deque, repr=False)
    _tokens: int = field(default=0, repr=False)

    def __post_init__(self) -> None:
        for name in ("requests_per_minute", "tokens_per_minute"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"{name} must be at least 1, got {value}")
        if not self.minute > 0:
            raise ValueError(f"minute must be > 0 seconds, got {self.minute}")

    def admit(self, request: dict[str, Any], now: float) -> _Admitted | float:
        """The request's place in the window, or the seconds until one is free."""
        self._expire(now)
        tokens = _input_tokens(request) + _max_tokens(request)
        wait = 0.0
        rpm, tpm = self.requests_per_minute, self.tokens_per_minute
        if rpm is not None and len(self._window) >= rpm:
            wait = self._window[len(self._window) - rpm].at + self.minute - now
        if tpm is not None and self._tokens + tokens > tpm:
            wait = max(wait, self._until_room(tpm - tokens, now))
        if wait > 0:
            self.rejected += 1
            self.rejected_at.append(now)
            return wait
        entry = _Admitted(now, tokens)
        self._window.append(entry)
        self._tokens += tokens
        self.admitted += 1
        return entry

    def settle(self, entry: _Admitted, tokens: int) -> None:
        """An answered request counts its real usage (prompt and completion)."""
        if entry in self._window:  # not yet expired
            self._tokens += tokens - entry.tokens
        entry.tokens = tokens

    def _expire(self, now: float) -> None:
        while self._window and self._window[0].at + self.minute <= now:
            self._tokens -= self._window.popleft().tokens

    def _until_room(self, allowed: int, now: float) -> float:
        """Seconds until the window's tokens fall to `allowed` (a request larger than the
        whole limit waits a minute, then is refused again: as providers do)."""
        left = self._tokens
        for entry in self._window:  # oldest first: each leaves at .at + minute
            left -= entry.tokens
            if left <= allowed:
                return entry.at + self.minute - now
        return self.minute

    def refusal_headers(self, wait: float) -> dict[str, str]:
        return {"Retry-After": str(max(1, math.ceil(wait))), "retry-after-ms": f"{wait * 1000:.0f}"}


def _max_tokens(request: dict[str, Any]) -> int:
    value = request.get("max_tokens", request.get("max_completion_tokens"))
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
