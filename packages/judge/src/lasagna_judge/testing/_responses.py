"""The HTTP responses a FakeLLMServer sends: an OpenAI chat completion or an Anthropic
message made from a `Reply` (a tool call when the request offers tools), with its token
usage; the error bodies of both APIs; and the HTTP/1.1 bytes around them.

Replies are built with the SDKs' own types (`openai.types.chat.ChatCompletion`,
`anthropic.types.Message`) and carry every field the APIs document, optional ones included
(service_tier, system_fingerprint, message.annotations and refusal, the usage details,
Anthropic's cache counts and service tier), so that tests see what providers send.
"""

from __future__ import annotations

import json
import time
from typing import Any

from lasagna_judge.testing._script import Reply

_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    408: "Request Timeout",
    409: "Conflict",
    411: "Length Required",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
    529: "Overloaded",
}


def _estimate_tokens(text: str) -> int:
    return len(text) // 4 + 1


def _input_tokens(request: dict[str, Any]) -> int:
    parts: list[str] = []
    system = request.get("system")
    if system is not None:
        parts.append(json.dumps(system) if not isinstance(system, str) else system)
    for message in request.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        parts.append(content if isinstance(content, str) else json.dumps(content))
    return _estimate_tokens("".join(parts))


def _usage(request: dict[str, Any], reply: Reply) -> tuple[int, int]:
    """Input and output tokens: the reply's own figures, else estimates from the texts."""
    prompt = reply.input_tokens if reply.input_tokens is not None else _input_tokens(request)
    completion = (
        reply.output_tokens if reply.output_tokens is not None else _estimate_tokens(reply.content)
    )
    return prompt, completion


def _tool_name(request: dict[str, Any]) -> str | None:
    """The tool the request wants called, if it offers any (OpenAI or Anthropic shapes)."""
    tools = request.get("tools")
    if not tools:
        return None
    choice = request.get("tool_choice")
    if isinstance(choice, dict):
        function = choice.get("function")
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            return str(function["name"])
        if isinstance(choice.get("name"), str):
            return str(choice["name"])
    first = tools[0]
    if isinstance(first, dict):
        function = first.get("function")
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            return str(function["name"])
        if isinstance(first.get("name"), str):
            return str(first["name"])
    return "tool"


def _openai_completion(request: dict[str, Any], reply: Reply, call_id: int) -> dict[str, Any]:
    from openai.types.chat import ChatCompletion

    tool = _tool_name(request) if reply.tool_call is not False else None
    if reply.tool_call is True and tool is None:
        tool = "tool"
    message: dict[str, Any] = {"role": "assistant", "refusal": None, "annotations": []}
    if tool is not None:
        message["content"] = None
        message["tool_calls"] = [
            {
                "id": f"call_{call_id}",
                "type": "function",
                "function": {"name": tool, "arguments": reply.content},
            }
        ]
        finish = "tool_calls"
    else:
        message["content"] = None if reply.null_content else reply.content
        finish = "stop"
    prompt, completion = _usage(request, reply)
    usage = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": 0,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }
    body = ChatCompletion.model_validate(
        {
            "id": f"chatcmpl-fake-{call_id}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": str(request.get("model", "fake")),
            "service_tier": "default",
            "system_fingerprint": "fp_fake",
            "choices": [
                {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
            ],
            "usage": usage,
        }
    ).model_dump(mode="json", exclude_unset=True)
    if reply.usage is not None:
        body["usage"] = reply.usage  # as given, a hostile server's counts too
    return {**body, **(reply.extra or {})}


def _anthropic_message(request: dict[str, Any], reply: Reply, call_id: int) -> dict[str, Any]:
    tool = _tool_name(request) if reply.tool_call is not False else None
    block: dict[str, Any] = {"type": "text", "text": reply.content, "citations": None}
    stop_reason = "end_turn"
    if tool is not None:
        try:
            arguments = json.loads(reply.content)
        except ValueError:
            arguments = None
        # Anthropic's tool input is always an object; other content stays text.
        if isinstance(arguments, dict):
            block = {"type": "tool_use", "id": f"toolu_{call_id}", "name": tool, "input": arguments}
            stop_reason = "tool_use"
    prompt, completion = _usage(request, reply)
    body = {
        "id": f"msg_fake_{call_id}",
        "type": "message",
        "role": "assistant",
        "model": str(request.get("model", "fake")),
        "content": [block],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": prompt,
            "output_tokens": completion,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
            "server_tool_use": None,
            "service_tier": "standard",
        },
    }
    try:
        from anthropic.types import Message
    except ImportError:  # the extra is not installed: the same fields, unchecked
        return {**body, **(reply.extra or {})}
    checked = Message.model_validate(body).model_dump(mode="json", exclude_unset=True)
    return {**checked, **(reply.extra or {})}


def _embedding_list(model: str, texts: list[Any], dimension: int) -> dict[str, Any]:
    """An embeddings reply (`hashed_embedding` of each text), built with openai's
    `CreateEmbeddingResponse`."""
    from openai.types import CreateEmbeddingResponse

    data = [
        {"object": "embedding", "index": i, "embedding": hashed_embedding(str(t), dimension)}
        for i, t in enumerate(texts)
    ]
    tokens = sum(len(str(t).split()) for t in texts)
    usage = {"prompt_tokens": tokens, "total_tokens": tokens}
    reply = {"object": "list", "data": data, "model": model, "usage": usage}
    checked: dict[str, Any] = CreateEmbeddingResponse.model_validate(reply).model_dump(mode="json")
    return checked


def hashed_embedding(text: str, dimension: int) -> list[float]:
    """A bag of hashed words, unit length: texts sharing words point the same way, so a
    dense retriever over these ranks like a crude keyword search, the same on every run."""
    import hashlib
    import math
    import re

    vector = [0.0] * dimension
    for word in re.findall(r"\w+", text.lower()):
        digest = hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()
        bucket = int.from_bytes(digest[:4], "little") % dimension
        vector[bucket] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vector))
    if norm == 0:
        vector[0], norm = 1.0, 1.0
    return [v / norm for v in vector]


def _error_body(anthropic: bool, status: int, message: str) -> dict[str, Any]:
    kind = {
        400: "invalid_request_error",
        401: "authentication_error",
        404: "not_found_error",
        429: "rate_limit_error",
        529: "overloaded_error",
    }.get(status, "api_error")
    if anthropic:
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "code": status}}


def _http(status: int, payload: dict[str, Any], extra: dict[str, str] | None = None) -> bytes:
    return _http_raw(status, json.dumps(payload, separators=(",", ":")).encode(), extra)


def _http_raw(status: int, body: bytes, extra: dict[str, str] | None = None) -> bytes:
    head = [
        f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}",
        "Content-Type: application/json",
        f"Content-Length: {len(body)}",
        "Connection: keep-alive",
    ]
    for name, value in (extra or {}).items():
        head.append(f"{name}: {value}")
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body
