"""Provider backends: how one request reaches OpenAI, Anthropic, an OpenAI-compatible server
(Ollama, vLLM, llama.cpp server, LM Studio), or an embedded llama.cpp model.

A backend turns messages into text (`complete`) or into a validated pydantic object
by instructor's rules (`structured`). Retries, the concurrency bound, the rate limit and
metering live below the backends, in `_transport.RetryingSender`; the local backend meters
its own generations. Vendor SDKs are imported here, inside the functions that need them.
"""

from __future__ import annotations

import inspect
import json
import logging
import re
import weakref
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from lasagna_judge._errors import LLMCallError, MissingExtraError
from lasagna_judge._retry import is_retryable_status
from lasagna_judge._usage import _current_call

if TYPE_CHECKING:
    import httpx2

StructuredMode = Literal["tools", "json_schema", "json", "md_json"]
STRUCTURED_MODES: tuple[str, ...] = ("tools", "json_schema", "json", "md_json")

Message = dict[str, str]

# Reasoning models reject any temperature but the default (o1, o3, o4-mini, gpt-5...), and
# want max_completion_tokens instead of max_tokens. gpt-5-chat models are ordinary chat
# models and take both.
_REASONING_MODEL = re.compile(r"^(o\d|gpt-5(?!-chat))", re.IGNORECASE)


def is_reasoning_model(name: str) -> bool:
    """True for OpenAI reasoning models, which reject `temperature` (o1, o3, gpt-5, ...)."""
    return _REASONING_MODEL.match(name.rsplit("/", 1)[-1]) is not None


@dataclass(frozen=True)
class CallOptions:
    """Sampling options of one call; None means "do not send"."""

    temperature: float | None
    max_tokens: int | None


@dataclass(frozen=True)
class StructuredOutcome:
    value: BaseModel | None
    raw: str
    errors: tuple[str, ...] = ()


class Backend:
    """The interface every provider implements."""

    provider: str
    name: str
    mode: StructuredMode

    async def complete(self, messages: list[Message], options: CallOptions) -> str:
        raise NotImplementedError

    async def structured(
        self,
        messages: list[Message],
        response_model: type[BaseModel],
        options: CallOptions,
        max_validation_retries: int,
    ) -> StructuredOutcome:
        raise NotImplementedError

    async def aclose(self) -> None:
        return None


# -- shared helpers ------------------------------------------------------------------------


def _instructor_mode(mode: StructuredMode) -> Any:
    # instructor (>= 1.17) takes the provider from the client: the same modes serve both.
    import instructor

    return {
        "tools": instructor.Mode.TOOLS,
        "json_schema": instructor.Mode.JSON_SCHEMA,
        "json": instructor.Mode.JSON,
        "md_json": instructor.Mode.MD_JSON,
    }[mode]


def _parse_errors() -> tuple[type[BaseException], ...]:
    """The exceptions that mean "the model's output did not validate" (not a transport
    failure): the reply is then `unparsed`, with its raw text kept."""
    from pydantic import ValidationError

    errors: list[type[BaseException]] = [ValidationError, json.JSONDecodeError]
    try:
        from instructor.v2.core import errors as instructor_errors
    except ImportError:  # pragma: no cover - instructor moved its errors
        return tuple(errors)
    for name in ("ResponseParsingError", "AsyncValidationError", "IncompleteOutputException"):
        error = getattr(instructor_errors, name, None)
        if isinstance(error, type) and issubclass(error, BaseException):
            errors.append(error)
    return tuple(errors)


def _transport_errors() -> tuple[type[BaseException], ...]:
    import httpx2
    import openai

    errors: list[type[BaseException]] = [openai.APIError, httpx2.HTTPError]
    try:
        import anthropic
    except ImportError:
        pass
    else:
        errors.append(anthropic.APIError)
    return tuple(errors)


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def call_failed(model: str, *, status: int | None = None, detail: str = "") -> LLMCallError:
    """An LLMCallError for the current call: `status` and `detail` of the final reply (if
    any), the attempts and the last failure from the call's record."""
    record = _current_call.get()
    attempts = record.attempts if record is not None else 0
    if status is not None and not is_retryable_status(status) and not 200 <= status < 300:
        reason = f"HTTP {status}: {_short(detail)}" if detail else f"HTTP {status}"
        if status in (401, 403):
            reason += " (check the API key)"
        elif status == 404:
            reason += " (check the model name and the base URL)"
    elif record is not None and record.last_failure:
        reason = record.last_failure
    else:
        reason = _short(detail) or "no reply"
    if status is None and record is not None:
        status = record.last_status
    plural = "s" if attempts != 1 else ""
    return LLMCallError(
        f"{model}: the call failed after {attempts} attempt{plural}: {reason}",
        status=status,
        attempts=attempts,
    )


