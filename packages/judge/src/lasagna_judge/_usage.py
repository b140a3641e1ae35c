"""Counting what calls cost: network requests, tokens, time on the wire, and dollars (at
the prices of a table the user gives, `read_prices`).

Each LLM object has a `Meter` (its totals). Each logical call (`complete`, `structured`)
opens a `CallRecord` in a context variable; the transport (or the local backend) adds every
network attempt to both, so a call's usage includes its retries and validation re-asks.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lasagna_judge._errors import JudgeError, JudgeUsageError
from lasagna_judge._types import Usage

Prices = Mapping[str, tuple[float, float]]


@dataclass
class CallRecord:
    """What one logical call used, across all its network attempts."""

    attempts: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    wire_s: float = 0.0
    last_status: int | None = None
    last_failure: str | None = None

    @property
    def usage(self) -> Usage:
        return Usage(self.input_tokens, self.output_tokens)


BATCH_PRICE = 0.5
"""What a token answered through a batch API costs, as a share of its price: OpenAI's Batch
API and Anthropic's Message Batches both charge half."""


@dataclass
class Meter:
    """Totals of one LLM object: network calls made and tokens spent (cache hits excluded);
    the tokens of batch items are in the totals and, apart, in `batch_usage`."""

    calls_made: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    batch_input_tokens: int = 0
    batch_output_tokens: int = 0

    @property
    def usage(self) -> Usage:
        return Usage(self.input_tokens, self.output_tokens)

    @property
    def batch_usage(self) -> Usage:
        return Usage(self.batch_input_tokens, self.batch_output_tokens)

    def add_batch(self, usage: Usage) -> None:
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.batch_input_tokens += usage.input_tokens
        self.batch_output_tokens += usage.output_tokens


_current_call: ContextVar[CallRecord | None] = ContextVar("lasagna_judge_call", default=None)


@contextlib.contextmanager
def call_record() -> Iterator[CallRecord]:
    record = CallRecord()
    token = _current_call.set(record)
    try:
        yield record
    finally:
        _current_call.reset(token)


def record_attempt(
    meter: Meter,
    *,
    seconds: float,
    usage: Usage | None = None,
    status: int | None = None,
    failure: str | None = None,
) -> None:
    """Count one network attempt on the LLM's meter and on the current call, if any."""
    meter.calls_made += 1
    if usage is not None:
        meter.input_tokens += usage.input_tokens
        meter.output_tokens += usage.output_tokens
    record = _current_call.get()
    if record is None:
        return
    record.attempts += 1
    record.wire_s += seconds
    record.last_status = status
    record.last_failure = failure
    if usage is not None:
        record.input_tokens += usage.input_tokens
        record.output_tokens += usage.output_tokens


class BadUsage(ValueError):
    """A reply's token counts that cannot be believed: negative, or not numbers."""


def _count(value: object, name: str) -> int:
    """A token count as a reply gives it: a whole number, 0 or more (12.0 too); a missing
    or null count is 0. Anything else fails the call rather than enter a sum: a negative
    count would take tokens off the bill, a string or NaN would break it."""
    if value is None:
        return 0
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        raise BadUsage(
            f"a token count that cannot be believed: {name} is {shown} (expected a whole "
            "number, 0 or more)"
        )
    return value


def usage_from_body(body: object) -> Usage | None:
    """Token usage from an OpenAI (`prompt_tokens`), Responses API or Anthropic
    (`input_tokens`) or native Ollama (`prompt_eval_count`) reply; `BadUsage` when a count
    is negative or not a number."""
    if not isinstance(body, dict):
        return None
    usage = body.get("usage")
    if not isinstance(usage, dict):
        # Ollama's native API counts at the top level.
        names = ("prompt_eval_count", "eval_count")
        if all(body.get(n) is None for n in names):
            return None
        return Usage(*(_count(body.get(n), n) for n in names))

    def count(*names: str) -> int:
        return sum(_count(usage.get(name), f"usage.{name}") for name in names)

    if "prompt_tokens" in usage or "completion_tokens" in usage:
        return Usage(count("prompt_tokens"), count("completion_tokens"))
    if "input_tokens" in usage or "output_tokens" in usage:
        # Anthropic counts cached prompt tokens apart from input_tokens; all were read.
        return Usage(
            count("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"),
            count("output_tokens"),
        )
    return None


FAKE_PROVIDER = "fake"
"""The provider of scripted models (`lasagna_judge._fake`), which cost nothing."""


def is_scripted(model: str | None) -> bool:
    """Whether `model` (`provider/name`) is a scripted `fake/` model."""
    return bool(model) and str(model).partition("/")[0] == FAKE_PROVIDER


def read_prices(path: Path) -> dict[str, tuple[float, float]]:
    """A price table: {"provider/model" or "model": [USD per 1M input, per 1M output]}, in
    JSON or TOML (by its suffix). A file that cannot be read is a JudgeUsageError, a table
    that is not one a JudgeError."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise JudgeUsageError(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise JudgeError(f"{path} is not UTF-8 text; expected JSON or TOML") from None
    from lasagna_judge._toml import load_toml
    from lasagna_metrics import parse_json

    try:
        raw: Any = load_toml(text) if path.suffix.lower() == ".toml" else parse_json(text)
    except ValueError as exc:  # TomlError and JSONDecodeError
        raise JudgeError(f"{path} is not valid JSON or TOML: {exc}") from None
    if not isinstance(raw, dict):
        raise JudgeError(f"{path} must map model names to [input, output] USD per 1M tokens")
    table: dict[str, tuple[float, float]] = {}
    for model, price in raw.items():
        ok = (
            isinstance(price, list | tuple)
            and len(price) == 2
            and all(isinstance(p, int | float) and not isinstance(p, bool) for p in price)
        )
        if not ok:
            raise JudgeError(
                f"{path}: the price of {model!r} must be [input, output] in USD per 1M "
                f"tokens, e.g. [0.15, 0.6], got {price!r}"
            )
        table[str(model)] = (float(price[0]), float(price[1]))
    return table


def price_for(prices: Prices | None, model: str | None) -> tuple[float, float] | None:
    """The (input, output) USD per 1M tokens for `provider/name`, looked up by the full id
    first, then by the bare name; None without a table, a model or a price. A scripted
    `fake/` model is free, whatever the table says."""
    if is_scripted(model):
        return (0.0, 0.0)
    if not prices or not model:
        return None
    if model in prices:
        return prices[model]
    bare = model.split("/", 1)[-1]
    return prices.get(bare)


def cost_usd(prices: Prices | None, model: str, usage: Usage) -> float | None:
    price = price_for(prices, model)
    if price is None:
        return None
    per_input, per_output = price
    return (usage.input_tokens * per_input + usage.output_tokens * per_output) / 1_000_000
