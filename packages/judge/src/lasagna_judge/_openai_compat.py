"""OpenAI's chat completions API, at api.openai.com or any compatible server (Ollama, vLLM,
llama.cpp server, LM Studio, a FakeLLMServer).

The wire format is small and stable, so we speak it directly through `RetryingSender`
rather than through the openai SDK, whose request and response handling cost about 1 ms of
CPU per call (half a grading's budget when 50 calls are in flight). Structured calls follow
instructor's rules for the chosen mode (`drive_structured`); replies are read back into
openai's own `ChatCompletion` type for instructor's parsers.

The common case skips both (see `_plain`): in the tools and json_schema
modes, for a plain pydantic model, the request instructor would build is built here, and a
reply of the plain shape that validates is read here. Importing instructor's OpenAI handlers
imports the whole openai SDK, 0.3 s of a command's start before its first call could leave;
reading a reply into a ChatCompletion costs CPU on every call. Anything else (another mode
or model, a reply that does not validate or has an unusual shape) goes to instructor as
before, which then reads that same reply and re-asks by its own rules: the outcome is the
same either way.
"""

from __future__ import annotations

import json
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

from lasagna_judge._batch_apis import OpenAIBatchAPI
from lasagna_judge._http_url import endpoint
from lasagna_judge._plain import native_extras, native_outcome, request_json
from lasagna_judge._providers import (
    Backend,
    CallOptions,
    Message,
    StructuredMode,
    StructuredOutcome,
    _short,
    call_failed,
    is_reasoning_model,
)
from lasagna_judge._structured import drive_structured
from lasagna_judge._transport import RetryingSender
from lasagna_judge._wire import WireError, WireRequest
from lasagna_metrics import parse_json

if TYPE_CHECKING:
    from pydantic import BaseModel

OPENAI_BASE_URL = "https://api.openai.com/v1"


def user_agent() -> str:
    try:
        return f"lasagna-judge/{version('lasagna-judge')}"
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "lasagna-judge"


def json_headers(api_key: str | None) -> list[tuple[str, str]]:
    """The headers of a JSON POST to an OpenAI-style API: the key as a Bearer token."""
    headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json"),
        ("User-Agent", user_agent()),
    ]
    if api_key:
        headers.append(("Authorization", f"Bearer {api_key}"))
    return headers


def _error_detail(body: bytes) -> str:
    """The server's own words from an error reply: OpenAI's {"error": {"message": ...}}."""
    try:
        data = parse_json(body)
    except ValueError:
        return _short(body.decode("utf-8", "replace"))
    if isinstance(data, dict):
        error = data.get("error", data)
        if isinstance(error, dict):
            message = error.get("message")
            if isinstance(message, str):
                return _short(message)
        elif isinstance(error, str):
            return _short(error)
    return _short(json.dumps(data))


async def post_json(sender: RetryingSender, request: WireRequest, model_id: str) -> Any:
    """Send one request to an OpenAI-compatible server (chat completions, embeddings): the
    reply's JSON, or an LLMCallError for a failed connection, a non-2xx status (with the
    server's own message) or a body that is not JSON."""
    try:
        response = await sender.send(request)
    except WireError as exc:
        raise call_failed(model_id, detail=str(exc)) from None
    if not 200 <= response.status < 300:
        raise call_failed(model_id, status=response.status, detail=_error_detail(response.body))
    data = response.json
    if data is None:  # a 2xx without a JSON content type
        try:
            data = parse_json(response.body)
        except ValueError:
            raise call_failed(
                model_id, detail=f"HTTP {response.status} with a body that is not JSON"
            ) from None
    return data


