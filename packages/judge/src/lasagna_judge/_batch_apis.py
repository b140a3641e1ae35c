"""The two batch APIs on the wire, through the LLM's own `RetryingSender` (its retries and
limits): OpenAI's Batch API and Anthropic's Message Batches.

- OpenAI: the requests as a JSONL file (`POST /files`, purpose=batch), a batch over it
  (`POST /batches`, 24 h window), its status (`GET /batches/{id}`), and once it has ended
  its output and error files (`GET /files/{id}/content`).
- Anthropic: the requests in one `POST /v1/messages/batches`, its status
  (`GET /v1/messages/batches/{id}`), and its `results_url` (JSONL) once it has ended.

Each item is named by its `custom_id` (the cache key of the request, 64 hex: both APIs take
it) and comes back as the reply body a direct call would get, or as a failure in a line.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from lasagna_judge._errors import JudgeError
from lasagna_judge._providers import _short
from lasagna_judge._transport import RetryingSender
from lasagna_judge._wire import WireError, WireRequest
from lasagna_metrics import parse_json

_OPENAI_ENDED = frozenset({"completed", "failed", "expired", "cancelled"})


class BatchError(JudgeError):
    """A batch could not be submitted, followed or read (a server without a batch API, a
    batch id it does not know); the message says what to do."""


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


class _Wire:
    def __init__(
        self, sender: RetryingSender, headers: list[tuple[str, str]], timeout: float, model: str
    ) -> None:
        self._sender = sender
        self._headers = headers
        self._timeout = timeout
        self._model = model

    async def _send(
        self, method: str, url: str, body: bytes = b"", content_type: str | None = None
    ) -> bytes:
        headers = self._headers
        if content_type is not None:
            headers = [h for h in headers if h[0].lower() != "content-type"]
            headers.append(("Content-Type", content_type))
        request = WireRequest(method, url, headers, body, self._timeout, 10 * self._timeout)
        try:
            response = await self._sender.send(request, raw=True)
        except WireError as exc:
            raise BatchError(f"{self._model}: {method} {_path(url)} failed: {exc}") from None
        if not 200 <= response.status < 300:
            detail = _short(response.body.decode("utf-8", "replace"), 200)
            what = f"{self._model}: {method} {_path(url)} answered HTTP {response.status}"
            if response.status in (404, 405, 501):
                raise BatchError(
                    f"{what}: this server has no batch API ({detail}); run without --batch"
                )
            raise BatchError(f"{what} ({detail})")
        return response.body

    async def _json(self, method: str, url: str, payload: Any = None) -> dict[str, Any]:
        body = b"" if payload is None else json.dumps(payload, ensure_ascii=False).encode()
        text = await self._send(method, url, body)
        try:
            data = parse_json(text)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise BatchError(
                f"{self._model}: {method} {_path(url)} answered a body that is not a JSON "
                f"object ({_short(text.decode('utf-8', 'replace'), 120)})"
            )
        return data


def _path(url: str) -> str:
    return "/" + url.split("://", 1)[-1].partition("/")[2]


def _lines(content: bytes) -> list[dict[str, Any]]:
    found = []
    for line in content.decode("utf-8", "replace").splitlines():
        try:
            item = parse_json(line) if line.strip() else None
        except ValueError:
            item = None
        if isinstance(item, dict) and isinstance(item.get("custom_id"), str):
            found.append(item)
    return found


class OpenAIBatchAPI(_Wire):
    """OpenAI's Batch API at `base_url` (.../v1), for chat completions."""

    name = "OpenAI's Batch API"

    def __init__(
        self,
        sender: RetryingSender,
        base_url: str,
        headers: list[tuple[str, str]],
        timeout: float,
        model: str,
    ) -> None:
        super().__init__(sender, headers, timeout, model)
        self._base = base_url.rstrip("/")

    async def submit(self, items: list[tuple[str, dict[str, Any]]]) -> str:
        lines = "".join(
            json.dumps(
                {"custom_id": key, "method": "POST", "url": "/v1/chat/completions", "body": body},
                ensure_ascii=False,
            )
            + "\n"
            for key, body in items
        )
        boundary = f"lasagna-{os.urandom(8).hex()}"
        form = (
            (
                f'--{boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n'
                f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
                'filename="lasagna-batch.jsonl"\r\nContent-Type: application/jsonl\r\n\r\n'
            ).encode()
            + lines.encode("utf-8")
            + f"\r\n--{boundary}--\r\n".encode()
        )
        uploaded = parse_json(
            await self._send(
                "POST", f"{self._base}/files", form, f"multipart/form-data; boundary={boundary}"
            )
        )
        file_id = uploaded.get("id") if isinstance(uploaded, dict) else None
        if not isinstance(file_id, str):
            raise BatchError(f"{self._model}: POST /files answered no file id")
        batch = await self._json(
            "POST",
            f"{self._base}/batches",
            {
                "input_file_id": file_id,
                "endpoint": "/v1/chat/completions",
                "completion_window": "24h",
            },
        )
        if not isinstance(batch.get("id"), str):
            raise BatchError(f"{self._model}: POST /batches answered no batch id")
        return str(batch["id"])

    async def status(self, batch_id: str) -> BatchStatus:
        data = await self._json("GET", f"{self._base}/batches/{batch_id}")
        state = str(data.get("status"))
        counts = data.get("request_counts") or {}
        done = int(counts.get("completed") or 0) + int(counts.get("failed") or 0)
        return BatchStatus(batch_id, state in _OPENAI_ENDED, state, done, data)

    async def results(self, status: BatchStatus) -> dict[str, ItemResult]:
        found: dict[str, ItemResult] = {}
        for name in ("output_file_id", "error_file_id"):
            file_id = status.data.get(name)
            if not isinstance(file_id, str) or not file_id:
                continue
            content = await self._send("GET", f"{self._base}/files/{file_id}/content")
            for line in _lines(content):
                found[line["custom_id"]] = _openai_item(line)
        return found


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


