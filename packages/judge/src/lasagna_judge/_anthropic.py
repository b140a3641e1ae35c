"""Anthropic's Messages API as a backend (extra `anthropic`): the SDK, with no retries of its
own, over lasagna's retrying transport; structured output through instructor's Anthropic
client. The SDK is imported when a backend is built.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from lasagna_judge._errors import MissingExtraError
from lasagna_judge._providers import (
    Backend,
    CallOptions,
    Message,
    StructuredMode,
    StructuredOutcome,
    _is_transport_failure,
    call_failed,
    sdk_call_failed,
)
from lasagna_judge._structured import _instructor_mode, _instructor_structured

if TYPE_CHECKING:
    import httpx2


def _http_client(transport: httpx2.AsyncBaseTransport, timeout: float) -> httpx2.AsyncClient:
    import httpx2

    return httpx2.AsyncClient(transport=transport, timeout=httpx2.Timeout(timeout))


# Anthropic requires max_tokens on every request.
ANTHROPIC_DEFAULT_MAX_TOKENS = 1024


class AnthropicBackend(Backend):
    """Anthropic's Messages API (extra `anthropic`)."""

    def __init__(
        self,
        name: str,
        *,
        api_key: str,
        base_url: str | None,
        timeout: float,
        transport: httpx2.AsyncBaseTransport,
        mode: StructuredMode,
    ) -> None:
        try:
            import anthropic
        except ImportError:
            raise MissingExtraError("anthropic/...", "anthropic", "anthropic") from None
        self.provider = "anthropic"
        self.name = name
        self.mode = mode
        self.model_id = f"anthropic/{name}"
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=base_url,
            max_retries=0,
            timeout=timeout,
            http_client=_http_client(transport, timeout),
        )
        self._instructor: Any = None
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

    async def complete(self, messages: list[Message], options: CallOptions) -> str:
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        turns = [m for m in messages if m["role"] != "system"]
        kwargs = self._options(options)
        if system:
            kwargs["system"] = system
        try:
            response = await self._client.messages.create(
                model=self.name,
                messages=turns,  # type: ignore[arg-type]
                **kwargs,
            )
        except Exception as exc:
            if _is_transport_failure(exc):
                raise sdk_call_failed(self.model_id, exc) from None
            raise
        texts = [str(getattr(b, "text", "")) for b in response.content if b.type == "text"]
        if not texts:  # a tool call, or nothing: a failed call, not an empty answer
            kinds = ", ".join(str(b.type) for b in response.content) or "none"
            raise call_failed(
                self.model_id, detail=f"the reply has no text block (blocks: {kinds})"
            )
        return "".join(texts)

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

    async def aclose(self) -> None:
        await self._client.close()


def check_anthropic_installed() -> None:
    try:
        import anthropic  # noqa: F401
    except ImportError:
        raise MissingExtraError("anthropic/...", "anthropic", "anthropic") from None
