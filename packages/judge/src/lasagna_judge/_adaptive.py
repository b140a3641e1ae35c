"""The pace that adapts to a provider's rate limit, so that nobody has to guess it: AIMD on
the requests sent per second, the concurrency staying the bound on calls in flight.

- Until the first refusal (429, 503, 529) requests go as fast as the concurrency lets
  them: a server with no limit sees no difference.
- A refusal holds every new request until its Retry-After. The first sets the pace to
  BACKOFF x the rate the server admits: the requests sent before the refused one and not
  refused (those still in flight too), since the first reply, over that span plus the wait
  it asks for; at a sliding window's first refusal that is N / the window, whatever the
  window's length. A later one cuts the pace it was sent at to BACKOFF x itself (or x what
  actually went, when the concurrency held the calls under the pace).
- Only a request sent SETTLE seconds after the last cut can cut again: the calls sent at
  the old pace, and those that meet a full window still draining, count once.
- While calls succeed the pace climbs: first back toward the rate it was refused at (the
  ceiling), APPROACH of the way a second, so that it spends its time just under the limit
  and crosses it slowly (each crossing costs refusals); from there on slowly (CLIMB per
  second) and faster the longer no refusal comes, so a limit that was lifted is found
  again; once the pace is far above what is sent it stops pacing.
- Requests take the pace's slots one by one, in order, each when it is due at the pace
  of that moment: a cut or a hold holds the waiting calls at once, not after those that
  had already been given a slot. A slot taken late (the event loop busy, the process
  waiting for a core) is made up, up to CATCH_UP seconds of slots, so late wake-ups do
  not slow the pace below what it was set to.
"""

from __future__ import annotations

import asyncio
import bisect
import time
from collections import deque
from collections.abc import Callable

BACKOFF = 0.97
APPROACH = 0.3
"""After a cut, the share of the way back to the ceiling the pace climbs a second."""
NEAR = 0.995
"""A pace this close to the ceiling has reached it: from there it climbs by CLIMB."""
CATCH_UP = 0.05
"""Seconds of slots a late request may make up: a burst of at most rate x this, 5% of the
shortest window a provider counts over (a second)."""
CLIMB = 0.01
"""The pace's rise per second of success, right after a cut (1%)."""
SPEEDUP = 10.0
"""Seconds without a refusal over which the rise doubles (then triples, ...)."""
SETTLE = 1.0
"""Seconds after a cut during which refusals hold the calls but do not cut again."""
LOOKBACK = 60.0
"""Seconds of requests the admitted rate is measured over: limits are per minute."""
UNPACED = 4.0
"""A pace this many times the rate sent is not pacing: it is dropped."""
MAX_HOLD = 60.0
"""Seconds a refusal holds the calls, at most, whatever its Retry-After asks (one
`Retry-After: 1000000000` would otherwise freeze a run)."""


