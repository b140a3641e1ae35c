"""The pace that adapts to a provider's rate limit, so that nobody has to guess
`concurrency`: AIMD on the requests sent per second, the concurrency staying the bound on
calls in flight.

- Until the first refusal (429, 503, 529) requests go as fast as the concurrency lets
  them: a server with no limit sees no difference.
- A refusal holds every new request until its Retry-After, and sets the pace to BACKOFF x
  the rate the server admits: the requests sent before the refused one and not refused
  (those still in flight too), over the last minute or since the first reply, plus the
  wait it asks for. At a sliding window's first refusal that is N / the window, whatever
  the window's length. A pace already under it stays: a full window is still draining.
  Only a request sent after the last cut can cut again: the calls in flight at the old
  pace, refused together, count once.
- While calls succeed the pace climbs, slowly at first (CLIMB per second) and faster the
  longer no refusal comes, so a limit that was lifted is found again; once the pace is
  far above what is admitted it stops pacing.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable

BACKOFF = 0.9
CLIMB = 0.01
"""The pace's rise per second of success, right after a cut (1%)."""
SPEEDUP = 10.0
"""Seconds without a refusal over which the rise doubles (then triples, ...)."""
LOOKBACK = 60.0
"""Seconds of admitted requests the admitted rate is measured over: limits are per minute."""
UNPACED = 4.0
"""A pace this many times the admitted rate is not pacing: it is dropped."""


class AdaptivePace:
    """One LLM object's adaptive pace (see the module docstring). `acquire` before a
    request goes on the wire, then `admitted` or `refused` with the time it went.
    Used from one event loop."""

    def __init__(
        self,
        *,
        backoff: float = BACKOFF,
        climb: float = CLIMB,
        speedup: float = SPEEDUP,
        lookback: float = LOOKBACK,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not 0 < backoff < 1:
            raise ValueError(f"backoff must be between 0 and 1, got {backoff}")
        self.backoff, self.climb, self.speedup, self.lookback = backoff, climb, speedup, lookback
        self._clock = clock
        self.rate: float | None = None
        """Requests a second; None: not paced."""
        self.cuts = 0
        """How many times the pace was cut."""
        self._next = float("-inf")
        self._hold = float("-inf")
        self._cut = float("-inf")
        self._climbed = float("-inf")
        self._sent: deque[float] = deque()  # send times, the last `lookback` seconds
        self._refused: deque[float] = deque()  # the send times of the refused among them
        self._first: float | None = None  # when the first admitted reply came back

    async def acquire(self) -> float:
        """Wait for the next slot of the pace (and any Retry-After); the time it goes."""
        now = self._clock()
        slot = max(now, self._hold)
        if self.rate is not None:
            slot = max(slot, self._next)
            self._next = slot + 1.0 / self.rate
        self._sent.append(slot)
        if slot > now:
            await asyncio.sleep(slot - now)
        return slot

    def admitted(self, sent: float) -> None:
        now = self._clock()
        if self._first is None:
            self._first = now
        self._trim(now)
        if self.rate is None:
            return
        seconds = min(now - max(self._climbed, self._cut), 1.0)
        self._climbed = now
        calm = now - self._cut
        self.rate *= 1.0 + self.climb * seconds * (1.0 + calm / self.speedup)
        if self.rate > UNPACED * self._sent_rate(now):
            self.rate = None

    def refused(self, sent: float, retry_after: float) -> None:
        now = self._clock()
        self._hold = max(self._hold, now + retry_after)
        self._refused.append(sent)
        if sent < self._cut:
            return  # sent at the old pace: that one was cut already
        self._trim(now)
        rate = self.backoff * self._admitted_rate(sent, retry_after)
        if self.rate is not None and self.rate <= rate:
            return  # cut to what the server admits already: a full window still draining
        self.rate = max(rate, 1.0 / self.lookback)
        self._cut = now
        self._next = max(self._next, self._hold)
        self.cuts += 1

    def _admitted_rate(self, sent: float, retry_after: float) -> float:
        """The rate the server admits, from its refusal of a request sent at `sent`: what it
        admitted of the requests sent before it (the calls still in flight included: they
        reached it first), over the span from the first reply (the first calls' connections
        take time) or the lookback, plus the wait it asks for. At the first refusal of a
        sliding window of N requests: N over the window."""
        before = sum(1 for at in self._sent if at < sent) - sum(
            1 for at in self._refused if at < sent
        )
        if before <= 0:
            return 1.0 / self.lookback  # nothing admitted: one a minute to start from
        first = sent if self._first is None else self._first  # no reply yet: a burst
        span = max(sent - max(first, sent - self.lookback), 0.0) + retry_after
        return before / span if span > 0 else float(before)

    def _sent_rate(self, now: float) -> float:
        """Requests a second sent over the lookback (or since the first), at least 1 s."""
        since = self._sent[0] if self._sent else now
        return len(self._sent) / max(now - since, 1.0)

    def _trim(self, now: float) -> None:
        for times in (self._sent, self._refused):
            while times and times[0] < now - self.lookback:
                times.popleft()
