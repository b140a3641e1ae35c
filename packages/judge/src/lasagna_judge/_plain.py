"""The plain case of a structured call to an OpenAI-compatible server, without instructor.

In the tools and json_schema modes, for a plain pydantic model, `native_extras` builds the
fields instructor would add to the request (byte for byte: the tests compare them with
instructor's own), and `native_outcome` reads a reply of the plain chat-completion shape
that validates, as instructor's parser would. Anything else is left to instructor (None):
importing its OpenAI handlers imports the whole openai SDK, 0.3 s before a command's first
call, and reading each reply into a ChatCompletion costs CPU on every call.
"""

from __future__ import annotations

import inspect
import json
import re
import weakref
from typing import TYPE_CHECKING, Any

from lasagna_judge._providers import StructuredMode, StructuredOutcome

if TYPE_CHECKING:
    from pydantic import BaseModel

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
    from pydantic import BaseModel

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


_encode = json.JSONEncoder(ensure_ascii=False).encode  # one encoder, not one a call


def request_json(body: dict[str, Any], more: str = "") -> str:
    """The JSON of a request `body` followed by the fields of the JSON object `more`: the
    text of `json.dumps({**body, **json.loads(more)}, ensure_ascii=False)` when no key of
    `more` is in `body`, without encoding `more` again."""
    text = _encode(body)
    if body and len(more) > 2:
        text = f"{text[:-1]}, {more[1:]}"
    return text