def _answer_text(model_id: str, message: dict[str, Any]) -> str:
    """The text of a plain completion's reply. A reply without text (`content: null`) or
    one that calls a tool instead of answering is a failed call, never an empty answer:
    an empty answer would be scored (exact match calls it a correct refusal)."""
    content = message.get("content")
    calls = message.get("tool_calls") or message.get("function_call")
    if calls:
        names = [
            str((c.get("function") or {}).get("name", "?")) if isinstance(c, dict) else "?"
            for c in (calls if isinstance(calls, list) else [calls])
        ]
        raise call_failed(
            model_id,
            detail=f"the reply calls a tool ({_short(', '.join(names), 80)}) instead of "
            "answering in text; no tools were offered",
        )
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
        timeout: float,
        sender: RetryingSender,
        mode: StructuredMode,
        deadline: float | None = None,
    ) -> None:
        self.provider = provider
        self.name = name
        self.mode = mode
        self.model_id = f"{provider}/{name}"
        self._base_url = base_url or OPENAI_BASE_URL
        self._url = endpoint(self._base_url, "chat/completions")
        self._timeout = timeout
        self._deadline = deadline
        self._sender = sender
        self._headers = json_headers(api_key)

    def _options(self, options: CallOptions) -> dict[str, Any]:
        kwargs: dict[str, Any] = {}
        if options.temperature is not None:
            kwargs["temperature"] = options.temperature
        if options.max_tokens is not None:
            key = "max_completion_tokens" if is_reasoning_model(self.name) else "max_tokens"
            kwargs[key] = options.max_tokens
        return kwargs

    async def _post(self, body: dict[str, Any], more: str = "") -> dict[str, Any]:
        """POST a chat completion request (`body`, and the fields of the JSON object `more`
        after its own, as if they were in it); the reply's JSON, or an LLMCallError."""
        payload = request_json(body, more).encode("utf-8")
        request = WireRequest(
            "POST", self._url, self._headers, payload, self._timeout, self._deadline
        )
        data = await post_json(self._sender, request, self.model_id)
        if not isinstance(data, dict) or not data.get("choices"):
            raise call_failed(
                self.model_id, detail=f"the reply has no choices: {_short(json.dumps(data))}"
            )
        return data

    async def complete(self, messages: list[Message], options: CallOptions) -> str:
        data = await self._post(
            {"model": self.name, "messages": messages, **self._options(options)}
        )
        message = data["choices"][0].get("message")
        return _answer_text(self.model_id, message if isinstance(message, dict) else {})

    async def structured(
        self,
        messages: list[Message],
        response_model: type[BaseModel],
        options: CallOptions,
        max_validation_retries: int,
    ) -> StructuredOutcome:
        kwargs = {"model": self.name, "messages": messages, **self._options(options)}
        extras = native_extras(self.mode, response_model)
        first: dict[str, Any] | None = None
        if extras is not None:
            # The request instructor would send, without instructor; its reply read here
            # when it is the plain case, else handed to instructor below as the first reply.
            first = await self._post(kwargs, extras[1])
            outcome = native_outcome(self.mode, first, response_model)
            if outcome is not None:
                return outcome

        async def send(request: dict[str, Any]) -> Any:
            nonlocal first
            if first is not None:
                data, first = first, None
                return self._completion(data)
            return self._completion(await self._post(request))

        return await drive_structured(
            response_model, self.mode, kwargs, send, max_validation_retries
        )

    # -- the batch API (OpenAI's; see `_batch`) ---------------------------------------------

    def batch_api(self) -> OpenAIBatchAPI | None:
        """OpenAI's Batch API for openai/ models (at `base_url` when given); Ollama has none."""
        if self.provider != "openai":
            return None
        return OpenAIBatchAPI(
            self._sender, self._base_url, self._headers, self._timeout, self.model_id
        )

    def batch_body(
        self, messages: list[Message], options: CallOptions, model: type[BaseModel] | None
    ) -> dict[str, Any] | None:
        """The request a direct call sends first; None when only instructor can build it."""
        body = {"model": self.name, "messages": messages, **self._options(options)}
        if model is None:
            return body
        extras = native_extras(self.mode, model)
        return None if extras is None else {**body, **extras[0]}

    def batch_outcome(
        self, body: dict[str, Any], model: type[BaseModel] | None
    ) -> str | StructuredOutcome | None:
        """A batch item's reply read as a direct call reads its first one (None: it does
        not validate; the direct call re-asks)."""
        if model is not None:
            return native_outcome(self.mode, body, model)
        choices = body.get("choices")
        first = choices[0] if isinstance(choices, list) and choices else {}
        message = first.get("message") if isinstance(first, dict) else None
        return _answer_text(self.model_id, message if isinstance(message, dict) else {})

    def _completion(self, data: dict[str, Any]) -> Any:
        """The reply as openai's ChatCompletion, filling the envelope fields some
        compatible servers leave out."""
        from openai.types.chat import ChatCompletion

        data.setdefault("id", "")
        data.setdefault("object", "chat.completion")
        data.setdefault("created", 0)
        data.setdefault("model", self.name)
        for index, choice in enumerate(data["choices"]):
            if isinstance(choice, dict):
                choice.setdefault("index", index)
                choice.setdefault("finish_reason", "stop")
        from pydantic import ValidationError

        try:
            return ChatCompletion.model_validate(data)
        except ValidationError as exc:
            raise call_failed(
                self.model_id, detail=f"the reply is not a chat completion: {_short(str(exc))}"
            ) from None

    async def aclose(self) -> None:
        await self._sender.aclose()
