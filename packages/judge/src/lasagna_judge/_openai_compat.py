"""OpenAI's chat completions API, at api.openai.com or any compatible server (Ollama, vLLM,
llama.cpp server, LM Studio, a FakeLLMServer).

The wire format is small and stable, so we speak it directly through `RetryingSender`
rather than through the openai SDK, whose request and response handling cost about 1 ms of
CPU per call (half a grading's budget when 50 calls are in flight). Structured calls follow
instructor's rules for the chosen mode (`drive_structured`); replies are read back into
openai's own `ChatCompletion` type for instructor's parsers.

The common case skips both (`native_extras`, `native_outcome`): in the tools and json_schema
modes, for a plain pydantic model, the request instructor would build is built here, and a
reply of the plain shape that validates is read here. Importing instructor's OpenAI handlers
imports the whole openai SDK, 0.3 s of a command's start before its first call could leave;
reading a reply into a ChatCompletion costs CPU on every call. Anything else (another mode
or model, a reply that does not validate or has an unusual shape) goes to instructor as
before, which then reads that same reply and re-asks by its own rules: the outcome is the
same either way.
"""

from __future__ import annotations

import inspect
import json
import re
import weakref
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from pydantic import BaseModel, ValidationError

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

OPENAI_BASE_URL = "https://api.openai.com/v1"


def _user_agent() -> str:
    try:
        return f"lasagna-judge/{version('lasagna-judge')}"
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "lasagna-judge"


def _error_detail(body: bytes) -> str:
    """The server's own words from an error reply: OpenAI's {"error": {"message": ...}}."""
    try:
        data = json.loads(body)
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


# -- the plain case, without instructor --------------------------------------------------

# instructor's markers of its async validators (instructor.v2.validation.async_validators),
# which its runtime refuses: a model carrying one is left to instructor.
_INSTRUCTOR_MARKERS = ("__async_validator__", "__async_model_validator__")
Extras = tuple[dict[str, Any], str]  # the fields, and their JSON as _post encodes them
_extras: weakref.WeakKeyDictionary[type[BaseModel], dict[str, Extras] | None]
_extras = weakref.WeakKeyDictionary()


def native_extras(mode: StructuredMode, model: type[BaseModel]) -> Extras | None:
    """What instructor adds to a request for `model` in `mode` (tools and tool_choice, or
    response_format), computed its way, and its JSON; None when this model or mode is left
    to instructor."""
    if mode not in ("tools", "json_schema"):
        return None
    if model not in _extras:
        plain = _plain_extras(model)
        _extras[model] = (
            None
            if plain is None
            else {
                m: (fields, json.dumps(fields, ensure_ascii=False)) for m, fields in plain.items()
            }
        )
    by_mode = _extras[model]
    return None if by_mode is None else by_mode[mode]


def _plain_extras(model: type[BaseModel]) -> dict[str, dict[str, Any]] | None:
    # instructor sends the schema of its subclass of the model (same fields, same docstring),
    # which is the model's own schema for a plain model: one that is not generic, not
    # instructor's, without instructor's async validators, not self-referencing.
    if model.__pydantic_generic_metadata__["origin"] is not None or not _plain(model, set()):
        return None
    schema = model.model_json_schema()
    if model.__name__ in schema.get("$defs", {}):
        return None
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return None
    doc = model.__doc__
    if "description" not in schema and doc is not None:
        return None  # a blank docstring: instructor's summary of it is not reproduced here
    # instructor copies a docstring's parameter descriptions (docstring_parser) into the
    # properties that have none: left to it whenever the docstring could describe one.
    if doc and any(_may_describe(doc, n) for n, p in properties.items() if "description" not in p):
        return None
    # instructor.v2.providers.openai.schema.generate_openai_schema, step for step
    parameters = {k: v for k, v in schema.items() if k not in ("title", "description")}
    parameters["required"] = sorted(schema.get("required", []))
    description = schema.get("description") or (
        f"Correctly extracted `{model.__name__}` with all the required parameters with "
        "correct types"
    )
    function = {"name": schema["title"], "description": description, "parameters": parameters}
    return {
        "tools": {
            "tools": [{"type": "function", "function": function}],
            "tool_choice": {"type": "function", "function": {"name": function["name"]}},
        },
        "json_schema": {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": model.__name__, "schema": model.model_json_schema()},
            }
        },
    }


