"""Backoff and Retry-After arithmetic, and the rate limiter, without a server."""

from __future__ import annotations

import asyncio
import random
import time
from email.utils import formatdate

from hypothesis import given
from hypothesis import strategies as st

from lasagna_judge import RetryPolicy
from lasagna_judge._ratelimit import RateLimiter
from lasagna_judge._retry import is_retryable_status, parse_retry_after


@given(
    retry=st.integers(min_value=0, max_value=100),
    base=st.floats(min_value=0.001, max_value=5),
    cap=st.floats(min_value=0.001, max_value=60),
    seed=st.integers(),
)
def test_full_jitter_stays_between_zero_and_the_capped_exponential(
    retry: int, base: float, cap: float, seed: int
) -> None:
    policy = RetryPolicy(base_delay=base, max_delay=cap)
    wait = policy.backoff(retry, random.Random(seed))
    assert 0.0 <= wait <= min(cap, base * 2.0**retry) + 1e-9


def test_backoff_grows_on_average() -> None:
    policy = RetryPolicy(base_delay=0.5, max_delay=30.0)
    rng = random.Random(0)
    means = [sum(policy.backoff(retry, rng) for _ in range(2000)) / 2000 for retry in range(4)]
    assert means == sorted(means)
    assert 0.2 < means[0] < 0.3  # uniform on [0, 0.5]


@given(after=st.floats(min_value=0, max_value=1000), seed=st.integers())
def test_retry_after_sets_the_least_wait_up_to_its_cap(after: float, seed: int) -> None:
    policy = RetryPolicy(base_delay=0.1, max_delay=1.0, max_retry_after=60.0)
    wait = policy.delay(0, after, random.Random(seed))
    assert wait >= min(after, 60.0)
    assert wait <= max(min(after, 60.0), 0.1)


def test_parse_retry_after_forms() -> None:
    now = time.time()
    assert parse_retry_after({"Retry-After": "2"}, now) == 2.0
    assert parse_retry_after({"retry-after": "0.25"}, now) == 0.25
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}, now) == 1.5
    date = formatdate(now + 30, usegmt=True)
    parsed = parse_retry_after({"Retry-After": date}, now)
    assert parsed is not None and 28.0 <= parsed <= 30.0
    assert parse_retry_after({"Retry-After": formatdate(now - 60, usegmt=True)}, now) == 0.0
    for bad in ("soon", "-1", "nan", "inf", ""):
        assert parse_retry_after({"Retry-After": bad}, now) is None
    assert parse_retry_after({}, now) is None


def test_retryable_statuses() -> None:
    for status in (408, 409, 429, 500, 502, 503, 504, 529, 599):
        assert is_retryable_status(status)
    for status in (200, 400, 401, 403, 404, 422):
        assert not is_retryable_status(status)


def test_rate_limiter_spaces_callers_evenly() -> None:
    async def go() -> tuple[float, list[float]]:
        limiter = RateLimiter(requests_per_minute=1200)  # one every 50 ms
        stamps: list[float] = []

        async def one() -> None:
            await limiter.acquire()
            stamps.append(time.monotonic())

        start = time.monotonic()
        await asyncio.gather(*(one() for _ in range(6)))
        return start, stamps

    start, stamps = asyncio.run(go())
    for i, stamp in enumerate(sorted(stamps)):
        assert stamp >= start + 0.05 * i - 0.001
    assert stamps[-1] - start < 1.0
