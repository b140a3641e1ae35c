"""Rate limits at the wire: a FakeLLMServer with `RateLimits` (a sliding window that answers
429 with Retry-After) and a short window, so that each test takes seconds. Every test
also checks that no call is lost (each returns its answer) or paid twice (the server
admitted each request once)."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

from lasagna_judge import LLM, LLMCallError, RetryPolicy, make_llm
from lasagna_judge._adaptive import AdaptivePace
from lasagna_judge.testing import FakeLLMServer, RateLimits, lognormal_latency

FAST = RetryPolicy(max_retries=5, base_delay=0.01, max_delay=0.05)


@pytest.fixture(autouse=True)
def _server_gets_its_turn() -> Iterator[None]:
    """The fake server runs in a thread of this process, and the client's SDK work holds
    the interpreter's lock for up to 5 ms at a time: on a small machine the server then
    answers a burst of new connections in an order of its own, which no server of its own
    process would. A 1 ms switch interval lets it answer as one would."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.001)
    yield
    sys.setswitchinterval(interval)


def fake_llm(server: FakeLLMServer, **options: Any) -> LLM:
    options.setdefault("cache", False)
    options.setdefault("retry_policy", FAST)
    return make_llm("openai/fake-model", base_url=server.base_url, api_key="sk-test", **options)


def ask_all(server: FakeLLMServer, prompts: list[str], **options: Any) -> tuple[list[Any], float]:
    """Every prompt asked at once (the LLM's concurrency bounds them); the answers (or the
    errors) in order, and the seconds it took."""

    async def go() -> tuple[list[Any], float]:
        async with fake_llm(server, **options) as llm:
            start = time.monotonic()
            answers = await asyncio.gather(
                *(llm.complete([{"role": "user", "content": p}]) for p in prompts),
                return_exceptions=True,
            )
            return list(answers), time.monotonic() - start

    return asyncio.run(go())


def test_adaptive_pace_backs_off_on_429_and_keeps_near_the_limit() -> None:
    # 60 requests a second (30 in any 0.5 s), 32 calls in flight: unpaced they would go at
    # over 1,000 a second. The pace finds the limit, and few requests are refused.
    limits = RateLimits(requests_per_minute=30, minute=0.5)
    prompts = [f"question {i}" for i in range(360)]
    with FakeLLMServer(latency=lognormal_latency(0.02, seed=1), limits=limits) as server:
        answers, seconds = ask_all(server, prompts, concurrency=32)
    assert all(not isinstance(a, BaseException) for a in answers), answers
    assert [a.text for a in answers] == ["ok"] * len(prompts)
    assert limits.admitted == len(prompts)  # none paid twice
    bound = len(prompts) / 60
    assert seconds < 1.5 * bound, (seconds, bound)
    assert limits.rejected <= 0.05 * (limits.admitted + limits.rejected), limits.rejected


def test_a_fixed_concurrency_is_refused_far_more_often() -> None:
    # The same limit without the pace: each refused call waits its own Retry-After, and
    # then goes with the others, into a window that is full again.
    limits = RateLimits(requests_per_minute=30, minute=0.5)
    prompts = [f"question {i}" for i in range(180)]
    with FakeLLMServer(latency=lognormal_latency(0.02, seed=1), limits=limits) as server:
        ask_all(server, prompts, concurrency=32, adaptive=False, max_retries=50)
    fixed = limits.rejected
    limits = RateLimits(requests_per_minute=30, minute=0.5)
    with FakeLLMServer(latency=lognormal_latency(0.02, seed=1), limits=limits) as server:
        ask_all(server, prompts, concurrency=32)
    assert limits.rejected * 5 < fixed, (limits.rejected, fixed)


@pytest.mark.parametrize("adaptive", [True, False])
def test_retry_after_is_honoured(adaptive: bool) -> None:
    # 5 requests a second: of 12 sent at once, 7 are refused and told to wait until the
    # first admitted leaves the window. None of them comes back sooner, and none is lost.
    limits = RateLimits(requests_per_minute=5, minute=1.0)
    prompts = [f"q{i}" for i in range(12)]
    with FakeLLMServer(limits=limits) as server:
        answers, _ = ask_all(server, prompts, concurrency=12, adaptive=adaptive)
        arrivals = sorted(server.times)
    assert all(not isinstance(a, BaseException) for a in answers), answers
    assert limits.admitted == 12
    first_refusal = limits.rejected_at[0]
    room = arrivals[0] + 1.0  # when the first admitted request leaves the window
    burst = [t for t in arrivals if t <= first_refusal + 0.2]
    later = [t for t in arrivals if t > first_refusal + 0.2]
    assert len(burst) == 12 and later
    assert min(later) >= room - 0.02, min(later) - room


