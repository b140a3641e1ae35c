"""Replies a careless or hostile model server sends, at the wire (issue 29): a reply with no
text or a tool call is a failed call, never an empty answer; token counts that are negative
or not numbers fail the call and never enter a sum; a huge reply is not quoted whole back
into the re-ask that asks to correct it."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pydantic import BaseModel

from lasagna_judge import LLM, LLMCallError, RetryPolicy, make_llm
from lasagna_judge.testing import FakeLLMServer, Reply

USER = [{"role": "user", "content": "Who wrote the first lasagna recipe?"}]
FAST = RetryPolicy(max_retries=3, base_delay=0.01, max_delay=0.02)


class Verdict(BaseModel):
    score: int
    reasoning: str


def fake_llm(server: FakeLLMServer) -> LLM:
    return make_llm(
        "openai/fake",
        base_url=server.base_url,
        api_key="sk-test",
        cache=False,
        retry_policy=FAST,
        max_retries=FAST.max_retries,
    )


def complete(server: FakeLLMServer) -> tuple[LLMCallError, LLM]:
    llm = fake_llm(server)

    async def go() -> None:
        async with llm:
            await llm.complete(USER)

    with pytest.raises(LLMCallError) as caught:
        asyncio.run(go())
    return caught.value, llm


def test_a_reply_with_null_content_is_a_failed_call_not_an_empty_answer() -> None:
    with FakeLLMServer(reply=Reply("", null_content=True)) as server:
        error, _ = complete(server)
        assert server.calls == 1  # the same reply would come again
    assert "the reply has no text (content null)" in str(error)


def test_a_tool_call_instead_of_an_answer_is_a_failed_call() -> None:
    with FakeLLMServer(reply=Reply('{"city": "Bologna"}', tool_call=True)) as server:
        error, _ = complete(server)
        assert server.calls == 1
    assert "the reply calls a tool (tool) instead of answering in text" in str(error)


@pytest.mark.parametrize(
    ("usage", "shown"),
    [
        ({"prompt_tokens": -1_000_000, "completion_tokens": 5}, "usage.prompt_tokens is -1000000"),
        ({"prompt_tokens": 7, "completion_tokens": "12"}, "usage.completion_tokens is '12'"),
        ({"prompt_tokens": 7, "completion_tokens": 1.5}, "usage.completion_tokens is 1.5"),
        ({"prompt_tokens": True, "completion_tokens": 1}, "usage.prompt_tokens is True"),
        ({"input_tokens": 3, "output_tokens": [1]}, "usage.output_tokens is [1]"),
    ],
)
def test_token_counts_that_cannot_be_believed_fail_the_call_and_are_never_summed(
    usage: dict[str, Any], shown: str
) -> None:
    with FakeLLMServer(reply=Reply("Pellegrino Artusi", usage=usage)) as server:
        error, llm = complete(server)
        assert server.calls == 1
    assert "a token count that cannot be believed" in str(error) and shown in str(error)
    assert llm.usage.input_tokens == 0 and llm.usage.output_tokens == 0
    assert llm.calls_made == 1


def test_counts_given_as_whole_floats_or_left_null_are_read() -> None:
    usage = {"prompt_tokens": 12.0, "completion_tokens": None, "total_tokens": 12}
    with FakeLLMServer(reply=Reply("Pellegrino Artusi", usage=usage)) as server:
        llm = fake_llm(server)

        async def go() -> Any:
            async with llm:
                return await llm.complete(USER)

        completion = asyncio.run(go())
    assert completion.text == "Pellegrino Artusi"
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (12, 0)


def test_a_huge_reply_is_not_quoted_whole_into_the_re_ask() -> None:
    huge = "lasagna " * 1_300_000  # 10 MB that is not a Verdict
    good = json.dumps({"score": 1, "reasoning": "right"})
    with FakeLLMServer(reply=[huge, good]) as server:
        llm = fake_llm(server)

        async def go() -> Any:
            async with llm:
                return await llm.structured(USER, Verdict, max_validation_retries=1)

        reply = asyncio.run(go())
        second = json.dumps(server.requests[1], ensure_ascii=False)
    assert reply.status == "ok" and reply.value == Verdict(score=1, reasoning="right")
    assert len(second) < 20_000  # it was over 10 MB
    assert "characters left out" in second and "lasagna lasagna" in second


def test_a_huge_reply_is_not_quoted_whole_into_instructors_own_re_ask() -> None:
    pytest.importorskip("anthropic")
    huge = "lasagna " * 1_300_000  # 10 MB of text where a tool call was asked for
    with FakeLLMServer(reply=[huge, json.dumps({"score": 2, "reasoning": "ok"})]) as server:
        llm = make_llm("anthropic/claude-test", base_url=server.url, api_key="ak", cache=False)

        async def go() -> Any:
            async with llm:
                return await llm.structured(USER, Verdict, max_validation_retries=1)

        reply = asyncio.run(go())
        second = json.dumps(server.requests[1], ensure_ascii=False)
    assert reply.status == "ok" and reply.value == Verdict(score=2, reasoning="ok")
    assert len(second) < 20_000 and "characters left out" in second
