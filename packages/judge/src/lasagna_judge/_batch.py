"""Requests that can wait, at the batch price: `run_batch` sends an LLM's requests through
its provider's batch API and stores each answer in the LLM's cache, under the key a direct
call would use. The callers then make their calls as usual: the batch's answers are cache
hits, and what the batch could not answer (an item errored, expired or canceled, a reply
that does not parse) is called directly, with the usual retries and re-asks.

    requests = [BatchRequest(prompt.as_list(), GradeModel) for prompt in prompts]
    report = await run_batch(llm, requests, state=BatchState(path, write_bytes_atomic))
    grades = await grade_batch(llm, rubric, items)        # cache hits, and the rest

A job survives a kill: the batch id is written to the state file (by the atomic writer
given) before the first poll, and a rerun with the same model finds it and polls that batch
instead of submitting (and paying for) another. The file goes once the answers are in the
cache; a later rerun finds them there and sends nothing.

A batch item's cache entry says so (`"batch": true`): a hit on it is a `Completion` or
`Structured` with `batch=True`, whose tokens cost `BATCH_PRICE` of the price; in the
process whose batch answered it, the hit is not `cached` (that run paid for it).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from lasagna_judge._batch_apis import BatchAPI, BatchError, BatchStatus, ItemResult
from lasagna_judge._cache_values import completion_value, structured_value
from lasagna_judge._errors import LLMCallError
from lasagna_judge._providers import CallOptions, Message, StructuredOutcome, check_messages
from lasagna_judge._types import Completion, Structured, Usage
from lasagna_judge._usage import BadUsage, usage_from_body
from lasagna_metrics import parse_json

if TYPE_CHECKING:
    from pydantic import BaseModel

    from lasagna_judge._llm import LLM

STATE_VERSION = 1


@dataclass(frozen=True)
class BatchRequest:
    """One call to make through the batch: `complete` (no `response_model`) or
    `structured`, with the arguments those calls take."""

    messages: Sequence[Mapping[str, str]]
    response_model: type[BaseModel] | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    max_validation_retries: int = 2


@dataclass(frozen=True)
class BatchReport:
    """What a batch did. `failed` items (and `direct` ones, which the batch API cannot
    take) are left to the caller's direct calls."""

    api: str
    batch_ids: tuple[str, ...]
    requests: int  # distinct requests asked for
    cached: int  # already in the cache: not sent
    sent: int  # in a batch (this run's, or the resumed one's)
    answered: int  # stored in the cache
    failed: int
    direct: int
    usage: Usage  # tokens the batch's replies used, billed at the batch price
    resumed: bool
    failures: tuple[str, ...] = ()  # the first few reasons


@runtime_checkable
class BatchBackend(Protocol):
    """A backend whose provider has a batch API (OpenAI's, Anthropic's)."""

    def batch_api(self) -> BatchAPI | None: ...

    def batch_body(
        self, messages: list[Message], options: CallOptions, model: type[BaseModel] | None
    ) -> dict[str, Any] | None: ...

    def batch_outcome(
        self, body: dict[str, Any], model: type[BaseModel] | None
    ) -> str | StructuredOutcome | None: ...


class BatchState:
    """The state file of one batch job: which batch it follows, written by `write` (an
    atomic writer: `lasagna_synth.write_bytes_atomic`) so a kill leaves it whole or absent."""

    def __init__(self, path: Path | str, write: Callable[[Path, bytes], None]) -> None:
        self.path = Path(path)
        self._write = write

    def load(self) -> dict[str, Any] | None:
        try:
            text = self.path.read_bytes()
        except FileNotFoundError:
            return None
        try:
            data = parse_json(text)
        except ValueError:
            data = None
        if not isinstance(data, dict) or not isinstance(data.get("batch_id"), str):
            raise BatchError(
                f"{self.path}: expected the JSON state of a batch job, found something else; "
                "delete it to submit the batch again"
            )
        return data

    def save(self, data: dict[str, Any]) -> None:
        self._write(self.path, json.dumps(data, indent=1).encode("utf-8"))

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)


def batch_api(llm: LLM) -> BatchAPI:
    """The batch API of `llm`'s provider; BatchError (one line) when it has none or the
    LLM has no cache to hold the answers."""
    backend = llm._backend
    api = backend.batch_api() if isinstance(backend, BatchBackend) else None
    if api is None:
        raise BatchError(
            f"{llm.model} has no batch API: batches go through OpenAI's Batch API (openai/ "
            "models) or Anthropic's Message Batches (anthropic/ models); run it without a batch"
        )
    if llm._cache is None:
        raise BatchError(
            "a batch keeps its answers in the LLM cache, which is off; turn the cache on"
        )
    return api


@dataclass
class _Pending:
    request: BatchRequest
    messages: list[Message]
    options: CallOptions
    body: dict[str, Any] | None