# A numpydoc section underline: its parameters may be bare names, one a line.
_UNDERLINE = re.compile(r"(?m)^\s*-{3,}\s*$")


def _may_describe(doc: str, name: str) -> bool:
    """Whether docstring_parser could read a description of parameter `name` in `doc`: every
    style it reads names a parameter followed by a colon, perhaps after a type in brackets
    (Google `name (int): ...`, reST `:param name: ...`, numpydoc `name : int`, epydoc
    `@param name: ...`), except numpydoc's bare names, under an underlined section."""
    if _UNDERLINE.search(doc):
        return True
    return re.search(rf"(?<!\w){re.escape(name)}\s*(?:\([^)]*\))?\s*:", doc) is not None


def _plain(model: type[BaseModel], seen: set[int]) -> bool:
    """No class in `model`'s MRO is instructor's or carries its async validator markers,
    nor does any model reachable through its fields."""
    if id(model) in seen:
        return True
    seen.add(id(model))
    for base in model.__mro__:
        if base.__module__.partition(".")[0] == "instructor":
            return False
        for member in vars(base).values():
            if isinstance(member, classmethod | staticmethod):
                member = member.__func__
            if any(getattr(member, marker, None) is not None for marker in _INSTRUCTOR_MARKERS):
                return False
    for field in model.model_fields.values():
        for inner in _classes(field.annotation):
            if issubclass(inner, BaseModel) and not _plain(inner, seen):
                return False
    return True


def _classes(annotation: Any) -> list[type]:
    from typing import get_args

    found = [annotation] if inspect.isclass(annotation) else []
    for argument in get_args(annotation):
        found.extend(_classes(argument))
    return found


_FINISH = frozenset({"stop", "length", "tool_calls", "content_filter", "function_call"})
_MESSAGE_NONE_ONLY = ("refusal", "annotations", "audio", "function_call")


def native_outcome(
    mode: StructuredMode, data: dict[str, Any], model: type[BaseModel]
) -> StructuredOutcome | None:
    """The outcome instructor would give for this reply when it is the plain case (a reply
    that openai's ChatCompletion reads as is, not cut off, that validates); else None."""
    if not _plain_completion(data):
        return None
    message = data["choices"][0]["message"]
    tool_calls = message.get("tool_calls")
    if mode == "tools":
        if not tool_calls:
            return None
        text = tool_calls[0]["function"]["arguments"]
    else:
        if tool_calls:
            return None
        text = message.get("content") or ""
    if data["choices"][0].get("finish_reason") == "length":
        return None
    try:
        value = model.model_validate_json(text, strict=True)
    except Exception:  # instructor reads it again, and says why
        return None
    return StructuredOutcome(value, text)


def _plain_completion(data: dict[str, Any]) -> bool:
    """True when every field openai's ChatCompletion checks is present with a plain value
    (the envelope fields `_completion` fills in may be missing): a reply it accepts as is."""
    if not (
        type(data.get("id", "")) is str
        and data.get("object", "chat.completion") == "chat.completion"
        and type(data.get("created", 0)) is int
        and type(data.get("model", "")) is str
        and all(data.get(k) is None for k in ("metadata", "moderation", "service_tier"))
        and _none_or_str(data.get("system_fingerprint"))
        and _plain_usage(data.get("usage"))
    ):
        return False
    choices = data["choices"]
    return type(choices) is list and bool(choices) and all(map(_plain_choice, choices))


