"""Anthropic's Message Batches through `anthropic.AsyncAnthropic` (see `_batch_apis`): the
requests in one `messages.batches.create`, its status (`messages.batches.retrieve`), its
`results_url` streamed to disk once it has ended, fetched only from the configured origin
and scheme (the key goes with it). A batch made already is found by listing
(`messages.batches.list`): made since the intent was recorded, with as many requests."""

from __future__ import annotations

from typing import Any

from lasagna_judge._batch_apis import (
    _ONCE,
    _RAW,
    BatchAPI,
    BatchError,
    BatchStatus,
    ItemResult,
    _lines,
    _listing,
    checked_status,
)
from lasagna_judge._wire_errors import url_origin


class AnthropicBatchAPI(BatchAPI):
    """Anthropic's Message Batches, through `anthropic.AsyncAnthropic`."""

    name = "Anthropic's Message Batches"
    max_requests = 100_000
    max_bytes = 256 * 1024 * 1024

    def _item(self, key: str, body: dict[str, Any]) -> dict[str, Any]:
        return {"custom_id": key, "params": body}

    async def upload(self, part: dict[str, Any], items: list[tuple[str, dict[str, Any]]]) -> None:
        return None  # sent with the create: Message Batches take no file

    async def create(self, part: dict[str, Any], items: list[tuple[str, dict[str, Any]]]) -> str:
        """The batch of `items`, asked once (no retry: see `_batch`)."""
        batch = await self._call(
            "creating the batch (messages.batches.create)",
            self._client.messages.batches.create(
                requests=[self._item(key, body) for key, body in items], extra_headers=_ONCE
            ),
        )
        if not isinstance(getattr(batch, "id", None), str):
            raise BatchError(f"{self._model}: messages.batches.create answered no batch id")
        return str(batch.id)

    async def find(self, part: dict[str, Any], taken: set[str]) -> str | None:
        """A batch made since the part's intent was recorded (a minute's clock skew
        allowed) with as many requests, and not another part's; None when there is none."""
        since = float(part.get("since") or 0) - 60.0
        pages = self._client.messages.batches.list(limit=100, extra_headers=_RAW)
        async for batch in _listing(self, "messages.batches.list", pages):
            created = getattr(batch, "created_at", None)
            if (
                created is not None
                and hasattr(created, "timestamp")
                and created.timestamp() < since
            ):
                break  # newest first: the rest are older
            counts = getattr(batch, "request_counts", None)
            total = sum(
                n
                for k in ("processing", "succeeded", "errored", "canceled", "expired")
                if isinstance(n := getattr(counts, k, 0), int)
            )
            if total == part.get("count") and batch.id not in taken:
                return str(batch.id)
        return None

    async def status(self, batch_id: str) -> BatchStatus:
        data = await self._raw(
            f"polling batch {batch_id} (messages.batches.retrieve)",
            self._client.messages.batches.with_raw_response.retrieve(batch_id, extra_headers=_RAW),
        )
        counts = ("succeeded", "errored", "canceled", "expired")
        where = f"{self._model}: the status of batch {batch_id}"
        done = checked_status(data, ("processing_status", "results_url"), counts, where)
        state = str(data.get("processing_status") or "unknown")
        return BatchStatus(batch_id, state == "ended", state, done, data)

    async def results(self, status: BatchStatus) -> dict[str, ItemResult]:
        url = status.data.get("results_url")
        if not isinstance(url, str) or not url:
            return {}
        configured = url_origin(str(self._client.base_url))
        if url_origin(url) != configured:
            raise BatchError(
                f"{self._model}: batch {status.id}'s results_url is on {url_origin(url)}, not "
                f"on {configured}, the API's own origin: not fetched (the key would go with "
                "it); check the base URL, or the server before it"
            )
        found: dict[str, ItemResult] = {}
        spool = await self._download(f"reading batch {status.id}'s results", url)
        for line in _lines(spool):
            result = line.get("result") or {}
            kind = result.get("type") if isinstance(result, dict) else None
            message = result.get("message") if isinstance(result, dict) else None
            if kind == "succeeded" and isinstance(message, dict):
                found[line["custom_id"]] = ItemResult(message, None)
            else:
                found[line["custom_id"]] = ItemResult(None, str(kind or "errored"))
        return found

    async def cancel(self, batch_id: str) -> BatchStatus:
        await self._call(
            f"cancelling batch {batch_id} (messages.batches.cancel)",
            self._client.messages.batches.cancel(batch_id, extra_headers=_RAW),
        )
        return await self.status(batch_id)