async def run_batch(
    llm: LLM,
    requests: Sequence[BatchRequest],
    *,
    state: BatchState,
    poll_interval: float = 30.0,
    on_status: Callable[[BatchStatus], None] | None = None,
) -> BatchReport:
    """Answer `requests` through `llm`'s batch API into its cache (see the module's doc).
    `on_status` sees the batch's status at each poll, every `poll_interval` seconds."""
    api = batch_api(llm)
    backend = llm._backend
    assert isinstance(backend, BatchBackend)
    pending: dict[str, _Pending] = {}
    for request in requests:
        messages = check_messages(request.messages)
        options = llm._options(request.temperature, request.max_tokens)
        if request.response_model is None:
            key = llm._key("complete", messages, options)
        else:
            key = llm._structured_key(
                messages, options, request.response_model, request.max_validation_retries
            )
        if key not in pending:
            body = backend.batch_body(messages, options, request.response_model)
            pending[key] = _Pending(request, messages, options, body)
    cached = {key for key in pending if llm._cache_get(key) is not None}
    direct = sum(1 for k, p in pending.items() if p.body is None and k not in cached)
    tally = _Tally()

    saved = state.load()
    if saved is not None:
        if saved.get("model") != llm.model or saved.get("endpoint") != llm._endpoint:
            raise BatchError(
                f"{state.path} follows batch {saved['batch_id']} of {saved.get('model')}, "
                f"not {llm.model}: run with that model to collect it (it is paid for), or "
                "delete the file to start again"
            )
        keys = [str(k) for k in saved.get("keys") or []]
        await _follow(llm, api, saved["batch_id"], keys, pending, tally, poll_interval, on_status)
        state.clear()
    todo = [
        (key, p.body)
        for key, p in pending.items()
        if p.body is not None and key not in cached and key not in tally.seen
    ]
    if todo:
        batch_id = await api.submit(todo)
        keys = [key for key, _ in todo]
        state.save(
            {
                "version": STATE_VERSION,
                "api": api.name,
                "model": llm.model,
                "endpoint": llm._endpoint,
                "batch_id": batch_id,
                "keys": keys,
            }
        )
        await _follow(llm, api, batch_id, keys, pending, tally, poll_interval, on_status)
        state.clear()
    return BatchReport(
        api=api.name,
        batch_ids=tuple(tally.batch_ids),
        requests=len(pending),
        cached=len(cached),
        sent=len(tally.seen),
        answered=tally.answered,
        failed=len(tally.seen) - tally.answered,
        direct=direct,
        usage=Usage(*tally.usage),
        resumed=saved is not None,
        failures=tuple(tally.failures[:5]),
    )


class _Tally:
    """What the batches of one job did so far."""

    def __init__(self) -> None:
        self.batch_ids: list[str] = []
        self.seen: set[str] = set()
        self.answered = 0
        self.usage = [0, 0]
        self.failures: list[str] = []


async def _follow(
    llm: LLM,
    api: BatchAPI,
    batch_id: str,
    keys: list[str],
    pending: dict[str, _Pending],
    tally: _Tally,
    poll_interval: float,
    on_status: Callable[[BatchStatus], None] | None,
) -> None:
    """Poll batch `batch_id` until it ends, then store the answers to `keys` in the cache
    (committed before the state file may go)."""
    tally.batch_ids.append(batch_id)
    while True:
        status = await api.status(batch_id)
        if on_status is not None:
            on_status(status)
        if status.ended:
            break
        await asyncio.sleep(poll_interval)
    results = await api.results(status)
    for key in keys:
        item = pending.get(key)
        if item is None:
            continue  # not asked for this time (already answered, or another job's)
        tally.seen.add(key)
        failure = _store(llm, key, item, results.get(key), tally)
        if failure is None:
            tally.answered += 1
        else:
            tally.failures.append(failure)
    assert llm._cache is not None
    llm._cache.flush()


def _store(
    llm: LLM, key: str, item: _Pending, result: ItemResult | None, tally: _Tally
) -> str | None:
    """Put one item's answer in the cache as its direct call would; or why not."""
    if result is None:
        return "missing from the batch's results"
    if result.body is None:
        return result.failure or "errored"
    try:
        usage = usage_from_body(result.body) or Usage(0, 0)
    except BadUsage as exc:
        return str(exc)
    llm._meter.add_batch(usage)  # a reply came: it is billed, parsed or not
    tally.usage[0] += usage.input_tokens
    tally.usage[1] += usage.output_tokens
    backend = llm._backend
    assert isinstance(backend, BatchBackend)
    model = item.request.response_model
    try:
        outcome = backend.batch_outcome(result.body, model)
    except LLMCallError as exc:
        return llm._redact(str(exc))
    if isinstance(outcome, str):
        completion = Completion(outcome, usage, 0.0, False, llm.model, 1, batch=True)
        llm._cache_put(key, completion_value(completion))
        llm._batch_keys.add(key)
        return None
    if outcome is None or outcome.value is None or model is None:
        return "the reply did not parse"
    value = model.model_validate(outcome.value.model_dump())
    answer = Structured(value, "ok", outcome.raw, usage, 0.0, False, llm.model, 1, batch=True)
    llm._cache_put(key, structured_value(answer))
    llm._batch_keys.add(key)
    return None
