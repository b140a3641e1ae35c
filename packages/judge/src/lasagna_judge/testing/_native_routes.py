"""A FakeLLMServer's two more APIs, the ones kag's clients speak: OpenAI's Responses API
(`POST .../responses`) and Ollama's native chat (`POST .../api/chat`, no streaming).

Scripts see the request's JSON body as sent; for the reply function's convenience, `text`
(`prompt_text`) gives the text of its messages in either shape.
"""

from __future__ import annotations

import time
from typing import Any

from lasagna_judge.testing._responses import _estimate_tokens
from lasagna_judge.testing._script import Reply

NATIVE_ROUTES = ("responses", "ollama-chat")


def native_route(route: str) -> str | None:
    """Which of the two APIs a POST path is, or None."""
    if route.endswith("/api/chat"):
        return "ollama-chat"
    if route.endswith("/responses"):
        return "responses"
    return None


def prompt_text(request: dict[str, Any]) -> str:
    """The text of a request's messages: chat completions, Ollama or Responses API."""
    parts: list[str] = []
    items = request.get("input") if "input" in request else request.get("messages")
    if isinstance(items, str):
        return items
    for item in items or []:
        content = item.get("content") if isinstance(item, dict) else None
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "\n".join(parts)


def _counts(request: dict[str, Any], reply: Reply) -> tuple[int, int]:
    given = reply.input_tokens
    prompt = given if given is not None else _estimate_tokens(prompt_text(request))
    out = reply.output_tokens
    return prompt, out if out is not None else _estimate_tokens(reply.content)


def native_reply(kind: str, request: dict[str, Any], reply: Reply, call_id: int) -> dict[str, Any]:
    """The reply body of `kind` ("responses" or "ollama-chat") carrying `reply`'s text,
    built with the SDK's own type (openai's `Response`; ollama's `ChatResponse` when the
    extra is installed), every documented field in it."""
    model = str(request.get("model", "fake"))
    prompt, completion = _counts(request, reply)
    if kind == "ollama-chat":
        body: dict[str, Any] = {
            "model": model,
            "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "message": {"role": "assistant", "content": reply.content},
            "done": True,
            "done_reason": "stop",
            "total_duration": 0,
            "load_duration": 0,
            "prompt_eval_count": prompt,
            "prompt_eval_duration": 0,
            "eval_count": completion,
            "eval_duration": 0,
        }
        try:
            from ollama import ChatResponse
        except ImportError:
            return body
        checked: dict[str, Any] = ChatResponse.model_validate(body).model_dump(
            mode="json", exclude_none=True
        )
        return checked
    from openai.types.responses import Response

    text = {"type": "output_text", "text": reply.content, "annotations": [], "logprobs": []}
    body = {
        "id": f"resp_fake_{call_id}",
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": model,
        "output": [
            {
                "type": "message",
                "id": f"msg_fake_{call_id}",
                "status": "completed",
                "role": "assistant",
                "content": [text],
            }
        ],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "service_tier": "default",
        "usage": {
            "input_tokens": prompt,
            "output_tokens": completion,
            "total_tokens": prompt + completion,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }
    return Response.model_validate(body).model_dump(mode="json", exclude_unset=True)
