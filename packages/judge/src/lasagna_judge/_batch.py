"""Requests that can wait, at the batch price: `run_batch` sends an LLM's requests through
its provider's batch API and stores each answer in the LLM's cache, under the key a direct
call would use. The callers then make their calls as usual: the batch's answers are cache
hits, and what the batch could not answer (an item errored, expired or canceled, a reply
that does not parse) is called directly, with the usual retries and re-asks.

    requests = [BatchRequest(prompt.as_list(), GradeModel) for prompt in prompts]
    report = await run_batch(llm, requests, state=BatchState(path, write_bytes_atomic))
    grades = await grade_batch(llm, rubric, items)        # cache hits, and the rest

A job never pays twice and never loses a paid result, through errors and kill -9 alike.
The requests are split at the provider's limits (requests and bytes a batch) into parts,
and each part's intent (its keys, a nonce, the time) is written to the state file (by the
atomic writer given) before any call; then its file id (OpenAI) and its batch id as they
come. A create is sent once: when its answer is lost (an error, a cut connection, a kill),
the batch made already is looked for (OpenAI: by its input file; Anthropic: by listing)
before another is made. A rerun with the same model follows the saved batches instead of
paying again; the file goes once their answers are in the cache, and a later rerun finds
them there and sends nothing. Results files are streamed to disk and read a line at a
time, whatever their size.

A batch item's cache entry says so (`"batch": true`): a hit on it is a `Completion` or
`Structured` with `batch=True`, whose tokens cost `BATCH_PRICE` of the price; in the
process whose batch answered it, the hit is not `cached` (that run paid for it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from lasagna_judge._batch_apis import BatchAPI, BatchError, BatchStatus, ItemResult
from lasagna_judge._batch_state import STATE_VERSION, BatchState, split_parts
from lasagna_judge._cache_values import completion_value, structured_value
from lasagna_judge._errors import LLMCallError
from lasagna_judge._providers import CallOptions, Message, StructuredOutcome, check_messages
from lasagna_judge._types import Completion, Structured, Usage
from lasagna_judge._usage import BadUsage, usage_from_body

if TYPE_CHECKING:
    from pydantic import BaseModel

    from lasagna_judge._llm import LLM

CREATE_TRIES = 3
"""Creates asked for one part at most, each after looking for the batch the last one may
have made."""
CREATE_WAITS = (1.0, 4.0)
"""Seconds before the second and third create."""


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

    saved = state.load()
    parts: list[dict[str, Any]] = []
    if saved is not None:
        if saved.get("model") != llm.model or saved.get("endpoint") != llm._endpoint:
            ids = ", ".join(str(p.get("batch_id") or "not yet made") for p in saved["parts"])
            raise BatchError(
                f"{state.path} follows batch {ids} of {saved.get('model')}, not {llm.model}: "
                "run with that model to collect it (it is paid for), or delete the file to "
                "start again"
            )
        parts = [p for p in saved["parts"] if not p.get("done")]
        for part in parts:
            part["resumed"] = True
    known = {str(k) for p in parts for k in p.get("keys") or []}
    todo = [
        (key, p.body)
        for key, p in pending.items()
        if p.body is not None and key not in cached and key not in known
    ]
    parts.extend(split_parts(api, todo))
    job = _Job(llm, api, state, pending, parts, poll_interval, on_status)
    if parts:
        job.save()  # every part's intent, before any call
    for part in parts:
        if not part.get("batch_id"):
            part["batch_id"] = await job.made(part)
            job.save()
    for part in parts:
        await job.follow(part)
        part["done"] = True
        job.save()
    state.clear()
    tally = job.tally
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


async def cancel_batch(llm: LLM, state: BatchState) -> list[BatchStatus]:
    """Cancel the batches a job's state file follows (its model's `llm`): the status of each
    after the cancel. The file stays: the same job run again collects what they answered
    (paid for) and calls the rest directly."""
    saved = state.load()
    if saved is None:
        raise BatchError(f"{state.path}: no such state file; no batch job to cancel there")
    if saved.get("model") != llm.model:
        raise BatchError(
            f"{state.path} follows batches of {saved.get('model')}, not {llm.model}: cancel "
            "them with that model"
        )
    api = batch_api(llm)
    parts = [p for p in saved["parts"] if not p.get("done")]
    taken = {str(p["batch_id"]) for p in parts if p.get("batch_id")}
    for part in parts:  # a create whose answer was lost may have made one: found first
        if not part.get("batch_id") and (found := await api.find(part, taken)) is not None:
            taken.add(found)
    return [await api.cancel(batch_id) for batch_id in sorted(taken)]


class _Tally:
    """What the batches of one job did so far."""

    def __init__(self) -> None:
        self.batch_ids: list[str] = []
        self.seen: set[str] = set()
        self.answered = 0
        self.usage = [0, 0]
        self.failures: list[str] = []


class _Job:
    """One run_batch's parts, their state file and what they did."""

    def __init__(
        self,
        llm: LLM,
        api: BatchAPI,
        state: BatchState,
        pending: dict[str, _Pending],
        parts: list[dict[str, Any]],
        poll_interval: float,
        on_status: Callable[[BatchStatus], None] | None,
    ) -> None:
        self.llm, self.api, self.state, self.pending = llm, api, state, pending
        self.parts = parts
        self.poll_interval = poll_interval
        self.on_status = on_status
        self.tally = _Tally()

    def save(self) -> None:
        self.state.save(
            {
                "version": STATE_VERSION,
                "api": self.api.name,
                "model": self.llm.model,
                "endpoint": self.llm._endpoint,
                "parts": [{k: v for k, v in p.items() if k != "resumed"} for p in self.parts],
            }
        )

    async def made(self, part: dict[str, Any]) -> str:
        """The part's batch: the one made already (a resumed part, or a create whose answer
        was lost), else a new one; a create is asked at most CREATE_TRIES times."""
        taken = {str(p["batch_id"]) for p in self.parts if p.get("batch_id")}
        if part.get("resumed") or part.get("asked"):
            found = await self.api.find(part, taken)
            if found is not None:
                return found
        items = [
            (key, body)
            for key in part["keys"]
            if (item := self.pending.get(key)) is not None and (body := item.body) is not None
        ]
        if not part.get("file_id"):
            await self.api.upload(part, items)
            self.save()
        error: BatchError | None = None
        for attempt in range(CREATE_TRIES):
            if attempt:
                await asyncio.sleep(CREATE_WAITS[min(attempt - 1, len(CREATE_WAITS) - 1)])
            part["asked"] = True
            self.save()  # a create may reach the server: a rerun looks before it asks
            try:
                return await self.api.create(part, items)
            except BatchError as exc:
                if (
                    exc.status is not None
                    and 400 <= exc.status < 500
                    and exc.status
                    not in (
                        408,
                        409,
                        429,
                    )
                ):
                    raise  # the same request would be refused again
                error = exc
            found = await self.api.find(part, taken)
            if found is not None:
                return found
        assert error is not None
        raise error

    async def follow(self, part: dict[str, Any]) -> None:
        """Poll the part's batch until it ends, then store the answers to its keys in the
        cache (committed before the state file may go)."""
        llm, api, tally = self.llm, self.api, self.tally
        batch_id = str(part["batch_id"])
        tally.batch_ids.append(batch_id)
        while True:
            status = await api.status(batch_id)
            if self.on_status is not None:
                self.on_status(status)
            if status.ended:
                break
            await asyncio.sleep(self.poll_interval)
        results = await api.results(status)
        for key in part.get("keys") or []:
            item = self.pending.get(str(key))
            if item is None:
                continue  # not asked for this time (already answered, or another job's)
            tally.seen.add(str(key))
            failure = _store(llm, str(key), item, results.get(str(key)), tally)
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