def sdk_call_failed(model: str, exc: BaseException) -> LLMCallError:
    """An LLMCallError from a vendor SDK's exception."""
    status = getattr(exc, "status_code", None)
    detail = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    return call_failed(model, status=status if isinstance(status, int) else None, detail=detail)


def raw_from_completion(completion: Any) -> str:
    """The text a model produced: tool-call arguments, tool_use input, or message text."""
    if completion is None:
        return ""
    choices = getattr(completion, "choices", None)
    if choices:  # OpenAI chat completion
        message = choices[0].message
        tool_calls = getattr(message, "tool_calls", None)
        if tool_calls:
            return str(tool_calls[0].function.arguments or "")
        return str(getattr(message, "content", None) or "")
    content = getattr(completion, "content", None)
    if isinstance(content, list):  # Anthropic message
        for block in content:
            if getattr(block, "type", None) == "tool_use":
                return json.dumps(getattr(block, "input", None), ensure_ascii=False)
        return "".join(
            str(getattr(block, "text", "")) for block in content if hasattr(block, "text")
        )
    return ""


def _error_lines(exc: BaseException) -> tuple[str, ...]:
    failed = getattr(exc, "failed_attempts", None) or []
    lines = [_short(str(getattr(attempt, "exception", "")), 500) for attempt in failed]
    return tuple(line for line in lines if line) or (_short(str(exc), 500),)


async def _instructor_structured(
    model: str, create: Any, kwargs: dict[str, Any], retries: int
) -> StructuredOutcome:
    """Run an instructor `create_with_completion` and sort its outcome into ok / unparsed /
    transport failure."""
    from instructor.core.exceptions import InstructorRetryException

    _quiet_instructor()
    parse_errors = _parse_errors()
    try:
        value, completion = await create(max_retries=retries, **kwargs)
    except InstructorRetryException as exc:
        cause = exc.__cause__ if isinstance(exc.__cause__, Exception) else exc
        if _is_transport_failure(cause):
            raise sdk_call_failed(model, cause) from None
        return StructuredOutcome(None, raw_from_completion(exc.last_completion), _error_lines(exc))
    except Exception as exc:
        if _is_transport_failure(exc):
            raise sdk_call_failed(model, exc) from None
        if isinstance(exc, parse_errors):
            return StructuredOutcome(None, "", (_short(str(exc), 500),))
        raise
    return StructuredOutcome(value, raw_from_completion(completion))


def _retryable_parse_errors() -> tuple[type[BaseException], ...]:
    """Output errors instructor re-asks about (not a reply cut off at max_tokens)."""
    return tuple(e for e in _parse_errors() if e.__name__ != "IncompleteOutputException")


_handlers_by_mode: dict[str, Any] = {}


def _openai_handlers(mode: StructuredMode) -> Any:
    handlers = _handlers_by_mode.get(mode)
    if handlers is None:
        from instructor.utils.providers import Provider
        from instructor.v2.core.registry import mode_registry

        handlers = mode_registry.get_handlers(Provider.OPENAI, _instructor_mode(mode))
        _handlers_by_mode[mode] = handlers
    return handlers


_prepared_models: weakref.WeakKeyDictionary[type[BaseModel], Any] = weakref.WeakKeyDictionary()


def _prepared_model(response_model: type[BaseModel]) -> Any:
    """instructor's runtime form of a response model, made once per class: instructor
    builds a new class (and its JSON schema) each time, a third of a call's CPU."""
    prepared = _prepared_models.get(response_model)
    if prepared is None:
        from instructor.v2.core.response_model import prepare_response_model

        prepared = _prepared_models[response_model] = prepare_response_model(response_model)
    return prepared


_PROBE = [{"role": "user", "content": "lasagna-probe"}]
_request_extras: dict[tuple[Any, str], tuple[Any, dict[str, Any] | None]] = {}


