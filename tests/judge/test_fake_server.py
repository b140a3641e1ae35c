"""The fake server itself, at the wire: what the judge, synth and runner tests rely on."""

from __future__ import annotations

import http.client
import json
import time
from typing import Any

import pytest

from lasagna_judge.testing import FakeLLMServer, Fault, Reply


def post(
    server: FakeLLMServer, body: dict[str, Any] | bytes, path: str = "/v1/chat/completions"
) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection(server.host, server.port, timeout=10)
    try:
        payload = body if isinstance(body, bytes) else json.dumps(body).encode()
        conn.request("POST", path, payload, {"Content-Type": "application/json"})
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


CHAT = {"model": "fake", "messages": [{"role": "user", "content": "hello there"}]}


def test_plain_reply_in_openai_format_with_usage(fake_llm_server: FakeLLMServer) -> None:
    fake_llm_server.reply = "the answer"
    status, _, body = post(fake_llm_server, CHAT)
    data = json.loads(body)
    assert status == 200
    assert data["object"] == "chat.completion"
    assert data["choices"][0]["message"] == {
        "role": "assistant",
        "content": "the answer",
        "refusal": None,
        "annotations": [],
    }
    # every field the API documents, the optional ones too (issue 43)
    assert data["service_tier"] == "default" and data["system_fingerprint"] == "fp_fake"
    assert data["usage"]["prompt_tokens_details"] == {"cached_tokens": 0, "audio_tokens": 0}
    assert data["usage"]["completion_tokens_details"]["reasoning_tokens"] == 0
    assert data["choices"][0]["finish_reason"] == "stop"
    usage = data["usage"]
    assert usage["prompt_tokens"] >= 1 and usage["completion_tokens"] >= 1
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert fake_llm_server.calls == 1
    assert fake_llm_server.requests == [CHAT]


def test_tools_request_gets_a_tool_call_with_the_content_as_arguments(
    fake_llm_server: FakeLLMServer,
) -> None:
    fake_llm_server.reply = '{"score": 4}'
    request = {
        **CHAT,
        "tools": [{"type": "function", "function": {"name": "Grade", "parameters": {}}}],
        "tool_choice": {"type": "function", "function": {"name": "Grade"}},
    }
    _, _, body = post(fake_llm_server, request)
    message = json.loads(body)["choices"][0]["message"]
    assert message["content"] is None
    call = message["tool_calls"][0]
    assert call["function"] == {"name": "Grade", "arguments": '{"score": 4}'}
    assert json.loads(body)["choices"][0]["finish_reason"] == "tool_calls"


def test_a_reply_can_ignore_the_tools(fake_llm_server: FakeLLMServer) -> None:
    fake_llm_server.reply = Reply("I would say 4.", tool_call=False)
    request = {**CHAT, "tools": [{"type": "function", "function": {"name": "Grade"}}]}
    _, _, body = post(fake_llm_server, request)
    assert json.loads(body)["choices"][0]["message"]["content"] == "I would say 4."


def test_response_format_gets_plain_content(fake_llm_server: FakeLLMServer) -> None:
    fake_llm_server.reply = '{"score": 2}'
    request = {**CHAT, "response_format": {"type": "json_object"}}
    _, _, body = post(fake_llm_server, request)
    assert json.loads(body)["choices"][0]["message"]["content"] == '{"score": 2}'


def test_list_replies_are_served_in_order_then_exhaustion_is_a_recorded_500(
    fake_llm_server: FakeLLMServer,
) -> None:
    fake_llm_server.reply = ["one", "two"]
    contents = [json.loads(post(fake_llm_server, CHAT)[2]) for _ in range(2)]
    assert [c["choices"][0]["message"]["content"] for c in contents] == ["one", "two"]
    status, _, _ = post(fake_llm_server, CHAT)
    assert status == 500
    assert "2 items" in fake_llm_server.errors[0]


def test_reply_function_sees_the_request(fake_llm_server: FakeLLMServer) -> None:
    fake_llm_server.reply = lambda request: request["messages"][-1]["content"].upper()
    _, _, body = post(fake_llm_server, CHAT)
    assert json.loads(body)["choices"][0]["message"]["content"] == "HELLO THERE"