def _plain_usage(usage: Any) -> bool:
    if usage is None:
        return True
    if type(usage) is not dict:
        return False
    if any(type(usage.get(k)) is not int for k in ("prompt_tokens", "completion_tokens")):
        return False
    if type(usage.get("total_tokens")) is not int:
        return False
    for name in ("prompt_tokens_details", "completion_tokens_details"):
        details = usage.get(name)
        if details is not None and (
            type(details) is not dict
            or any(v is not None and type(v) is not int for v in details.values())
        ):
            return False
    return True


def _none_or_str(value: Any) -> bool:
    return value is None or type(value) is str


def _plain_choice(choice: Any) -> bool:
    if type(choice) is not dict:
        return False
    finish = choice.get("finish_reason", "stop")  # `_completion` fills in a missing one
    if type(finish) is not str or finish not in _FINISH:
        return False
    if type(choice.get("index", 0)) is not int or choice.get("logprobs") is not None:
        return False
    message = choice.get("message")
    if type(message) is not dict or message.get("role") != "assistant":
        return False
    if not _none_or_str(message.get("content")):
        return False
    if any(message.get(k) is not None for k in _MESSAGE_NONE_ONLY):
        return False
    tool_calls = message.get("tool_calls")
    if tool_calls is None:
        return True
    return type(tool_calls) is list and all(map(_plain_tool_call, tool_calls))


def _plain_tool_call(call: Any) -> bool:
    if type(call) is not dict or type(call.get("id")) is not str:
        return False
    function = call.get("function")
    return (
        call.get("type") == "function"
        and type(function) is dict
        and type(function.get("name")) is str
        and type(function.get("arguments")) is str
    )


def request_json(body: dict[str, Any], more: str = "") -> str:
    """The JSON of a request `body` followed by the fields of the JSON object `more`: the
    text of `json.dumps({**body, **json.loads(more)}, ensure_ascii=False)` when no key of
    `more` is in `body`, without encoding `more` again."""
    text = json.dumps(body, ensure_ascii=False)
    if body and len(more) > 2:
        text = f"{text[:-1]}, {more[1:]}"
    return text


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
    ) -> None:
        self.provider = provider
        self.name = name
        self.mode = mode
        self.model_id = f"{provider}/{name}"
        self._url = (base_url or OPENAI_BASE_URL).rstrip("/") + "/chat/completions"
        self._timeout = timeout
        self._sender = sender
        self._headers = [
            ("Content-Type", "application/json"),
            ("Accept", "application/json"),
            ("User-Agent", _user_agent()),
        ]
        if api_key:
            self._headers.append(("Authorization", f"Bearer {api_key}"))

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
        request = WireRequest("POST", self._url, self._headers, payload, self._timeout)
        try:
            response = await self._sender.send(request)
        except WireError as exc:
            raise call_failed(self.model_id, detail=str(exc)) from None
        if not 200 <= response.status < 300:
            raise call_failed(
                self.model_id, status=response.status, detail=_error_detail(response.body)
            )
        data = response.json
        if data is None:  # a 2xx without a JSON content type
            try:
                data = json.loads(response.body)
            except ValueError:
                raise call_failed(
                    self.model_id, detail=f"HTTP {response.status} with a body that is not JSON"
                ) from None
        if not isinstance(data, dict) or not data.get("choices"):
            raise call_failed(
                self.model_id, detail=f"the reply has no choices: {_short(json.dumps(data))}"
            )
        return data

    async def complete(self, messages: list[Message], options: CallOptions) -> str:
        data = await self._post(
            {"model": self.name, "messages": messages, **self._options(options)}
        )
        message = data["choices"][0].get("message") or {}
        return str(message.get("content") or "")

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
        try:
            return ChatCompletion.model_validate(data)
        except ValidationError as exc:
            raise call_failed(
                self.model_id, detail=f"the reply is not a chat completion: {_short(str(exc))}"
            ) from None

    async def aclose(self) -> None:
        await self._sender.aclose()
