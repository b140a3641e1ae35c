"""What a FakeLLMServer's script is made of. A reply is a str (the assistant's content), a
`Reply` (content with options) or a `Fault` (a reply that goes wrong on purpose); the script
is one reply for every call, a list of them served in order, or a function of the request's
JSON body.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias


@dataclass(frozen=True)
class Fault:
    """A reply that goes wrong on purpose.

    - `status`: answer with this HTTP status (429, 500, 503, 400, ...) and an error body.
    - `retry_after`: seconds for a `Retry-After` header (a str is sent as is, e.g. an HTTP date).
    - `delay`: seconds to wait before answering; longer than the client's timeout, it is a
      timeout. After the delay the reply is `status` if given, else `content` with status 200.
    - `malformed`: answer 200 with a body that is not JSON.
    - `message`: the error message in the body of a `status` fault.
    """

    status: int | None = None
    retry_after: float | str | None = None
    delay: float = 0.0
    malformed: bool = False
    content: str = ""
    message: str | None = None


@dataclass(frozen=True)
class Reply:
    """A successful reply with options a plain str does not have.

    - `tool_call`: None follows the request (a tool call when it offers tools); False answers
      in plain text even then (a model that ignores the tools); True forces a tool call.
    - `input_tokens`, `output_tokens`: the usage to report instead of the estimate
      (characters / 4, at least 1).
    - `usage`: the chat completion's `usage` object sent as is (a hostile server's
      negative or non-numeric counts).
    - `null_content`: `"content": null` instead of the text (a reply with no text).
    - `extra`: fields added to the reply's top level, as a provider adds new ones.
    """

    content: str
    tool_call: bool | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    usage: dict[str, Any] | None = None
    null_content: bool = False
    extra: dict[str, Any] | None = None


ReplyValue: TypeAlias = str | Reply | Fault
ReplySpec: TypeAlias = ReplyValue | Sequence[ReplyValue] | Callable[[dict[str, Any]], ReplyValue]


class _ReplyError(Exception):
    """The scripted reply could not be produced (list exhausted, reply function raised)."""