def test_faults(fake_llm_server: FakeLLMServer) -> None:
    fake_llm_server.reply = [
        Fault(status=429, retry_after=0.25),
        Fault(status=500),
        Fault(malformed=True),
        Fault(delay=0.2, content="late"),
    ]
    status, headers, body = post(fake_llm_server, CHAT)
    assert status == 429 and headers["Retry-After"] == "0.25"
    assert "error" in json.loads(body)
    assert post(fake_llm_server, CHAT)[0] == 500
    status, _, body = post(fake_llm_server, CHAT)
    assert status == 200
    with pytest.raises(ValueError):
        json.loads(body)
    start = time.monotonic()
    status, _, body = post(fake_llm_server, CHAT)
    assert time.monotonic() - start >= 0.2
    assert json.loads(body)["choices"][0]["message"]["content"] == "late"


def test_default_reply_satisfies_the_requested_schema(fake_llm_server: FakeLLMServer) -> None:
    schema = {
        "type": "object",
        "properties": {
            "score": {"type": "integer", "minimum": 0},
            "label": {"enum": ["yes", "no"]},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1},
            "inner": {"$ref": "#/$defs/Inner"},
        },
        "required": ["score", "label", "tags", "inner"],
        "$defs": {"Inner": {"type": "object", "properties": {"ok": {"type": "boolean"}}}},
    }
    request = {
        **CHAT,
        "tools": [{"type": "function", "function": {"name": "G", "parameters": schema}}],
    }
    _, _, body = post(fake_llm_server, request)
    arguments = json.loads(body)["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
    assert json.loads(arguments) == {
        "score": 0,
        "label": "yes",
        "tags": ["x"],
        "inner": {"ok": False},
    }
    _, _, body = post(fake_llm_server, CHAT)
    assert json.loads(body)["choices"][0]["message"]["content"] == "ok"


def test_anthropic_messages_api(fake_llm_server: FakeLLMServer) -> None:
    fake_llm_server.reply = '{"score": 3}'
    request = {
        "model": "claude",
        "max_tokens": 100,
        "system": "be brief",
        "messages": [{"role": "user", "content": "grade"}],
        "tools": [{"name": "Grade", "input_schema": {"type": "object"}}],
    }
    _, _, body = post(fake_llm_server, request, path="/v1/messages")
    data = json.loads(body)
    assert data["type"] == "message"
    assert data["content"] == [
        {"type": "tool_use", "id": data["content"][0]["id"], "name": "Grade", "input": {"score": 3}}
    ]
    assert data["usage"]["input_tokens"] >= 1


def test_both_wire_formats_count_the_same_tokens(fake_llm_server: FakeLLMServer) -> None:
    request = {"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": "x" * 40}]}
    given = Reply("y", input_tokens=7, output_tokens=3)
    for reply, expected in ((Reply("y" * 20), (11, 6)), (given, (7, 3))):
        fake_llm_server.reply = reply
        openai = json.loads(post(fake_llm_server, request)[2])["usage"]
        anthropic = json.loads(post(fake_llm_server, request, path="/v1/messages")[2])["usage"]
        assert (openai["prompt_tokens"], openai["completion_tokens"]) == expected
        assert (anthropic["input_tokens"], anthropic["output_tokens"]) == expected
        assert openai["total_tokens"] == sum(expected)


def test_bad_requests_are_answered_not_crashed_on(fake_llm_server: FakeLLMServer) -> None:
    assert post(fake_llm_server, b"{not json")[0] == 400
    assert post(fake_llm_server, CHAT, path="/v1/nowhere")[0] == 404
    assert fake_llm_server.calls == 0
    fake_llm_server.reply = "still fine"
    assert post(fake_llm_server, CHAT)[0] == 200


def test_keep_alive_serves_many_requests_on_one_connection(
    fake_llm_server: FakeLLMServer,
) -> None:
    conn = http.client.HTTPConnection(fake_llm_server.host, fake_llm_server.port, timeout=10)
    try:
        for _ in range(20):
            conn.request("POST", "/v1/chat/completions", json.dumps(CHAT).encode())
            response = conn.getresponse()
            assert response.status == 200
            response.read()
    finally:
        conn.close()
    assert fake_llm_server.calls == 20


def test_stop_is_prompt_even_with_a_request_waiting() -> None:
    server = FakeLLMServer(reply=Fault(delay=30.0))
    server.start()
    conn = http.client.HTTPConnection(server.host, server.port, timeout=10)
    conn.request("POST", "/v1/chat/completions", json.dumps(CHAT).encode())
    time.sleep(0.1)
    start = time.monotonic()
    server.stop()
    assert time.monotonic() - start < 2.0
    conn.close()


def test_the_testing_module_exports() -> None:
    import lasagna_judge.testing

    assert sorted(lasagna_judge.testing.__all__) == [
        "FakeLLMServer",
        "Fault",
        "RateLimits",
        "Reply",
        "hashed_embedding",
        "lognormal_latency",
        "scripted_reply",
    ]
