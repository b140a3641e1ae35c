"""The two batch APIs through their official SDKs, on the LLM's own HTTP client (its retries,
limits and metering): OpenAI's Batch API (`files`, `batches`) and Anthropic's Message
Batches (`messages.batches`).

- OpenAI: the requests as a JSONL file (`files.create`, purpose=batch, named by the part's
  nonce), a batch over it (`batches.create`, 24 h window), its status
  (`batches.retrieve`), and once it has ended its output and error files, streamed to disk
  (`files.content`). A batch made already is found by its input file (`batches.list`), the
  file by its name (`files.list`).
- Anthropic: `_batch_anthropic`.

A create is sent once (no retry below it: `_batch` finds out what happened before making
another). Each item is named by its `custom_id` (the cache key of the request, 64 hex: both
APIs take it) and comes back as the reply body a direct call would get, or as a failure in a
line. A status whose fields are not what the API documents is a `BatchError` in a line.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from lasagna_judge._errors import JudgeError
from lasagna_judge._providers import _short
from lasagna_judge._sdk import sdk_failure
from lasagna_judge._transport import CALL_HEADER
from lasagna_metrics import parse_json

_OPENAI_ENDED = frozenset({"completed", "failed", "expired", "cancelled"})
_RAW = {CALL_HEADER: "raw"}
_ONCE = {CALL_HEADER: "raw,once"}
_LONG = {CALL_HEADER: "raw,long"}
_STREAM = {CALL_HEADER: "raw,stream"}
LISTED = 1000
"""Batches (or files) read at most when looking for one made already, newest first."""


class BatchError(JudgeError):
    """A batch could not be submitted, followed or read (a server without a batch API, a
    batch id it does not know, a status that is not what the API documents); the message
    says what to do. `status`: the HTTP status of the reply that failed it, if any."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class BatchStatus:
    """A batch's status as its provider reported it at one poll."""

    id: str
    ended: bool
    state: str  # the provider's own word: in_progress, completed, expired, ended...
    done: int  # items finished so far (answered or failed), when the provider says
    data: dict[str, Any]


@dataclass(frozen=True)
class ItemResult:
    body: dict[str, Any] | None  # the reply, as a direct call would have it
    failure: str | None  # why there is none: "errored (HTTP 500: ...)", "expired", ...


def checked_status(
    data: dict[str, Any], texts: tuple[str, ...], counts: tuple[str, ...], where: str
) -> int:
    """The sum of a status's `counts` (request_counts), its `texts` fields checked: a field
    that is not what the API documents is a BatchError in a line (`where`: model, batch)."""
    fields: list[tuple[str, Any, type]] = [(n, data.get(n), str) for n in texts]
    raw = data.get("request_counts") or {}
    if isinstance(raw, dict):
        fields += [(f"request_counts.{n}", raw.get(n) or 0, int) for n in counts]
    else:
        fields.append(("request_counts", raw, dict))
    for name, value, kind in fields:
        bad = isinstance(value, bool) or (value is not None and not isinstance(value, kind))
        if bad or (isinstance(value, int) and value < 0):
            expected = {str: "text", int: "a whole number", dict: "an object"}[kind]
            raise BatchError(
                f"{where} is malformed ({name} is {_short(repr(value), 60)}, expected "
                f"{expected}); the poll failed: run the command again later to follow the "
                "same batch"
            )
    return sum(raw[n] or 0 for n in counts) if isinstance(raw, dict) else 0


