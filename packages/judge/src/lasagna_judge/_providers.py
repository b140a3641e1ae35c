"""What every provider backend shares: the `Backend` interface, a call's options and
structured outcome, the check of its messages, and the LLMCallError of a failed call.

A backend turns messages into text (`complete`) or into a validated pydantic object by
instructor's rules (`structured`, see `_structured`). The backends: `_openai_compat` (OpenAI,
or an OpenAI-compatible server: Ollama, vLLM, llama.cpp server, LM Studio), `_anthropic`, and
`_local` (an embedded llama.cpp model). Retries, the concurrency bound, the rate limit and
metering live below the backends, in `_transport.RetryingSender`; the local backend meters
its own generations. Vendor SDKs are imported inside the functions that need them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

from lasagna_judge._errors import LLMCallError
from lasagna_judge._retry import is_retryable_status
from lasagna_judge._usage import _current_call

if TYPE_CHECKING:
    from pydantic import BaseModel

PROVIDERS = ("openai", "anthropic", "ollama", "local", "fake")
"""The providers a model name may start with (`provider/name`): the one list, which the
command line's checks read too."""
BATCH_PROVIDERS = ("openai", "anthropic", "fake")
"""The providers whose backend has a batch API: OpenAI's Batch API (openai/; fake/ through
the scripted server's routes) and Anthropic's Message Batches. Ollama and local/ have none."""

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


class _Wire(Protocol):
    async def aclose(self) -> None: ...


class Backend:
    """The interface every provider implements."""

    provider: str
    name: str
    mode: StructuredMode
    wire: _Wire | None = None
    """What an SDK backend sends through (`_sdk.Wire`); None for an in-process model."""

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
        """Close the connections (a later call opens new ones)."""
        if self.wire is not None:
            await self.wire.aclose()


# -- failed calls ----------------------------------------------------------------------------


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def error_detail(body: bytes) -> str:
    """The server's own words from an error reply: OpenAI's and Anthropic's
    {"error": {"message": ...}}, Ollama's {"error": "..."}, else the body's first 300
    characters; empty for an empty body."""
    from lasagna_metrics import parse_json

    if not body.strip():
        return ""
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
    import json

    return _short(json.dumps(data))


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