class AnthropicBatchAPI(_Wire):
    """Anthropic's Message Batches at `root` (https://api.anthropic.com, no /v1)."""

    name = "Anthropic's Message Batches"

    def __init__(
        self, sender: RetryingSender, root: str, api_key: str, timeout: float, model: str
    ) -> None:
        headers = [
            ("Content-Type", "application/json"),
            ("x-api-key", api_key),
            ("anthropic-version", "2023-06-01"),
        ]
        super().__init__(sender, headers, timeout, model)
        self._url = root.rstrip("/") + "/v1/messages/batches"

    async def submit(self, items: list[tuple[str, dict[str, Any]]]) -> str:
        requests = [{"custom_id": key, "params": body} for key, body in items]
        batch = await self._json("POST", self._url, {"requests": requests})
        if not isinstance(batch.get("id"), str):
            raise BatchError(f"{self._model}: POST /v1/messages/batches answered no batch id")
        return str(batch["id"])

    async def status(self, batch_id: str) -> BatchStatus:
        data = await self._json("GET", f"{self._url}/{batch_id}")
        state = str(data.get("processing_status"))
        counts = data.get("request_counts") or {}
        done = sum(int(counts.get(k) or 0) for k in ("succeeded", "errored", "canceled", "expired"))
        return BatchStatus(batch_id, state == "ended", state, done, data)

    async def results(self, status: BatchStatus) -> dict[str, ItemResult]:
        url = status.data.get("results_url")
        if not isinstance(url, str) or not url:
            return {}
        found: dict[str, ItemResult] = {}
        for line in _lines(await self._send("GET", url)):
            result = line.get("result") or {}
            kind = result.get("type") if isinstance(result, dict) else None
            message = result.get("message") if isinstance(result, dict) else None
            if kind == "succeeded" and isinstance(message, dict):
                found[line["custom_id"]] = ItemResult(message, None)
            else:
                found[line["custom_id"]] = ItemResult(None, str(kind or "errored"))
        return found


BatchAPI = OpenAIBatchAPI | AnthropicBatchAPI
