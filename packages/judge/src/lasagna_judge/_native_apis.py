"""Two more APIs of a model, as kag's clients (rig) speak them, each through its official SDK
on the LLM's one HTTP client:

- OpenAI's Responses API (`openai`: `responses.create`, `POST {base_url}/responses`): the
  messages as `input` items of `input_text` parts; the reply's text is its `output_text`;
  `max_output_tokens` bounds the reply.
- Ollama's native chat API (`ollama`, extra `ollama`: `AsyncClient.chat`, `POST
  {url}/api/chat`, no streaming): sampling options go in `options` (`temperature`, and
  `num_ctx`, the context window, which kag sets from a setup's `tokens`: a call's
  max_tokens goes there); its token counts are `prompt_eval_count` and `eval_count`.

Structured calls ask for JSON in the prompt and parse the reply's text (instructor's
md_json rules, `drive_structured`), since neither API takes the tools of chat completions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lasagna_judge._providers import (
    Backend,
    CallOptions,
    Message,
    StructuredOutcome,
    _short,
    call_failed,
)
from lasagna_judge._sdk import Wire, ollama_client, openai_client, sdk_failure
from lasagna_judge._structured import drive_structured

if TYPE_CHECKING:
    from pydantic import BaseModel

OLLAMA_NATIVE_URL = "http://localhost:11434"


class _TextBackend(Backend):
    """A backend whose calls are one SDK call and one text reply."""

    def __init__(self, provider: str, name: str, wire: Wire) -> None:
        self.provider = provider
        self.name = name
        self.mode = "md_json"
        self.model_id = f"{provider}/{name}"
        self.wire = wire

    async def _text(self, messages: list[Message], options: CallOptions) -> str | None:
        raise NotImplementedError

    async def complete(self, messages: list[Message], options: CallOptions) -> str:
        try:
            text = await self._text(messages, options)
        except Exception as exc:
            failed = sdk_failure(self.model_id, exc)
            if failed is None:
                raise
            raise failed from None
        if text is None:
            raise call_failed(self.model_id, detail="the reply has no text")
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
    """OpenAI's Responses API, through `openai.AsyncOpenAI.responses`."""

    def __init__(
        self, provider: str, name: str, *, api_key: str | None, base_url: str | None, wire: Wire
    ) -> None:
        super().__init__(provider, name, wire)
        self._client = openai_client(api_key, base_url, wire)

    async def _text(self, messages: list[Message], options: CallOptions) -> str | None:
        items: list[Any] = [
            {
                "type": "message",
                "role": m["role"],
                "content": [
                    {
                        "type": "output_text" if m["role"] == "assistant" else "input_text",
                        "text": m["content"],
                    }
                ],
            }
            for m in messages
        ]
        extra: dict[str, Any] = {}
        if options.temperature is not None:
            extra["temperature"] = options.temperature
        if options.max_tokens is not None:
            extra["max_output_tokens"] = options.max_tokens
        response = await self._client.responses.create(model=self.name, input=items, **extra)
        if not response.output:
            return None
        return str(response.output_text)


class OllamaChatBackend(_TextBackend):
    """Ollama's native /api/chat, through `ollama.AsyncClient` (extra `ollama`). A call's
    max_tokens is sent as options.num_ctx, the context window, as kag sends a setup's
    `tokens` (what the model sees of a long prompt depends on it); the reply's length is
    left to the model, as in kag."""

    def __init__(
        self, provider: str, name: str, *, api_key: str | None, base_url: str | None, wire: Wire
    ) -> None:
        super().__init__(provider, name, wire)
        self._client = ollama_client(base_url or OLLAMA_NATIVE_URL, api_key, wire)

    async def _text(self, messages: list[Message], options: CallOptions) -> str | None:
        sampling: dict[str, Any] = {}
        if options.temperature is not None:
            sampling["temperature"] = options.temperature
        if options.max_tokens is not None:
            sampling["num_ctx"] = options.max_tokens
        response = await self._client.chat(
            model=self.name, messages=messages, options=sampling, stream=False
        )
        content = response.message.content if response.message is not None else None
        if not isinstance(content, str):
            raise call_failed(
                self.model_id, detail=f"the reply has no text: {_short(response.model_dump_json())}"
            )
        return content
