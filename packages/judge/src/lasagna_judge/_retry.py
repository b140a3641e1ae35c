"""When to retry a model request, and how long to wait first.

Exponential backoff with full jitter (a uniform wait between 0 and base * 2**retry, capped),
so that many clients told "slow down" at once do not come back in lockstep; a server's
Retry-After (seconds, an HTTP date, or OpenAI's retry-after-ms) sets the least wait.
"""

from __future__ import annotations

import email.utils
import random
from collections.abc import Mapping
from dataclasses import dataclass

# 408 request timeout, 409 conflict (OpenAI: "retry"), 429 rate limit, 5xx server errors,
# 529 Anthropic "overloaded".
RETRYABLE_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


def is_retryable_status(status: int) -> bool:
    """Whether a reply with this HTTP status is tried again: 408, 409, 429 and every 5xx."""
    return status in RETRYABLE_STATUSES or status >= 500


@dataclass(frozen=True)
class RetryPolicy:
    """`max_retries` retries after the first attempt; waits in seconds."""

    max_retries: int = 5
    base_delay: float = 0.5
    max_delay: float = 30.0
    max_retry_after: float = 60.0

    def backoff(self, retry: int, rng: random.Random) -> float:
        """Full jitter: uniform in [0, min(max_delay, base_delay * 2**retry)]."""
        ceiling = min(self.max_delay, self.base_delay * (2.0 ** min(retry, 32)))
        return rng.uniform(0.0, ceiling)

    def delay(self, retry: int, retry_after: float | None, rng: random.Random) -> float:
        """The wait before retry number `retry` (0 for the first retry)."""
        wait = self.backoff(retry, rng)
        if retry_after is not None:
            wait = max(wait, min(retry_after, self.max_retry_after))
        return wait


def parse_retry_after(headers: Mapping[str, str], now: float) -> float | None:
    """Seconds to wait from `retry-after-ms` or `Retry-After`; None when absent or invalid.

    `now` is the current Unix time, for the HTTP-date form. A date in the past means 0.
    """
    lowered = {name.lower(): value for name, value in headers.items()}
    milliseconds = lowered.get("retry-after-ms")
    if milliseconds is not None:
        try:
            value = float(milliseconds) / 1000.0
        except ValueError:
            value = -1.0
        if value >= 0 and value == value:  # not NaN
            return value
    header = lowered.get("retry-after")
    if header is None:
        return None
    header = header.strip()
    try:
        seconds = float(header)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(header)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            return None
        return max(0.0, when.timestamp() - now)
    if seconds != seconds or seconds < 0 or seconds == float("inf"):
        return None
    return seconds
