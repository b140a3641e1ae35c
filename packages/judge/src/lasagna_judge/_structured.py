"""Structured output by instructor's rules: how to ask for the schema, how to parse the reply,
how to re-ask after a validation error, and whether an outcome is ok, unparsed or a failure.

`drive_structured` runs instructor's OpenAI-style handlers in a loop of our own (the
OpenAI-compatible, native and local backends), each request sent by the caller's `send`;
`_instructor_structured` runs an instructor client (Anthropic's). instructor is imported
inside the functions that need it.
"""

from __future__ import annotations

import json
import logging
import weakref
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from lasagna_judge._providers import StructuredMode, StructuredOutcome, _short
from lasagna_judge._sdk import sdk_failure

if TYPE_CHECKING:
    from pydantic import BaseModel


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
        value, completion = await create(max_retries=retries, hooks=_capping_hooks(), **kwargs)
    except InstructorRetryException as exc:
        cause = exc.__cause__ if isinstance(exc.__cause__, Exception) else exc
        failed = sdk_failure(model, cause)
        if failed is not None:
            raise failed from None
        return StructuredOutcome(None, raw_from_completion(exc.last_completion), _error_lines(exc))
    except Exception as exc:
        failed = sdk_failure(model, exc)
        if failed is not None:
            raise failed from None
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
    response model on every call) cost more CPU per call than all the rest of a grading. `send`
    posts the request dict and returns an openai ChatCompletion; it raises LLMCallError when the
    call fails.
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
            asked = len(request["messages"])  # instructor's handler extends the list in place
            request = handlers.reask_handler(kwargs=request, response=completion, exception=exc)
            request["messages"] = request["messages"][:asked] + [
                capped_message(m) for m in request["messages"][asked:]
            ]
        except Exception as exc:  # any other failure to read the output: stop asking
            errors.append(_short(f"{type(exc).__name__}: {exc}", 500))
            break
        else:
            return StructuredOutcome(value, raw_from_completion(completion))
    return StructuredOutcome(None, raw_from_completion(completion), tuple(errors))


REASK_QUOTE_CHARS = 4_000
"""What a re-ask quotes of the reply it asks to correct, at most (its start and its end):
a grade's JSON is a few hundred characters, and a reply of megabytes would otherwise be sent
back whole on every re-ask."""


def _capped_text(text: str) -> str:
    if len(text) <= REASK_QUOTE_CHARS:
        return text
    half = REASK_QUOTE_CHARS // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half:,} characters left out ...]\n{text[-half:]}"


def capped_message(message: Any) -> Any:
    """A message a re-ask adds (the reply quoted back, the validation error), its content
    (Anthropic's blocks too) and any tool call's arguments cut to `REASK_QUOTE_CHARS`."""
    if not isinstance(message, dict):
        return message
    capped = dict(message)
    if isinstance(capped.get("content"), str):
        capped["content"] = _capped_text(capped["content"])
    elif isinstance(capped.get("content"), list):
        capped["content"] = [_capped_block(block) for block in capped["content"]]
    calls = capped.get("tool_calls")
    if isinstance(calls, list):
        capped["tool_calls"] = [_capped_call(call) for call in calls]
    return capped


def _capped_block(block: Any) -> Any:
    """An Anthropic content block: a text, a tool result's text, a tool call's input (an
    object it must stay: a long one is quoted as one field)."""
    if not isinstance(block, dict):
        return block
    capped = dict(block)
    for name in ("text", "content"):
        if isinstance(capped.get(name), str):
            capped[name] = _capped_text(capped[name])
    if "input" in capped:
        text = json.dumps(capped["input"], ensure_ascii=False)
        if len(text) > REASK_QUOTE_CHARS:
            capped["input"] = {"quoted": _capped_text(text)}
    return capped


def _capping_hooks() -> Any:
    """Per-call instructor hooks that cut what instructor's own re-asks quote (its
    Anthropic loop, which `drive_structured` does not run): the messages after the first
    request's are capped in place before each request leaves."""
    from instructor.v2.core.hooks import Hooks

    first: list[int] = []

    def cap(*_: Any, **kwargs: Any) -> None:
        messages = kwargs.get("messages")
        if not isinstance(messages, list):
            return
        if not first:
            first.append(len(messages))
            return
        messages[first[0] :] = [capped_message(m) for m in messages[first[0] :]]

    hooks = Hooks()
    hooks.on("completion:kwargs", cap)
    return hooks


def _capped_call(call: Any) -> Any:
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(function, dict) or not isinstance(function.get("arguments"), str):
        return call
    return {**call, "function": {**function, "arguments": _capped_text(function["arguments"])}}


def _quiet_instructor() -> None:
    # instructor logs every exhausted re-ask at ERROR; "unparsed" is an outcome we report,
    # not an error to print. A NullHandler keeps Python's last-resort handler from writing
    # it to stderr while leaving any logging the user configures untouched.
    logger = logging.getLogger("instructor")
    if not any(isinstance(h, logging.NullHandler) for h in logger.handlers):
        logger.addHandler(logging.NullHandler())
