"""Two more wires to a model, as kag's clients (rig) speak them:

- OpenAI's Responses API (`POST {base_url}/responses`): `input` is a list of messages whose
  content is `input_text` parts; the reply's text is the `output_text` parts of its
  `message` outputs; `max_output_tokens` bounds the reply.
- Ollama's native chat API (`POST {url}/api/chat`, `stream: false`): sampling options go in
  `options` (`temperature`, and `num_ctx`, the context window, which kag sets from a
  setup's `tokens`: a call's max_tokens goes there); the reply is `message.content`, its
  token counts `prompt_eval_count` and `eval_count`.

Structured calls ask for JSON in the prompt and parse the reply's text (instructor's
md_json rules, `drive_structured`), since neither wire takes the tools of chat completions.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from lasagna_judge._openai_compat import json_headers, post_json
from lasagna_judge._providers import (
    Backend,
    CallOptions,
    Message,
    StructuredOutcome,
    _short,
    call_failed,
)
from lasagna_judge._structured import drive_structured
from lasagna_judge._transport import RetryingSender
from lasagna_judge._wire import WireRequest

if TYPE_CHECKING:
    from pydantic import BaseModel

WIRES = ("chat", "responses", "ollama-chat")
OLLAMA_NATIVE_URL = "http://localhost:11434"


class _TextBackend(Backend):
    """A backend whose calls are one POST of JSON and one text reply."""

    def __init__(
        self,
        provider: str,
        name: str,
        url: str,
        *,
        api_key: str | None,
        timeout: float,
        sender: RetryingSender,
        deadline: float | None = None,
    ) -> None:
        self.provider = provider
        self.name = name
        self.mode = "md_json"
        self.model_id = f"{provider}/{name}"
        self._url = url
        self._timeout = timeout
        self._deadline = deadline
        self._sender = sender
        self._headers = json_headers(api_key)

    def _body(self, messages: list[Message], options: CallOptions) -> dict[str, Any]:
        raise NotImplementedError

    def _text(self, data: Any) -> str | None:
        raise NotImplementedError

    async def complete(self, messages: list[Message], options: CallOptions) -> str:
        payload = json.dumps(self._body(messages, options)).encode("utf-8")
        request = WireRequest(
            "POST", self._url, self._headers, payload, self._timeout, self._deadline
        )
        data = await post_json(self._sender, request, self.model_id)
        text = self._text(data)
        if text is None:
            raise call_failed(
                self.model_id, detail=f"the reply has no text: {_short(json.dumps(data))}"
            )
        return text

    async def structured(
        self,
        messages: list[Message],
        response_model: type[BaseModel],
        options: CallOptions,
        max_validation_retries: int,
    ) -> StructuredOutcome:
        async def send(request: dict[str, Any]) -> Any:
            text = await self.complete(request["messages"], options)
            return _as_chat_completion(self.name, text)

        kwargs = {"model": self.name, "messages": messages}
        return await drive_structured(
            response_model, "md_json", kwargs, send, max_validation_retries
        )

    async def aclose(self) -> None:
        await self._sender.aclose()


def _as_chat_completion(model: str, text: str) -> Any:
    """A text reply as openai's ChatCompletion, the shape instructor's parsers read."""
    from openai.types.chat import ChatCompletion

    return ChatCompletion.model_validate(
        {
            "id": "",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": text},
                }
            ],
        }
    )


class ResponsesBackend(_TextBackend):
    """OpenAI's Responses API."""

    def _body(self, messages: list[Message], options: CallOptions) -> dict[str, Any]:
        items = []
        for message in messages:
            kind = "output_text" if message["role"] == "assistant" else "input_text"
            items.append(
                {
                    "type": "message",
                    "role": message["role"],
                    "content": [{"type": kind, "text": message["content"]}],
                }
            )
        body: dict[str, Any] = {"model": self.name, "input": items}
        if options.temperature is not None:
            body["temperature"] = options.temperature
        if options.max_tokens is not None:
            body["max_output_tokens"] = options.max_tokens
        return body

    def _text(self, data: Any) -> str | None:
        if not isinstance(data, dict) or not isinstance(data.get("output"), list):
            return None
        parts = [
            part.get("text", "")
            for item in data["output"]
            if isinstance(item, dict) and item.get("type") == "message"
            for part in item.get("content") or []
            if isinstance(part, dict) and part.get("type") == "output_text"
        ]
        return "".join(str(p) for p in parts) if parts or data["output"] else None


class OllamaChatBackend(_TextBackend):
    """Ollama's native /api/chat. A call's max_tokens is sent as options.num_ctx, the
    context window, as kag sends a setup's `tokens` (what the model sees of a long prompt
    depends on it); the reply's length is left to the model, as in kag."""

    def _body(self, messages: list[Message], options: CallOptions) -> dict[str, Any]:
        sampling: dict[str, Any] = {}
        if options.temperature is not None:
            sampling["temperature"] = options.temperature
        if options.max_tokens is not None:
            sampling["num_ctx"] = options.max_tokens
        body: dict[str, Any] = {"model": self.name, "messages": messages, "stream": False}
        if options.temperature is not None:
            body["temperature"] = options.temperature  # rig sends it at the top level too
        body["options"] = sampling
        return body

    def _text(self, data: Any) -> str | None:
        message = data.get("message") if isinstance(data, dict) else None
        if not isinstance(message, dict) or not isinstance(message.get("content"), str):
            return None
        return str(message["content"])