def _prepare_request(
    handlers: Any, mode: StructuredMode, prepared: Any, kwargs: dict[str, Any]
) -> tuple[Any, dict[str, Any]]:
    """instructor's request for `kwargs`. Modes that only add fields (tools, tool_choice,
    response_format) get them computed once per model class and mode; modes that write the
    schema into the messages (json, md_json) are prepared on every call."""
    key = (prepared, mode)
    cached = _request_extras.get(key)
    if cached is None:
        model, probe = handlers.request_handler(
            response_model=prepared, kwargs={"messages": [dict(m) for m in _PROBE]}
        )
        added = {k: v for k, v in probe.items() if k != "messages"}
        cached = (model, added if probe.get("messages") == _PROBE else None)
        _request_extras[key] = cached
    model, extras = cached
    if extras is None:
        result: tuple[Any, dict[str, Any]] = handlers.request_handler(
            response_model=prepared, kwargs=dict(kwargs)
        )
        return result
    return model, {**kwargs, "messages": list(kwargs["messages"]), **extras}


async def drive_structured(
    response_model: type[BaseModel],
    mode: StructuredMode,
    kwargs: dict[str, Any],
    send: Callable[[dict[str, Any]], Awaitable[Any]],
    max_validation_retries: int,
) -> StructuredOutcome:
    """A structured call by instructor's rules for an OpenAI-style `mode`: how to ask for
    the schema, how to parse the reply, how to re-ask after a validation error.

    Our own loop runs them: instructor's retry machinery (tenacity, hooks, a walk of the
    response model on every call) cost about 1.5 ms of CPU per call, more than all the rest
    of a grading. `send` posts the request dict and returns an openai ChatCompletion; it
    raises LLMCallError when the call fails.
    """
    handlers = _openai_handlers(mode)
    retryable = _retryable_parse_errors()
    prepared, request = _prepare_request(handlers, mode, _prepared_model(response_model), kwargs)
    errors: list[str] = []
    completion: Any = None
    for attempt in range(max_validation_retries + 1):
        completion = await send(request)
        try:
            value = handlers.response_parser(
                response=completion,
                response_model=prepared,
                validation_context=None,
                strict=True,
                stream=False,
                is_async=True,
            )
        except retryable as exc:
            errors.append(_short(str(exc), 500))
            if attempt == max_validation_retries:
                break
            request = handlers.reask_handler(kwargs=request, response=completion, exception=exc)
        except Exception as exc:  # any other failure to read the output: stop asking
            errors.append(_short(f"{type(exc).__name__}: {exc}", 500))
            break
        else:
            return StructuredOutcome(value, raw_from_completion(completion))
    return StructuredOutcome(None, raw_from_completion(completion), tuple(errors))


def _is_transport_failure(exc: BaseException) -> bool:
    """An SDK or httpx2 error, or any error right after a failed network attempt (an SDK
    choking on a body that is not JSON, say): the call failed, the model said nothing."""
    if isinstance(exc, _transport_errors()):
        return True
    record = _current_call.get()
    return record is not None and record.last_failure is not None


def _quiet_instructor() -> None:
    # instructor logs every exhausted re-ask at ERROR; "unparsed" is an outcome we report,
    # not an error to print. A NullHandler keeps Python's last-resort handler from writing
    # it to stderr while leaving any logging the user configures untouched.
    logger = logging.getLogger("instructor")
    if not any(isinstance(h, logging.NullHandler) for h in logger.handlers):
        logger.addHandler(logging.NullHandler())


def _http_client(transport: httpx2.AsyncBaseTransport, timeout: float) -> httpx2.AsyncClient:
    import httpx2

    return httpx2.AsyncClient(transport=transport, timeout=httpx2.Timeout(timeout))


# -- Anthropic -------------------------------------------------------------------------------

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
        return "".join(
            str(getattr(block, "text", "")) for block in response.content if block.type == "text"
        )

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


def check_messages(messages: Sequence[object]) -> list[Message]:
    """A copy of `messages` as plain dicts, or a JudgeError naming the first bad one."""
    from lasagna_judge._errors import JudgeError

    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        raise JudgeError(
            "messages must be a list of {'role': ..., 'content': ...} dicts, "
            f"got {type(messages).__name__}"
        )
    if not messages:
        raise JudgeError("messages is empty: give at least one user message")
    checked: list[Message] = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise JudgeError(
                f"messages[{index}] must be a dict with 'role' and 'content', "
                f"got {type(message).__name__}"
            )
        role, content = message.get("role"), message.get("content")
        if role not in ("system", "user", "assistant"):
            raise JudgeError(
                f"messages[{index}]['role'] must be 'system', 'user' or 'assistant', got {role!r}"
            )
        if not isinstance(content, str):
            raise JudgeError(
                f"messages[{index}]['content'] must be a str, got {type(content).__name__}"
            )
        checked.append({"role": role, "content": content})
    return checked
