"""What a model call returns: text or a validated object, with its usage and timing."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, Literal, TypeVar

T = TypeVar("T")

StructuredStatus = Literal["ok", "unparsed"]


@dataclass(frozen=True)
class Usage:
    """Token counts; they add up with `+`."""

    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens
        )

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True)
class Completion:
    """A plain-text reply.

    `usage` and `latency_s` are those of the call that produced the text: on a cache hit
    (`cached=True`) they are the recorded ones, so a rerun reproduces its results exactly;
    the tokens actually spent by this process are in `LLM.usage`.
    `latency_s` is the time spent on the wire (queueing for a concurrency slot and backoff
    between retries excluded). `attempts` counts the network requests made for it.
    `batch`: the reply came through a provider's batch API, so its tokens cost `BATCH_PRICE`
    of the price. This process's batch answers are read back from the cache, yet they are
    not `cached`: this run paid for them (they are in `LLM.usage`); a later run's hit is.
    """

    text: str
    usage: Usage
    latency_s: float
    cached: bool
    model: str
    attempts: int = 1
    batch: bool = False


@dataclass(frozen=True)
class Structured(Generic[T]):
    """A reply validated against a pydantic model.

    `status` is "ok" with `value` set, or "unparsed" with `value` None when the model never
    produced valid output within the validation retries; `raw` is always the model's last
    raw output text (the tool-call arguments or the message content), for fallback parsing.
    `usage`, `cached` and `batch` are as in `Completion`.
    """

    value: T | None
    status: StructuredStatus
    raw: str
    usage: Usage
    latency_s: float
    cached: bool
    model: str
    attempts: int = 1
    validation_errors: tuple[str, ...] = field(default=())
    batch: bool = False