class BatchAPI:
    """What `_batch` asks of a provider's batch API; `name` says which, `max_requests` and
    `max_bytes` are its limits for one batch."""

    name = ""
    max_requests = 0
    max_bytes = 0

    def __init__(self, client: Any, model: str) -> None:
        self._client = client
        self._model = model

    async def _call(self, what: str, call: Any) -> Any:
        """Await an SDK call; its failure as a BatchError naming `what`."""
        try:
            return await call
        except Exception as exc:
            failed = sdk_failure(self._model, exc)
            if failed is None:
                raise
            message = str(failed).removeprefix(f"{self._model}: ")
            if failed.status in (404, 405, 501):
                raise BatchError(
                    f"{self._model}: {what}: {message}; this server may have no batch API: "
                    "run without --batch",
                    failed.status,
                ) from None
            raise BatchError(f"{self._model}: {what}: {message}", failed.status) from None

    async def _raw(self, what: str, call: Any) -> dict[str, Any]:
        """The JSON object an SDK call's raw reply holds, as the provider sent it (a status
        is checked field by field here: the SDK's types take any value unvalidated)."""
        response = await self._call(what, call)
        try:
            data = parse_json(response.http_response.content)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise BatchError(
                f"{self._model}: {what} answered a body that is not a JSON object; the poll "
                "failed: run the command again later to follow the same batch"
            )
        return data

    def item_size(self, key: str, body: dict[str, Any]) -> int:
        """The bytes one item takes in the batch's request."""
        return len(json.dumps(self._item(key, body), ensure_ascii=False).encode()) + 1

    def _item(self, key: str, body: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    async def upload(self, part: dict[str, Any], items: list[tuple[str, dict[str, Any]]]) -> None:
        """Send what must precede the create (OpenAI: the file), noted in `part`."""
        raise NotImplementedError

    async def create(self, part: dict[str, Any], items: list[tuple[str, dict[str, Any]]]) -> str:
        """The new batch's id, asked once."""
        raise NotImplementedError

    async def find(self, part: dict[str, Any], taken: set[str]) -> str | None:
        """The id of the part's batch made already (not one of `taken`), or None."""
        raise NotImplementedError

    async def status(self, batch_id: str) -> BatchStatus:
        raise NotImplementedError

    async def results(self, status: BatchStatus) -> dict[str, ItemResult]:
        raise NotImplementedError

    async def cancel(self, batch_id: str) -> BatchStatus:
        raise NotImplementedError

    async def _download(self, what: str, url: str) -> IO[bytes]:
        """The body of GET `url` (on the client's own origin), streamed to a temporary
        file on disk, whatever its size; the file is read from its start."""
        import httpx2

        spool = tempfile.TemporaryFile()  # noqa: SIM115 - handed to the caller, who closes it
        try:
            response = await self._call(
                what,
                self._client.get(
                    url, cast_to=httpx2.Response, stream=True, options={"headers": _STREAM}
                ),
            )
            try:
                async for chunk in response.aiter_bytes():
                    spool.write(chunk)
            except httpx2.HTTPError as exc:
                raise BatchError(
                    f"{self._model}: {what}: the download stopped ({exc}); run the command "
                    "again to fetch it again (the batch is paid for once)"
                ) from None
            finally:
                await response.aclose()
        except BaseException:
            spool.close()
            raise
        spool.seek(0)
        return spool


def _lines(spool: IO[bytes]) -> Iterator[dict[str, Any]]:
    """The JSON objects with a custom_id of a JSONL file, read a line at a time."""
    with spool:
        for line in spool:
            try:
                item = parse_json(line) if line.strip() else None
            except ValueError:
                item = None
            if isinstance(item, dict) and isinstance(item.get("custom_id"), str):
                yield item


class OpenAIBatchAPI(BatchAPI):
    """OpenAI's Batch API, for chat completions, through `openai.AsyncOpenAI`."""

    name = "OpenAI's Batch API"
    max_requests = 50_000
    max_bytes = 200 * 1024 * 1024

    def _item(self, key: str, body: dict[str, Any]) -> dict[str, Any]:
        return {"custom_id": key, "method": "POST", "url": "/v1/chat/completions", "body": body}

    def _file_name(self, part: dict[str, Any]) -> str:
        return f"lasagna-batch-{part['nonce']}.jsonl"

    async def upload(self, part: dict[str, Any], items: list[tuple[str, dict[str, Any]]]) -> None:
        """The part's requests as a file, its id kept in `part` (`file_id`)."""
        lines = "".join(
            json.dumps(self._item(key, body), ensure_ascii=False) + "\n" for key, body in items
        ).encode("utf-8")
        uploaded = await self._call(
            "uploading the batch's requests (files.create)",
            self._client.files.create(
                file=(self._file_name(part), lines, "application/jsonl"),
                purpose="batch",
                extra_headers=_LONG,
            ),
        )
        if not isinstance(getattr(uploaded, "id", None), str):
            raise BatchError(f"{self._model}: files.create answered no file id")
        part["file_id"] = uploaded.id

    async def create(self, part: dict[str, Any], items: list[tuple[str, dict[str, Any]]]) -> str:
        """The batch over the part's file, asked once (no retry: see `_batch`)."""
        batch = await self._call(
            "creating the batch (batches.create)",
            self._client.batches.create(
                input_file_id=part["file_id"],
                endpoint="/v1/chat/completions",
                completion_window="24h",
                metadata={"lasagna": str(part["nonce"])},
                extra_headers=_ONCE,
            ),
        )
        if not isinstance(getattr(batch, "id", None), str):
            raise BatchError(f"{self._model}: batches.create answered no batch id")
        return str(batch.id)

    async def find(self, part: dict[str, Any], taken: set[str]) -> str | None:
        """The batch made already over the part's file (its file found by name when the
        upload's answer was lost); None when there is none."""
        if not part.get("file_id"):
            name = self._file_name(part)
            pages = self._client.files.list(purpose="batch", extra_headers=_RAW)
            async for listed in _listing(self, "files.list", pages):
                if getattr(listed, "filename", None) == name:
                    part["file_id"] = listed.id
                    break
            else:
                return None
        pages = self._client.batches.list(limit=100, extra_headers=_RAW)
        async for batch in _listing(self, "batches.list", pages):
            if getattr(batch, "input_file_id", None) == part["file_id"] and batch.id not in taken:
                return str(batch.id)
        return None

    async def status(self, batch_id: str) -> BatchStatus:
        data = await self._raw(
            f"polling batch {batch_id} (batches.retrieve)",
            self._client.batches.with_raw_response.retrieve(batch_id, extra_headers=_RAW),
        )
        texts = ("status", "output_file_id", "error_file_id")
        where = f"{self._model}: the status of batch {batch_id}"
        done = checked_status(data, texts, ("completed", "failed"), where)
        state = str(data.get("status") or "unknown")
        return BatchStatus(batch_id, state in _OPENAI_ENDED, state, done, data)

    async def results(self, status: BatchStatus) -> dict[str, ItemResult]:
        found: dict[str, ItemResult] = {}
        for name in ("output_file_id", "error_file_id"):
            file_id = status.data.get(name)
            if not isinstance(file_id, str) or not file_id:
                continue
            url = f"files/{file_id}/content"
            spool = await self._download(f"reading the batch's results (file {file_id})", url)
            for line in _lines(spool):
                found[line["custom_id"]] = _openai_item(line)
        return found

    async def cancel(self, batch_id: str) -> BatchStatus:
        await self._call(
            f"cancelling batch {batch_id} (batches.cancel)",
            self._client.batches.cancel(batch_id, extra_headers=_RAW),
        )
        return await self.status(batch_id)


async def _listing(api: BatchAPI, what: str, pages: Any) -> Any:
    """The items of an SDK list (newest first), at most LISTED, failures as BatchError."""
    seen = 0
    try:
        async for item in pages:
            yield item
            seen += 1
            if seen >= LISTED:
                return
    except Exception as exc:
        failed = sdk_failure(api._model, exc)
        if failed is None:
            raise
        raise BatchError(
            f"{api._model}: {what}: {str(failed).removeprefix(api._model + ': ')}"
        ) from None


def _openai_item(line: dict[str, Any]) -> ItemResult:
    response = line.get("response")
    error = line.get("error")
    if isinstance(response, dict) and response.get("status_code") == 200:
        body = response.get("body")
        if isinstance(body, dict):
            return ItemResult(body, None)
    if isinstance(error, dict):
        return ItemResult(None, _short(str(error.get("code") or error.get("message")), 200))
    status = response.get("status_code") if isinstance(response, dict) else None
    return ItemResult(None, f"errored (HTTP {status})")
