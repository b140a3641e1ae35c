"""make_llm against the fake server, at the wire: retries, timeouts, malformed replies,
schema-ignoring replies, the concurrency bound, the rate limit, usage and cost."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from pydantic import BaseModel

from lasagna_judge import LLM, LLMCallError, RetryPolicy, make_llm
from lasagna_judge.testing import FakeLLMServer, Fault, Reply

T = TypeVar("T")
USER = [{"role": "user", "content": "Is the sky blue?"}]
FAST = RetryPolicy(max_retries=5, base_delay=0.01, max_delay=0.05)


class Verdict(BaseModel):
    score: int
    reasoning: str


def run(make: Callable[[], Awaitable[T]]) -> T:
    return asyncio.run(make())


def fake_llm(server: FakeLLMServer, **options: Any) -> LLM:
    options.setdefault("cache", False)
    options.setdefault("retry_policy", FAST)
    options.setdefault("max_retries", FAST.max_retries)
    return make_llm("openai/fake-model", base_url=server.base_url, api_key="sk-test", **options)


def test_complete_sends_model_messages_and_temperature_zero(
    fake_llm_server: FakeLLMServer,
) -> None:
    fake_llm_server.reply = "Yes."

    async def go() -> Any:
        async with fake_llm(fake_llm_server) as llm:
            return await llm.complete(USER)

    completion = run(go)
    assert completion.text == "Yes."
    assert completion.model == "openai/fake-model"
    assert not completion.cached and completion.attempts == 1
    assert completion.usage.input_tokens > 0 and completion.usage.output_tokens > 0
    request = fake_llm_server.requests[0]
    assert request["model"] == "fake-model"
    assert request["messages"] == USER
    assert request["temperature"] == 0
    assert fake_llm_server.headers[0]["authorization"] == "Bearer sk-test"


def test_structured_uses_tools_and_keeps_the_raw_text(fake_llm_server: FakeLLMServer) -> None:
    fake_llm_server.reply = '{"score": 4, "reasoning": "same fact"}'

    async def go() -> Any:
        async with fake_llm(fake_llm_server) as llm:
            return await llm.structured(USER, Verdict)

    result = run(go)
    assert result.status == "ok"
    assert result.value == Verdict(score=4, reasoning="same fact")
    assert result.raw == '{"score": 4, "reasoning": "same fact"}'
    request = fake_llm_server.requests[0]
    assert request["tools"][0]["function"]["name"] == "Verdict"
    assert request["tool_choice"]["function"]["name"] == "Verdict"


@pytest.mark.parametrize(
    "reply",
    [
        "The score is 4 because it matches.",  # not JSON at all
        '{"score": "four", "reasoning": "x"}',  # JSON that breaks the schema
        Reply('{"score": 4, "reasoning": "x"}', tool_call=False),  # ignores the tool
    ],
)
def test_output_that_never_validates_is_unparsed_with_raw_kept(
    fake_llm_server: FakeLLMServer, reply: str | Reply
) -> None:
    fake_llm_server.reply = reply

    async def go() -> Any:
        async with fake_llm(fake_llm_server) as llm:
            return await llm.structured(USER, Verdict, max_validation_retries=2), llm.calls_made

    result, calls = run(go)
    assert result.status == "unparsed"
    assert result.value is None
    assert result.raw == (reply.content if isinstance(reply, Reply) else reply)
    assert result.attempts == calls == 3  # one call and two re-asks
    assert result.validation_errors
    # The re-asks tell the model what was wrong.
    assert len(fake_llm_server.requests[-1]["messages"]) > len(USER)


def test_a_later_valid_reply_after_a_bad_one_is_ok(fake_llm_server: FakeLLMServer) -> None:
    fake_llm_server.reply = ["score: 4", '{"score": 3, "reasoning": "minor issue"}']

    async def go() -> Any:
        async with fake_llm(fake_llm_server) as llm:
            return await llm.structured(USER, Verdict, max_validation_retries=1)

    result = run(go)
    assert result.status == "ok" and result.value is not None and result.value.score == 3
    assert result.attempts == 2


def test_429_is_retried_after_retry_after(fake_llm_server: FakeLLMServer) -> None:
    fake_llm_server.reply = [Fault(status=429, retry_after=0.3), "fine"]

    async def go() -> Any:
        async with fake_llm(fake_llm_server) as llm:
            return await llm.complete(USER)

    completion = run(go)
    assert completion.text == "fine"
    assert completion.attempts == 2
    first, second = fake_llm_server.times
    assert second - first >= 0.3
    assert second - first < 2.0


def test_retry_after_as_an_http_date_is_honoured(fake_llm_server: FakeLLMServer) -> None:
    from email.utils import formatdate

    fake_llm_server.reply = lambda request: (
        Fault(status=503, retry_after=formatdate(time.time() + 2.5, usegmt=True))
        if fake_llm_server.calls == 1
        else "fine"
    )

    async def go() -> Any:
        async with fake_llm(fake_llm_server) as llm:
            return await llm.complete(USER)

    assert run(go).text == "fine"
    first, second = fake_llm_server.times
    assert second - first >= 0.9  # a date has whole seconds: 1.5 to 2.5 s remained when sent


def test_500_then_success(fake_llm_server: FakeLLMServer) -> None:
    fake_llm_server.reply = [Fault(status=500), Fault(status=502), '{"score": 1, "reasoning": "x"}']

    async def go() -> Any:
        async with fake_llm(fake_llm_server) as llm:
            return await llm.structured(USER, Verdict), llm.calls_made

    result, calls = run(go)
    assert result.status == "ok" and result.attempts == 3 and calls == 3


def test_retries_are_bounded_and_end_in_llm_call_error(fake_llm_server: FakeLLMServer) -> None:
    fake_llm_server.reply = Fault(status=429)

    async def go() -> Any:
        async with fake_llm(fake_llm_server, max_retries=2) as llm:
            with pytest.raises(LLMCallError) as caught:
                await llm.complete(USER)
            return caught.value, llm.calls_made

    error, calls = run(go)
    assert calls == 3 and error.attempts == 3 and error.status == 429
    assert str(error) == (
        "openai/fake-model: the call failed after 3 attempts: HTTP 429: injected fault 429"
    )


def test_timeouts_are_retried_then_reported(fake_llm_server: FakeLLMServer) -> None:
    fake_llm_server.reply = Fault(delay=5.0)

    async def go() -> Any:
        async with fake_llm(fake_llm_server, timeout=0.2, max_retries=1) as llm:
            start = time.monotonic()
            with pytest.raises(LLMCallError) as caught:
                await llm.structured(USER, Verdict)
            return caught.value, time.monotonic() - start

    error, elapsed = run(go)
    assert "timed out after 0.2 s" in str(error)
    assert error.attempts == 2 and error.status is None
    assert fake_llm_server.calls == 2
    assert elapsed < 2.0


def test_a_slow_reply_then_a_quick_one_succeeds(fake_llm_server: FakeLLMServer) -> None:
    fake_llm_server.reply = [Fault(delay=2.0, content="late"), "in time"]

    async def go() -> Any:
        async with fake_llm(fake_llm_server, timeout=0.3) as llm:
            return await llm.complete(USER)

    assert run(go).text == "in time"


def test_malformed_json_is_retried_then_reported(fake_llm_server: FakeLLMServer) -> None:
    fake_llm_server.reply = [Fault(malformed=True), "ok now"]

    async def go(max_retries: int) -> Any:
        async with fake_llm(fake_llm_server, max_retries=max_retries) as llm:
            return await llm.complete(USER)

    assert asyncio.run(go(3)).text == "ok now"
    fake_llm_server.reply = Fault(malformed=True)
    with pytest.raises(LLMCallError, match="body that is not JSON"):
        asyncio.run(go(1))


def test_client_errors_are_not_retried_and_hint_at_the_fix(
    fake_llm_server: FakeLLMServer,
) -> None:
    fake_llm_server.reply = Fault(status=401)

    async def go() -> Any:
        async with fake_llm(fake_llm_server) as llm:
            with pytest.raises(LLMCallError) as caught:
                await llm.complete(USER)
            return caught.value

    error = run(go)
    assert fake_llm_server.calls == 1
    assert error.status == 401 and "check the API key" in str(error)


def test_connection_refused_is_an_llm_call_error() -> None:
    with FakeLLMServer() as server:
        base_url = server.base_url  # a port that is closed once the server stops

    async def go() -> Any:
        llm = make_llm("openai/x", base_url=base_url, api_key="k", cache=False, retry_policy=FAST)
        async with llm:
            with pytest.raises(LLMCallError) as caught:
                await llm.complete(USER)
            return caught.value

    error = run(go)
    assert "cannot connect to http://127.0.0.1" in str(error)
    assert error.attempts == FAST.max_retries + 1


def test_concurrency_bound_is_observed_at_the_server(fake_llm_server: FakeLLMServer) -> None:
    fake_llm_server.latency = 0.05

    async def go() -> None:
        async with fake_llm(fake_llm_server, concurrency=4) as llm:
            await asyncio.gather(
                *(llm.complete([{"role": "user", "content": f"q{i}"}]) for i in range(24))
            )

    run(go)
    assert fake_llm_server.calls == 24
    assert fake_llm_server.max_in_flight == 4


def test_requests_per_minute_spaces_the_requests(fake_llm_server: FakeLLMServer) -> None:
    async def go() -> float:
        async with fake_llm(fake_llm_server, concurrency=8, requests_per_minute=600) as llm:
            start = time.monotonic()
            await asyncio.gather(
                *(llm.complete([{"role": "user", "content": f"q{i}"}]) for i in range(5))
            )
            return start

    start = run(go)
    # 600 a minute: request i leaves no sooner than start + 0.1 * i, so the i-th arrival
    # (in time order) cannot come sooner either, however the network delays each one.
    for i, arrived in enumerate(sorted(fake_llm_server.times)):
        assert arrived >= start + 0.1 * i - 0.005


def test_usage_and_cost_add_up(fake_llm_server: FakeLLMServer) -> None:
    fake_llm_server.reply = [
        Reply("a", input_tokens=100, output_tokens=10),
        Fault(status=500),
        Reply("b", input_tokens=200, output_tokens=20),
    ]
    prices = {"openai/fake-model": (2.0, 8.0)}

    async def go() -> Any:
        async with fake_llm(fake_llm_server, prices=prices) as llm:
            first = await llm.complete([{"role": "user", "content": "1"}])
            second = await llm.complete([{"role": "user", "content": "2"}])
            return first, second, llm.usage, llm.calls_made, llm.cost_usd

    first, second, usage, calls, cost = run(go)
    assert (first.usage.input_tokens, first.usage.output_tokens) == (100, 10)
    assert (second.usage.input_tokens, second.usage.output_tokens) == (200, 20)
    assert second.attempts == 2
    assert (usage.input_tokens, usage.output_tokens, calls) == (300, 30, 3)
    assert cost == pytest.approx((300 * 2.0 + 30 * 8.0) / 1_000_000)


def test_cost_is_none_without_a_price(fake_llm_server: FakeLLMServer) -> None:
    async def go() -> Any:
        async with fake_llm(fake_llm_server, prices={"openai/other": (1.0, 1.0)}) as llm:
            await llm.complete(USER)
            return llm.cost_usd

    assert run(go) is None


def test_reasoning_models_get_no_temperature(fake_llm_server: FakeLLMServer) -> None:
    async def go() -> None:
        llm = make_llm("openai/o3-mini", base_url=fake_llm_server.base_url, cache=False)
        async with llm:
            await llm.complete(USER, max_tokens=50)
            await llm.complete(USER, temperature=1.0)

    run(go)
    default, explicit = fake_llm_server.requests
    assert "temperature" not in default
    assert default["max_completion_tokens"] == 50 and "max_tokens" not in default
    assert explicit["temperature"] == 1.0


@pytest.mark.parametrize(
    ("mode", "expected"),
    [("json_schema", "json_schema"), ("json", "json_object"), ("md_json", None)],
)
def test_structured_modes(fake_llm_server: FakeLLMServer, mode: Any, expected: str | None) -> None:
    fake_llm_server.reply = '{"score": 2, "reasoning": "misses a fact"}'

    async def go() -> Any:
        async with fake_llm(fake_llm_server, mode=mode) as llm:
            return await llm.structured(USER, Verdict)

    result = run(go)
    assert result.status == "ok" and result.value is not None and result.value.score == 2
    request = fake_llm_server.requests[0]
    assert "tools" not in request
    assert request.get("response_format", {}).get("type") == expected


def test_ollama_defaults_to_json_schema(fake_llm_server: FakeLLMServer) -> None:
    fake_llm_server.reply = '{"score": 4, "reasoning": "x"}'

    async def go() -> Any:
        llm = make_llm("ollama/llama3.2", base_url=fake_llm_server.base_url, cache=False)
        async with llm:
            return await llm.structured(USER, Verdict)

    assert run(go).status == "ok"
    assert fake_llm_server.requests[0]["response_format"]["type"] == "json_schema"
    assert fake_llm_server.requests[0]["model"] == "llama3.2"


def test_an_llm_serves_several_event_loops_in_turn(
    fake_llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm_server.latency = 0.02
    llm = fake_llm(fake_llm_server, concurrency=2, cache=tmp_path / "c.sqlite")

    async def batch(first: int) -> list[bool]:
        async with llm:  # closes connections and the cache file before the loop ends
            replies = await asyncio.gather(
                *(llm.complete([{"role": "user", "content": f"q{i}"}]) for i in range(first, 6))
            )
        return [r.cached for r in replies]

    assert asyncio.run(batch(3)) == [False] * 3
    assert asyncio.run(batch(0)) == [False] * 3 + [True] * 3  # a new loop, the same cache
    assert fake_llm_server.calls == 6
    assert fake_llm_server.max_in_flight == 2
