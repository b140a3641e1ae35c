"""make_llm's two other wires, as kag's clients speak them, at the wire against the fake
server: OpenAI's Responses API and Ollama's native /api/chat (`num_ctx` from max_tokens)."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest
from pydantic import BaseModel

from lasagna_judge import JudgeError, LLMCallError, MissingExtraError, RetryPolicy, make_llm
from lasagna_judge.testing import FakeLLMServer, Fault, Reply

USER = [{"role": "user", "content": "Which vitamin prevents scurvy?"}]
FAST = RetryPolicy(max_retries=2, base_delay=0.01, max_delay=0.02)


class Pick(BaseModel):
    option: str


def call(llm: Any, what: str = "complete", **options: Any) -> Any:
    async def go() -> Any:
        async with llm:
            if what == "structured":
                return await llm.structured(USER, Pick, **options)
            return await llm.complete(USER, **options)

    return asyncio.run(go())


def test_ollama_chat_sends_num_ctx_and_counts_its_tokens() -> None:
    pytest.importorskip("ollama")
    with FakeLLMServer(reply=Reply("Vitamin C", input_tokens=11, output_tokens=3)) as server:
        llm = make_llm("ollama/qwen3.5:9b", base_url=server.url, wire="ollama-chat", cache=False)
        completion = call(llm, temperature=0.0, max_tokens=10000)
        assert server.paths == ["/api/chat"]
        assert "authorization" not in server.headers[0]
        assert server.requests[0] == {  # as the ollama client builds it
            "model": "qwen3.5:9b",
            "messages": USER,
            "tools": [],
            "stream": False,
            "options": {"temperature": 0.0, "num_ctx": 10000},
        }
    assert completion.text == "Vitamin C"
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (11, 3)


def test_responses_api_sends_input_text_parts_and_max_output_tokens() -> None:
    with FakeLLMServer(reply=Reply("b", input_tokens=20, output_tokens=1)) as server:
        llm = make_llm(
            "openai/gpt-5-mini",
            base_url=server.base_url,
            api_key="sk-test-responses",
            wire="responses",
            cache=False,
        )
        completion = call(llm, temperature=0.5, max_tokens=300)
        assert server.paths == ["/v1/responses"]
        assert server.headers[0]["authorization"] == "Bearer sk-test-responses"
        assert server.requests[0] == {
            "model": "gpt-5-mini",
            "input": [
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": USER[0]["content"]}],
                }
            ],
            "temperature": 0.5,
            "max_output_tokens": 300,
        }
    assert completion.text == "b" and completion.usage.input_tokens == 20


@pytest.mark.parametrize(
    ("model", "wire"), [("ollama/m", "ollama-chat"), ("openai/m", "responses")]
)
def test_structured_calls_ask_for_json_and_parse_the_text(model: str, wire: str) -> None:
    if wire == "ollama-chat":
        pytest.importorskip("ollama")
    with FakeLLMServer(reply='```json\n{"option": "b"}\n```') as server:
        llm = make_llm(model, base_url=server.url, api_key="k", wire=wire, cache=False)
        result = call(llm, "structured")
        assert "option" in str(server.requests[0])  # the schema went into the prompt
    assert result.status == "ok" and result.value == Pick(option="b")


def test_a_server_error_is_retried_then_reported() -> None:
    pytest.importorskip("ollama")
    with FakeLLMServer([Fault(status=503)] * 3) as server:
        llm = make_llm(
            "ollama/m",
            base_url=server.url,
            wire="ollama-chat",
            cache=False,
            retry_policy=FAST,
            max_retries=2,
        )
        with pytest.raises(LLMCallError):
            call(llm)
        assert server.calls == 3


def test_ollama_chat_without_the_extra_names_the_install_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "ollama", None)  # as if it were not installed
    with pytest.raises(MissingExtraError, match=r"lasagna-judge\[ollama\]"):
        make_llm("ollama/m", wire="ollama-chat")


def test_a_wire_of_another_provider_is_refused() -> None:
    with pytest.raises(JudgeError, match="does not apply"):
        make_llm("ollama/m", wire="responses")
    with pytest.raises(JudgeError, match="does not apply"):
        make_llm("anthropic/claude", api_key="k", wire="ollama-chat")
