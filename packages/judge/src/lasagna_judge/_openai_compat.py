"""OpenAI's chat completions API, at api.openai.com or any compatible server (Ollama, vLLM,
llama.cpp server, LM Studio, a FakeLLMServer), through the official `openai` SDK
(`AsyncOpenAI`, on the LLM's one HTTP client: `_sdk`).

Structured calls follow instructor's rules for the chosen mode (`drive_structured`), each
request sent by the SDK and its reply read by it into a `ChatCompletion`, whatever
documented or new field the reply carries. A batch item's request is the one a direct call
sends first, and its reply is read as a direct call's is (`batch_body`, `batch_outcome`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from lasagna_judge._batch_apis import OpenAIBatchAPI
from lasagna_judge._providers import (
    BATCH_PROVIDERS,
    Backend,
    CallOptions,
    Message,
    StructuredMode,
    StructuredOutcome,
    _short,
    call_failed,
    is_reasoning_model,
)
from lasagna_judge._sdk import Wire, openai_client, sdk_failure
from lasagna_judge._structured import (
    _openai_handlers,
    _prepare_request,
    _prepared_model,
    drive_structured,
    raw_from_completion,
)

if TYPE_CHECKING:
    from pydantic import BaseModel


def answer_text(model_id: str, completion: Any) -> str:
    """The text of a plain completion's reply. A reply without text (`content: null`) or
    one that calls a tool instead of answering is a failed call, never an empty answer:
    an empty answer would be scored (exact match calls it a correct refusal)."""
    choices = getattr(completion, "choices", None)
    if not choices:
        shown = completion.model_dump_json() if hasattr(completion, "model_dump_json") else ""
        raise call_failed(model_id, detail=f"the reply has no choices: {_short(shown)}")
    message = getattr(choices[0], "message", None)
    calls = getattr(message, "tool_calls", None) or getattr(message, "function_call", None)
    if calls:
        listed = calls if isinstance(calls, list) else [calls]
        names = [str(getattr(getattr(c, "function", c), "name", None) or "?") for c in listed]
        raise call_failed(
            model_id,
            detail=f"the reply calls a tool ({_short(', '.join(names), 80)}) instead of "
            "answering in text; no tools were offered",
        )
    content = getattr(message, "content", None)
    if not isinstance(content, str):
        raise call_failed(
            model_id,
            detail=f"the reply has no text (content {_short(json.dumps(content), 80)})",
        )
    return content


class OpenAICompatBackend(Backend):
    def __init__(
        self,
        provider: str,
        name: str,
        *,
        api_key: str | None,
        base_url: str | None,
        wire: Wire,
        mode: StructuredMode,
    ) -> None:
        self.provider = provider
        self.name = name
        self.mode = mode
        self.model_id = f"{provider}/{name}"
        self._client = openai_client(api_key, base_url, wire)
        self.wire = wire

    def _options(self, options: CallOptions) -> dict[str, Any]:
        kwargs: dict[str, Any] = {}
        if options.temperature is not None:
            kwargs["temperature"] = options.temperature
        if options.max_tokens is not None:
            key = "max_completion_tokens" if is_reasoning_model(self.name) else "max_tokens"
            kwargs[key] = options.max_tokens
        return kwargs

    async def _create(self, request: dict[str, Any]) -> Any:
        """One chat completion through the SDK, read into its `ChatCompletion`; an
        LLMCallError when the call failed. Sent with the client's own `post` (the request
        built, sent and read as `chat.completions.create` does) rather than `create`, whose
        walk of every parameter against its TypedDicts is a large share of the SDK's CPU
        work per call for a grading's tool schema; the body is instructor's or
        ours, plain JSON already."""
        from openai.types.chat import ChatCompletion

        try:
            return await self._client.post(
                "/chat/completions", body=request, cast_to=ChatCompletion
            )
        except Exception as exc:
            failed = sdk_failure(self.model_id, exc)
            if failed is None:
                raise
            raise failed from None

    async def complete(self, messages: list[Message], options: CallOptions) -> str:
        completion = await self._create(
            {"model": self.name, "messages": messages, **self._options(options)}
        )
        return answer_text(self.model_id, completion)

    async def structured(
        self,
        messages: list[Message],
        response_model: type[BaseModel],
        options: CallOptions,
        max_validation_retries: int,
    ) -> StructuredOutcome:
        kwargs = {"model": self.name, "messages": messages, **self._options(options)}
        return await drive_structured(
            response_model, self.mode, kwargs, self._create, max_validation_retries
        )

    # -- the batch API (OpenAI's; see `_batch`) ---------------------------------------------

    def batch_api(self) -> OpenAIBatchAPI | None:
        """OpenAI's Batch API for openai/ models (at `base_url` when given) and fake/ ones
        (the scripted server's); Ollama has none."""
        if self.provider not in BATCH_PROVIDERS:
            return None
        return OpenAIBatchAPI(self._client, self.model_id)

    def batch_body(
        self, messages: list[Message], options: CallOptions, model: type[BaseModel] | None
    ) -> dict[str, Any] | None:
        """The request a direct call sends first: instructor's, for a structured one."""
        body = {"model": self.name, "messages": messages, **self._options(options)}
        if model is None:
            return body
        handlers = _openai_handlers(self.mode)
        return dict(_prepare_request(handlers, self.mode, _prepared_model(model), body)[1])

    def batch_outcome(
        self, body: dict[str, Any], model: type[BaseModel] | None
    ) -> str | StructuredOutcome | None:
        """A batch item's reply read as a direct call reads its first one, by the SDK's
        ChatCompletion (None: it does not validate; the direct call re-asks)."""
        from openai.types.chat import ChatCompletion
        from pydantic import ValidationError

        try:
            completion = ChatCompletion.model_validate(body)
        except ValidationError as exc:
            if model is None:
                raise call_failed(
                    self.model_id, detail=f"the reply is not a chat completion: {_short(str(exc))}"
                ) from None
            return None
        if model is None:
            return answer_text(self.model_id, completion)
        try:
            value = _openai_handlers(self.mode).response_parser(
                response=completion,
                response_model=_prepared_model(model),
                validation_context=None,
                strict=True,
                stream=False,
                is_async=True,
            )
        except Exception:  # instructor's parse errors: left to a direct call
            return None
        return StructuredOutcome(value, raw_from_completion(completion))
