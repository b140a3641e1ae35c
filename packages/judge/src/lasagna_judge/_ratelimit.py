"""Optional requests-per-minute and tokens-per-minute limits, shared by every call of one
LLM object."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable


class RateLimiter:
    """Spaces requests evenly: at most one every 60 / requests_per_minute seconds, and the
    tokens of each (an estimate when it leaves, its real usage once answered) at most
    tokens_per_minute a minute.

    Each caller reserves the next free slot and sleeps until it, so concurrent callers
    queue fairly and no 60-second window ever holds more than the limit (plus one request
    at its very edge). A request's tokens push the next slot back by their share of the
    minute; `settle` corrects that once the reply says how many there were. Used from one
    event loop.
    """

    def __init__(
        self,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        for name, value in (
            ("requests_per_minute", requests_per_minute),
            ("tokens_per_minute", tokens_per_minute),
        ):
            if value is not None and not value > 0:
                raise ValueError(f"{name} must be > 0, got {value}")
        self.interval = 60.0 / requests_per_minute if requests_per_minute else 0.0
        self.token_interval = 60.0 / tokens_per_minute if tokens_per_minute else 0.0
        self._clock = clock
        self._next = float("-inf")  # the next request's slot
        self._next_tokens = float("-inf")  # when the tokens sent so far are paid for

    def due(self, tokens: int = 0) -> float:
        """Seconds a request of about `tokens` tokens asking now would wait for its slot."""
        now = self._clock()
        return max(now, self._next, self._next_tokens) - now

    async def acquire(self, tokens: int = 0) -> None:
        """Wait for a slot for one request of about `tokens` tokens."""
        now = self._clock()
        slot = max(now, self._next, self._next_tokens)
        self._next = slot + self.interval
        if self.token_interval:
            self._next_tokens = slot + tokens * self.token_interval
        if slot > now:
            await asyncio.sleep(slot - now)

    def settle(self, estimated: int, used: int) -> None:
        """A request counted as `estimated` tokens turned out to use `used`."""
        self._next_tokens += (used - estimated) * self.token_interval
