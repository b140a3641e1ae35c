"""make_llm's checks and providers: model names, options, missing extras, Anthropic."""

from __future__ import annotations

import asyncio
import importlib.util
from typing import Any

import pytest
from pydantic import BaseModel

from lasagna_judge import JudgeError, MissingExtraError, is_reasoning_model, make_llm, parse_model
from lasagna_judge.testing import FakeLLMServer

USER = [{"role": "user", "content": "hi"}]
HAS_ANTHROPIC = importlib.util.find_spec("anthropic") is not None


class Verdict(BaseModel):
    score: int


@pytest.mark.parametrize(
    "model", ["gpt-4o", "openai", "openai/", "azure/gpt-4o", "/x", "", "Openai/gpt-4o"]
)
def test_bad_model_names_say_what_a_name_looks_like(model: str) -> None:
    with pytest.raises(JudgeError, match="provider/model") as caught:
        parse_model(model)
    assert repr(model) in str(caught.value)


def test_model_names_split_on_the_first_slash() -> None:
    assert parse_model("ollama/library/llama3.2:1b") == ("ollama", "library/llama3.2:1b")
    assert parse_model("local//models/x.gguf") == ("local", "/models/x.gguf")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"concurrency": 0}, "concurrency must be at least 1"),
        ({"max_retries": -1}, "max_retries must be >= 0"),
        ({"timeout": 0}, "timeout must be > 0"),
        ({"requests_per_minute": 0}, "requests_per_minute must be > 0"),
        ({"mode": "xml"}, "mode must be one of tools, json_schema, json, md_json"),
    ],
)
def test_bad_options(options: dict[str, Any], message: str) -> None:
    with pytest.raises(JudgeError, match=message):
        make_llm("openai/m", base_url="http://127.0.0.1:9/v1", cache=False, **options)


@pytest.mark.parametrize(
    "base_url",
    [
        "localhost:8000/v1",
        "127.0.0.1:8080",
        "ftp://host/v1",
        "http://",
        "notaurl",
        "http://h:8o80/v1",
    ],
)
def test_a_base_url_that_is_not_http_is_refused_at_once(base_url: str) -> None:
    with pytest.raises(JudgeError, match="expected an http:// or https:// URL") as caught:
        make_llm("openai/m", base_url=base_url, cache=False)
    assert repr(base_url) in str(caught.value)


def test_a_refused_base_url_never_shows_its_credentials() -> None:
    with pytest.raises(JudgeError) as caught:
        make_llm("openai/m", base_url="user:s3cret-pass@myhost:8000/v1", cache=False)
    assert "s3cret-pass" not in str(caught.value) and "***@myhost:8000/v1" in str(caught.value)


def test_openai_without_key_or_base_url_points_to_local_smollm2() -> None:
    with pytest.raises(JudgeError, match="local/smollm2") as caught:
        make_llm("openai/gpt-4o-mini", cache=False)
    assert "api_key" in str(caught.value) and "base_url" in str(caught.value)


@pytest.mark.parametrize(
    ("name", "reasoning"),
    [
        ("o1", True),
        ("o3-mini", True),
        ("o4-mini", True),
        ("gpt-5", True),
        ("gpt-5-mini", True),
        ("gpt-5-chat-latest", False),
        ("gpt-4o-mini", False),
        ("omni-moderation", False),
        ("llama3.2", False),
    ],
)
def test_reasoning_model_rule(name: str, reasoning: bool) -> None:
    assert is_reasoning_model(name) is reasoning


def test_messages_are_checked(fake_llm_server: FakeLLMServer) -> None:
    async def go(messages: Any) -> None:
        llm = make_llm("openai/m", base_url=fake_llm_server.base_url, cache=False)
        async with llm:
            await llm.complete(messages)

    for messages, message in [
        ("hi", "must be a list"),
        ([], "messages is empty"),
        ([{"role": "robot", "content": "x"}], r"messages\[0\]\['role'\]"),
        ([{"role": "user", "content": 3}], r"messages\[0\]\['content'\] must be a str"),
        (["hi"], r"messages\[0\] must be a dict"),
    ]:
        with pytest.raises(JudgeError, match=message):
            asyncio.run(go(messages))
    assert fake_llm_server.calls == 0


def test_structured_wants_a_pydantic_model(fake_llm_server: FakeLLMServer) -> None:
    async def go() -> None:
        llm = make_llm("openai/m", base_url=fake_llm_server.base_url, cache=False)
        async with llm:
            await llm.structured(USER, dict)  # type: ignore[type-var]

    with pytest.raises(JudgeError, match="pydantic BaseModel subclass"):
        asyncio.run(go())


@pytest.mark.skipif(HAS_ANTHROPIC, reason="the anthropic extra is installed")
def test_anthropic_without_the_extra_names_the_install_command() -> None:
    with pytest.raises(MissingExtraError, match=r'uv add "lasagna-judge\[anthropic\]"'):
        make_llm("anthropic/claude-3-5-haiku-latest", api_key="k", cache=False)


@pytest.mark.skipif(not HAS_ANTHROPIC, reason="needs the anthropic extra")
def test_anthropic_needs_a_key() -> None:
    with pytest.raises(JudgeError, match="needs an API key"):
        make_llm("anthropic/claude-3-5-haiku-latest", cache=False)


@pytest.mark.skipif(not HAS_ANTHROPIC, reason="needs the anthropic extra")
def test_anthropic_complete_and_structured_at_the_wire(fake_llm_server: FakeLLMServer) -> None:
    fake_llm_server.reply = ['{"score": 3}', "plain answer"]
    messages = [{"role": "system", "content": "be strict"}, *USER]

    async def go() -> Any:
        llm = make_llm(
            "anthropic/claude-test", base_url=fake_llm_server.url, api_key="ak-test", cache=False
        )
        async with llm:
            structured = await llm.structured(messages, Verdict)
            text = await llm.complete(messages)
            return structured, text, llm.usage

    structured, text, usage = asyncio.run(go())
    assert structured.status == "ok" and structured.value == Verdict(score=3)
    assert structured.raw == '{"score": 3}'
    assert text.text == "plain answer"
    assert usage.input_tokens > 0
    tools_request, plain_request = fake_llm_server.requests
    assert fake_llm_server.paths == ["/v1/messages", "/v1/messages"]
    assert tools_request["tools"][0]["name"] == "Verdict"
    assert plain_request["system"] == "be strict"
    assert plain_request["messages"] == USER
    assert plain_request["max_tokens"] == 1024
    headers = fake_llm_server.headers[0]
    assert "ak-test" in (headers.get("x-api-key", "") + headers.get("authorization", ""))


@pytest.mark.skipif(not HAS_ANTHROPIC, reason="needs the anthropic extra")
def test_anthropic_output_that_ignores_the_tool_is_unparsed_with_raw_kept(
    fake_llm_server: FakeLLMServer,
) -> None:
    fake_llm_server.reply = "I would give it a three."

    async def go() -> Any:
        llm = make_llm("anthropic/c", base_url=fake_llm_server.url, api_key="k", cache=False)
        async with llm:
            return await llm.structured(USER, Verdict, max_validation_retries=1), llm.calls_made

    result, calls = asyncio.run(go())
    assert result.status == "unparsed" and result.value is None
    assert result.raw == "I would give it a three."
    assert calls == 2