def test_tokens_per_minute_holds() -> None:
    # The server admits 600 tokens a second; each request is about 60. The client's limit
    # (a little under, counted per real minute) spaces them so that none is refused.
    limits = RateLimits(tokens_per_minute=600, minute=1.0)
    prompts = [f"question {i}: " + "x" * 220 for i in range(40)]
    with FakeLLMServer(limits=limits) as server:
        answers, seconds = ask_all(
            server, prompts, concurrency=40, tokens_per_minute=0.9 * 600 * 60, adaptive=False
        )
        usage = sum(r["messages"][0]["content"].__len__() // 4 for r in server.requests)
    assert all(not isinstance(a, BaseException) for a in answers), answers
    assert limits.rejected == 0 and limits.admitted == len(prompts)
    # 40 x ~60 tokens at 540 a second: the last leaves no sooner than ~4 s after the first.
    assert seconds >= usage / 540 - 1.0, (seconds, usage)


def test_adaptive_pace_finds_a_tokens_per_minute_limit() -> None:
    limits = RateLimits(tokens_per_minute=1200, minute=0.5)
    prompts = [f"question {i}: " + "x" * 220 for i in range(200)]
    with FakeLLMServer(latency=0.01, limits=limits) as server:
        answers, _ = ask_all(server, prompts, concurrency=32)
    assert all(not isinstance(a, BaseException) for a in answers), answers
    assert limits.admitted == len(prompts)
    assert limits.rejected <= 0.1 * (limits.admitted + limits.rejected), limits.rejected


def test_a_call_refused_past_its_retries_fails_once_and_says_so() -> None:
    # A limit of 1 a minute (a minute of 60 s): the second call is refused and its retries
    # would all wait past the deadline, so it fails in one line; it was never admitted.
    limits = RateLimits(requests_per_minute=1, minute=60.0)
    with FakeLLMServer(limits=limits) as server:
        answers, seconds = ask_all(server, ["a", "b"], concurrency=2, deadline=1.0)
    errors = [a for a in answers if isinstance(a, BaseException)]
    assert len(errors) == 1 and isinstance(errors[0], LLMCallError)
    assert "429" in str(errors[0])
    assert limits.admitted == 1 and seconds < 5


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_pace_climbs_while_calls_succeed_and_stops_pacing_far_above() -> None:
    clock = Clock()
    pace = AdaptivePace(clock=clock)

    async def go() -> None:
        # 100 requests admitted over 10 s, then one refused with a 2 s wait.
        for _ in range(100):
            sent = await pace.acquire()
            clock.now += 0.1
            pace.admitted(sent)
        refused = await pace.acquire()
        pace.refused(refused, 2.0)
        assert pace.rate is not None and pace.cuts == 1
        # 100 admitted over 10 s + 2 s of wait: ~8.3 a second, cut to 95%.
        assert pace.rate == pytest.approx(0.95 * 100 / 12.0, rel=0.05)
        cut = pace.rate
        clock.now += 2.0
        for _ in range(200):
            clock.now += 1.0 / pace.rate if pace.rate else 0.05  # no wait for the slot
            sent = await pace.acquire()
            clock.now += 0.05
            pace.admitted(sent)
            if pace.rate is None:
                break
        assert pace.rate is None or pace.rate > cut

    asyncio.run(go())


def test_slots_taken_late_are_made_up_within_a_bound() -> None:
    # A pace of 100 a second whose caller comes 0.35 s late (a busy event loop): the slots
    # it missed go at once, up to CATCH_UP seconds of them, so the pace loses no time to a
    # late wake-up and never bursts more than rate x CATCH_UP.
    from lasagna_judge._adaptive import CATCH_UP

    clock = Clock()
    pace = AdaptivePace(clock=clock)
    pace.rate = 100.0
    made_up = round(CATCH_UP * 100)

    async def go() -> list[float]:
        sent = [await pace.acquire()]  # the first goes when asked
        clock.now = 0.35
        sent += [await pace.acquire() for _ in range(made_up)]  # made up: they go now
        for _ in range(2):  # then on the pace again
            assert pace.due() <= 0.01 + 1e-9
            clock.now += pace.due() + 1e-9  # past the slot, whatever the rounding
            sent.append(await pace.acquire())
        return sent

    sent = asyncio.run(asyncio.wait_for(go(), 10))  # a slot never due: fails, not hangs
    late = [0.35 - CATCH_UP + i * 0.01 for i in range(made_up)]
    assert sent == pytest.approx([0.0, *late, 0.35, 0.36], abs=1e-6)


def test_after_a_cut_the_pace_comes_back_under_the_rate_refused_then_climbs_past_it() -> None:
    clock = Clock()
    pace = AdaptivePace(clock=clock)

    async def go() -> None:
        pace.rate = 100.0
        for _ in range(500):  # 5 s at 100 a second, then one refused
            clock.now += pace.due() + 1e-9  # past the slot, whatever the rounding
            await pace.acquire()
        clock.now += pace.due() + 1e-9
        pace.refused(await pace.acquire(), 0.0)
        assert pace.ceiling == 100.0 and pace.rate == pytest.approx(97.0)
        rates = []
        for _ in range(2000):  # each call when its slot is due, none refused
            clock.now += pace.due() + 1e-9  # past the slot, whatever the rounding
            pace.admitted(await pace.acquire())
            rates.append((clock.now, pace.rate or 0.0))
        # 5 s after the cut it is near the rate refused, not past it; later it climbs past.
        near = [rate for at, rate in rates if at >= 10.0]
        assert 99.0 < near[0] < 100.0
        assert rates[-1][1] > 100.5

    asyncio.run(asyncio.wait_for(go(), 10))  # a slot never due: fails, not hangs
