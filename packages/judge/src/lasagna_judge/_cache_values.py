"""What the response cache keeps of a reply, and the reply a cache hit gives back.

A direct call's answer and a batch item's are kept alike, under the key the direct call
would use; a batch item's value also says `"batch": true`, so its tokens are priced at the
batch price whenever it is read (an entry without it, as every entry before it was kept,
is a direct call's).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from lasagna_judge._types import Completion, Structured, Usage

if TYPE_CHECKING:
    from pydantic import BaseModel

T = TypeVar("T", bound="BaseModel")


def _batch_mark(batch: bool) -> dict[str, Any]:
    return {"batch": True} if batch else {}


def completion_value(result: Completion) -> dict[str, Any]:
    """What the cache keeps of a text reply (a direct call's or a batch item's)."""
    return {
        "text": result.text,
        "usage": [result.usage.input_tokens, result.usage.output_tokens],
        "latency_s": result.latency_s,
        "attempts": result.attempts,
        **_batch_mark(result.batch),
    }


def structured_value(result: Structured[Any]) -> dict[str, Any]:
    """What the cache keeps of a structured reply (a direct call's or a batch item's)."""
    value = result.value
    return {
        "value": value.model_dump(mode="json") if value is not None else None,
        "raw": result.raw,
        "usage": [result.usage.input_tokens, result.usage.output_tokens],
        "latency_s": result.latency_s,
        "attempts": result.attempts,
        "validation_errors": list(result.validation_errors),
        **_batch_mark(result.batch),
    }


def completion_hit(hit: dict[str, Any], model: str, *, paid_now: bool) -> Completion:
    """The text reply of a cache hit; `paid_now`: this process's batch answered it, so it
    is not `cached` (its tokens are this run's)."""
    return Completion(
        text=str(hit["text"]),
        usage=Usage(*hit["usage"]),
        latency_s=float(hit["latency_s"]),
        cached=not paid_now,
        model=model,
        attempts=int(hit.get("attempts", 1)),
        batch=bool(hit.get("batch", False)),
    )


def structured_hit(
    hit: dict[str, Any], response_model: type[T], model: str, *, paid_now: bool
) -> Structured[T] | None:
    """The structured reply of a cache hit (`paid_now` as in `completion_hit`); None for
    an entry this version cannot read, which is then called again."""
    from pydantic import ValidationError

    try:
        raw_value = hit["value"]
        value = None if raw_value is None else response_model.model_validate(raw_value)
        return Structured(
            value=value,
            status="ok" if value is not None else "unparsed",
            raw=str(hit["raw"]),
            usage=Usage(*hit["usage"]),
            latency_s=float(hit["latency_s"]),
            cached=not paid_now,
            model=model,
            attempts=int(hit.get("attempts", 1)),
            validation_errors=tuple(hit.get("validation_errors", ())),
            batch=bool(hit.get("batch", False)),
        )
    except (KeyError, TypeError, ValueError, ValidationError):
        return None
