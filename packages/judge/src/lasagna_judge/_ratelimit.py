"""An optional requests-per-minute limit, shared by every call of one LLM object."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable


class RateLimiter:
    """Spaces requests evenly: at most one every 60 / requests_per_minute seconds.

    Each caller reserves the next free slot and sleeps until it, so concurrent callers
    queue fairly and no 60-second window ever holds more than the limit (plus one at its
    very edge). Used from one event loop.
    """

    def __init__(
        self, requests_per_minute: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if not requests_per_minute > 0:
            raise ValueError(f"requests_per_minute must be > 0, got {requests_per_minute}")
        self.interval = 60.0 / requests_per_minute
        self._clock = clock
        self._next = float("-inf")

    async def acquire(self) -> None:
        now = self._clock()
        slot = max(now, self._next)
        self._next = slot + self.interval
        if slot > now:
            await asyncio.sleep(slot - now)
