"""Anthropic's Messages API as a backend (extra `anthropic`): the SDK (`AsyncAnthropic`), with
no retries of its own, on the LLM's one HTTP client (`_sdk`); structured output through
instructor's Anthropic client. The SDK is imported when a backend is built.
"""

from __future__ import annotations

import inspect
from typing import Any

from pydantic import BaseModel

from lasagna_judge._batch_anthropic import AnthropicBatchAPI
from lasagna_judge._errors import MissingExtraError
from lasagna_judge._providers import (
    Backend,
    CallOptions,
    Message,
    StructuredMode,
    StructuredOutcome,
    call_failed,
)
from lasagna_judge._sdk import Wire, anthropic_client, sdk_failure
from lasagna_judge._structured import (
    _instructor_mode,
    _instructor_structured,
    _prepared_model,
    raw_from_completion,
)

# Anthropic requires max_tokens on every request.
ANTHROPIC_DEFAULT_MAX_TOKENS = 1024


class AnthropicBackend(Backend):
    """Anthropic's Messages API (extra `anthropic`)."""

    def __init__(
        self,
        name: str,
        *,
        api_key: str | None,
        base_url: str | None,
        wire: Wire,
        mode: StructuredMode,
    ) -> None:
        self.provider = "anthropic"
        self.name = name
        self.mode = mode
        self.model_id = f"anthropic/{name}"
        self._client = anthropic_client(str(api_key), base_url, wire)
        self.wire = wire
        self._instructor: Any = None
        # The Message Batches API speaks through the same client (its retries and limits).
        self._batches = AnthropicBatchAPI(self._client, self.model_id)
        # Recent Anthropic SDKs dropped `temperature` (the newest models reject it): send
        # one only when the installed SDK still takes it.
        self._takes_temperature = (
            "temperature" in inspect.signature(self._client.messages.create).parameters
        )

    def _options(self, options: CallOptions) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"max_tokens": options.max_tokens or ANTHROPIC_DEFAULT_MAX_TOKENS}
        if options.temperature is not None and self._takes_temperature:
            kwargs["temperature"] = options.temperature
        return kwargs

    def _text_request(self, messages: list[Message], options: CallOptions) -> dict[str, Any]:
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        kwargs = self._options(options)
        kwargs["messages"] = [m for m in messages if m["role"] != "system"]
        if system:
            kwargs["system"] = system
        return kwargs

    async def complete(self, messages: list[Message], options: CallOptions) -> str:
        kwargs = self._text_request(messages, options)
        turns = kwargs.pop("messages")
        try:
            response = await self._client.messages.create(
                model=self.name,
                messages=turns,
                **kwargs,
            )
        except Exception as exc:
            failed = sdk_failure(self.model_id, exc)
            if failed is None:
                raise
            raise failed from None
        return self._text_of(response)

    def _text_of(self, response: Any) -> str:
        texts = [str(getattr(b, "text", "")) for b in response.content if b.type == "text"]
        if not texts:  # a tool call, or nothing: a failed call, not an empty answer
            kinds = ", ".join(str(b.type) for b in response.content) or "none"
            raise call_failed(
                self.model_id, detail=f"the reply has no text block (blocks: {kinds})"
            )
        return "".join(texts)

    # -- Message Batches (see `_batch`) ------------------------------------------------------

    def batch_api(self) -> AnthropicBatchAPI | None:
        return self._batches

    def batch_body(
        self, messages: list[Message], options: CallOptions, model: type[BaseModel] | None
    ) -> dict[str, Any] | None:
        """The request a direct call sends first: instructor's, for a structured one."""
        if model is None:
            return {"model": self.name, **self._text_request(messages, options)}
        kwargs = {"model": self.name, "messages": messages, **self._options(options)}
        _, request = _handlers(self.mode).request_handler(response_model=model, kwargs=kwargs)
        return dict(request)

    def batch_outcome(
        self, body: dict[str, Any], model: type[BaseModel] | None
    ) -> str | StructuredOutcome | None:
        """A batch item's message read as instructor reads a direct call's first reply
        (None: it does not validate; the direct call re-asks)."""
        from anthropic.types import Message as AnthropicMessage
        from pydantic import ValidationError

        try:
            message = AnthropicMessage.model_validate(body)
        except ValidationError:
            if model is None:
                raise call_failed(self.model_id, detail="the reply is not a message") from None
            return None
        if model is None:
            return self._text_of(message)
        try:
            value = _handlers(self.mode).response_parser(
                response=message,
                response_model=_prepared_model(model),
                validation_context=None,
                strict=True,
                stream=False,
                is_async=True,
            )
        except Exception:  # instructor's parse errors: left to a direct call
            return None
        return StructuredOutcome(value, raw_from_completion(message))

    async def structured(
        self,
        messages: list[Message],
        response_model: type[BaseModel],
        options: CallOptions,
        max_validation_retries: int,
    ) -> StructuredOutcome:
        if self._instructor is None:
            import instructor

            self._instructor = instructor.from_anthropic(
                self._client, mode=_instructor_mode(self.mode)
            )
        kwargs = {
            "model": self.name,
            "messages": messages,
            "response_model": response_model,
            **self._options(options),
        }
        return await _instructor_structured(
            self.model_id,
            self._instructor.messages.create_with_completion,
            kwargs,
            max_validation_retries,
        )


def _handlers(mode: StructuredMode) -> Any:
    from instructor.utils.providers import Provider
    from instructor.v2.core.registry import mode_registry

    return mode_registry.get_handlers(Provider.ANTHROPIC, _instructor_mode(mode))


def check_anthropic_installed() -> None:
    try:
        import anthropic  # noqa: F401
    except ImportError:
        raise MissingExtraError("anthropic/...", "anthropic", "anthropic") from None