class AdaptivePace:
    """One LLM object's adaptive pace (see the module docstring). `acquire` before a
    request goes on the wire, then `admitted` or `refused` with the time it went.
    Used from one event loop."""

    def __init__(
        self,
        *,
        backoff: float = BACKOFF,
        approach: float = APPROACH,
        climb: float = CLIMB,
        speedup: float = SPEEDUP,
        settle: float = SETTLE,
        lookback: float = LOOKBACK,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not 0 < backoff < 1:
            raise ValueError(f"backoff must be between 0 and 1, got {backoff}")
        self.backoff, self.approach = backoff, approach
        self.climb, self.speedup = climb, speedup
        self.settle, self.lookback = settle, lookback
        self._clock = clock
        self.rate: float | None = None
        """Requests a second; None: not paced."""
        self.cuts = 0
        """How many times the pace was cut."""
        self.ceiling: float | None = None
        """The rate of the last cut before its backoff: what was refused."""
        self._reached: float | None = None  # when the pace came back near the ceiling
        self._last = float("-inf")  # when the last request went
        self._hold = float("-inf")
        self._cut = float("-inf")
        self._climbed = float("-inf")
        self._sent: deque[float] = deque()  # send times, the last `lookback` seconds
        self._refused: deque[float] = deque()  # the send times of the refused among them
        self._first: float | None = None  # when the first admitted reply came back
        self._turn: asyncio.Lock | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def due(self) -> float:
        """Seconds until the next slot of the pace (a hold included), were it asked now."""
        now = self._clock()
        slot = self._hold
        if self.rate is not None:
            slot = max(slot, self._last + 1.0 / self.rate)
        return max(slot - now, 0.0)

    async def acquire(self) -> float:
        """Wait for the next slot of the pace (and any Retry-After); the time it goes."""
        if self.rate is None and self._clock() >= self._hold:
            return self._went(self._clock())  # unpaced: no turn to wait for
        loop = asyncio.get_running_loop()
        if self._turn is None or loop is not self._loop:
            self._turn, self._loop = asyncio.Lock(), loop
        async with self._turn:  # FIFO: each in turn, at the pace of the moment it is due
            while True:
                now = self._clock()
                slot = self._hold
                if self.rate is not None:
                    slot = max(slot, self._last + 1.0 / self.rate)
                if slot <= now:
                    break
                await asyncio.sleep(slot - now)
            # On time to the slot: a late wake-up's slots are made up, up to CATCH_UP s of them.
            return self._went(max(slot, now - CATCH_UP) if self._sent else now)

    def _went(self, at: float) -> float:
        self._last = at
        if not self._sent or at >= self._sent[-1]:
            self._sent.append(at)  # in order: counted by bisection
        return at

    def admitted(self, sent: float) -> None:
        now = self._clock()
        if self._first is None:
            self._first = now
        self._trim(now)
        if self.rate is None:
            return
        seconds = min(now - max(self._climbed, self._cut), 1.0)
        self._climbed = now
        if self._reached is None and self.ceiling is not None:
            if self.rate < NEAR * self.ceiling:
                self.rate += (self.ceiling - self.rate) * min(self.approach * seconds, 1.0)
                return
            self._reached = now
        calm = now - (self._cut if self._reached is None else self._reached)
        self.rate *= 1.0 + self.climb * seconds * (1.0 + calm / self.speedup)
        if self.rate > UNPACED * self._sent_rate(now, self.lookback):
            self.rate = self.ceiling = None

    def refused(self, sent: float, retry_after: float) -> None:
        now = self._clock()
        retry_after = min(max(retry_after, 0.0), MAX_HOLD)
        self._hold = max(self._hold, now + retry_after)
        self._refused.append(sent)
        if sent < self._cut + self.settle:
            return  # sent at the old pace, or into a full window still draining
        self._trim(now)
        if self.rate is None:
            rate = self._admitted_rate(sent, retry_after)
            if rate is None:
                return  # nothing admitted yet: the wait it asks for is all that is known
        else:
            went = self._sent_rate(sent, 5.0)
            rate = went if went < 0.8 * self.rate else self.rate
        self.ceiling = rate
        self.rate = max(self.backoff * rate, 1.0 / self.lookback)
        self._cut, self._reached = now, None
        self.cuts += 1

    def _admitted_rate(self, sent: float, retry_after: float) -> float | None:
        """The rate the server admits, from its first refusal of a request sent at `sent`:
        what it admitted of the requests sent before it (the calls still in flight
        included: they reached it first), over the span from the first reply (the first
        calls' connections take time) or the lookback, plus the wait it asks for; None
        when none was."""
        before = sum(1 for at in self._sent if at < sent) - sum(
            1 for at in self._refused if at < sent
        )
        if before <= 0:
            return None
        first = sent if self._first is None else self._first  # no reply yet: a burst
        span = max(sent - max(first, sent - self.lookback), 0.0) + retry_after
        return before / span if span > 0 else float(before)

    def _sent_rate(self, until: float, seconds: float) -> float:
        """Requests a second sent over the `seconds` before `until` (or since the first)."""
        since = max(until - seconds, self._sent[0]) if self._sent else until
        count = bisect.bisect_left(self._sent, until) - bisect.bisect_left(self._sent, since)
        return count / max(until - since, 1.0)

    def _trim(self, now: float) -> None:
        for times in (self._sent, self._refused):
            while times and times[0] < now - self.lookback:
                times.popleft()
