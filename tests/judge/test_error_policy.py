"""lasagna's one error and wait policy over the SDKs (issue 43), at the wire: the provider's
own message in the call's one line, no retry of a 4xx no retry can fix, a bounded number
of 5xx retries, every wait capped and a long one said with its reason; an embedding input
over the model's limit cut or refused before any call, the count said."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from lasagna_judge import JudgeError, LLMCallError, RetryPolicy, make_embedder, make_llm
from lasagna_judge._adaptive import MAX_HOLD, AdaptivePace
from lasagna_judge.testing import FakeLLMServer, Fault

USER = [{"role": "user", "content": "Which vitamin prevents scurvy?"}]
FAST = RetryPolicy(max_retries=3, base_delay=0.01, max_delay=0.02)
PROVIDERS = ["openai", "anthropic"]


def call(server: FakeLLMServer, provider: str = "openai", **options: Any) -> Any:
    if provider == "anthropic":
        pytest.importorskip("anthropic")
    url = server.base_url if provider == "openai" else server.url
    options.setdefault("retry_policy", FAST)
    options.setdefault("max_retries", options["retry_policy"].max_retries)
    llm = make_llm(f"{provider}/m", base_url=url, api_key="k", cache=False, **options)

    async def go() -> Any:
        async with llm:
            return await llm.complete(USER)

    return asyncio.run(go())


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_5xx_is_retried_a_bounded_number_of_times_and_its_body_ends_the_line(
    provider: str,
) -> None:
    fault = Fault(status=500, message="the shard holding your model is rebooting")
    with FakeLLMServer(reply=fault) as server:
        with pytest.raises(LLMCallError) as caught:
            call(server, provider)
        assert server.calls == 4  # the first and 3 retries
    assert str(caught.value) == (
        f"{provider}/m: the call failed after 4 attempts: HTTP 500: the shard holding your "
        "model is rebooting"
    )


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_a_4xx_no_retry_can_fix_is_sent_once_with_the_providers_words(
    provider: str, status: int
) -> None:
    fault = Fault(status=status, message="max_tokens: must be at most 8192")
    with FakeLLMServer(reply=fault) as server:
        with pytest.raises(LLMCallError) as caught:
            call(server, provider)
        assert server.calls == 1
    assert f"after 1 attempt: HTTP {status}: max_tokens: must be at most 8192" in str(caught.value)
    assert caught.value.status == status


@pytest.mark.parametrize("status", [408, 409, 429])
def test_408_409_and_429_are_retried(status: int) -> None:
    with FakeLLMServer(reply=[Fault(status=status), "Vitamin C"]) as server:
        assert call(server).text == "Vitamin C"
        assert server.calls == 2


def test_a_retry_after_of_a_billion_seconds_is_capped_and_said(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("lasagna_judge._transport.SAID_WAIT", 0.1)  # not a 10 s test
    said: list[str] = []
    policy = RetryPolicy(max_retries=2, base_delay=0.01, max_delay=0.02, max_retry_after=0.4)
    with FakeLLMServer(reply=[Fault(status=429, retry_after=1e9), "Vitamin C"]) as server:
        started = time.monotonic()
        assert call(server, retry_policy=policy, on_wait=said.append).text == "Vitamin C"
        assert time.monotonic() - started < 3
    assert said == [
        "waiting 0.4 s: the provider answered HTTP 429 and asked for 1,000,000,000 s "
        "(Retry-After), capped at 0.4 s; then trying again"
    ]


def test_the_adaptive_pace_holds_no_call_past_its_cap() -> None:
    now = [100.0]
    pace = AdaptivePace(clock=lambda: now[0])
    pace.refused(99.0, 1e9)
    assert pace.due() == MAX_HOLD == 60.0


def test_a_wait_under_ten_seconds_is_not_said() -> None:
    said: list[str] = []
    with FakeLLMServer(reply=[Fault(status=429, retry_after=0.05), "Vitamin C"]) as server:
        assert call(server, on_wait=said.append).text == "Vitamin C"
    assert said == []


LONG = "scurvy " * 55_556  # 388,892 characters: the input that was sent whole


def embed(server: FakeLLMServer, texts: list[str], **options: Any) -> Any:
    async def go() -> Any:
        async with make_embedder(
            "openai/text-embedding-3-small", base_url=server.base_url, api_key="k", cache=False,
            **options,
        ) as embedder:  # fmt: skip
            return await embedder.embed(texts), embedder.cut

    return asyncio.run(go())


def test_an_embedding_input_over_the_limit_is_cut_before_the_call_and_counted() -> None:
    said: list[str] = []
    with FakeLLMServer() as server:
        vectors, cut = embed(server, ["short", LONG, LONG + "!"], on_cut=said.append)
        [sent] = [r["input"] for r in server.requests]
    assert vectors.shape[0] == 3 and cut == 2
    assert sent[0] == "short" and all(len(t.encode()) <= 8192 * 3 for t in sent)
    assert said == [
        "openai/text-embedding-3-small: 2 inputs over the model's limit of 8,192 tokens "
        "(the longest about 129,631): cut to the limit before they were sent"
    ]


def test_an_embedding_input_over_the_limit_can_be_refused_before_any_call() -> None:
    with FakeLLMServer() as server:
        with pytest.raises(JudgeError) as caught:
            embed(server, ["short", LONG], over_limit="refuse")
        assert server.calls == 0
    assert "1 input over the model's limit of 8,192 tokens" in str(caught.value)
    assert "refused before any call" in str(caught.value)
