"""A FakeLLMServer's batch APIs: OpenAI's Batch API (`POST /v1/files` with purpose=batch,
`POST /v1/batches`, `GET /v1/batches/{id}`, `GET /v1/files/{id}/content`) and Anthropic's
Message Batches (`POST /v1/messages/batches`, `GET /v1/messages/batches/{id}`, its
`results_url`). Each item is answered by the server's own script, as a direct call would be.

    server.batches.delay = 0.5                        # seconds before a batch ends
    server.batches.fail = lambda body: "errored"      # per item: None (answered), "errored",
                                                      # "expired" or "canceled"
    server.batches.create_fault = ("500", 1)          # the next create: made, then answered
                                                      # 500 ("cut": the connection closed)
    server.batches.on_request = hook                  # hook(method, route) before each reply
    server.batches.status_patch = {...}               # fields put in every status reply
    server.batches.results_origin = "http://x:1"      # Anthropic's results_url elsewhere

Both APIs also list (`GET .../batches`, `GET /v1/files`) and cancel (`POST .../cancel`), as
the providers do; the statuses are built with the SDKs' types (`openai.types.Batch`,
`anthropic.types.messages.MessageBatch`), every documented field in them. OpenAI's limit is
kept: a file of more than 50,000 requests is refused. `batches.created` counts the batches
submitted, `batches.requests` holds every item's body and `batches.polls` the status
requests: a test can tell a resumed job from a second one. Batch items are not direct
calls: `server.calls` and `server.requests` leave them out.
"""

from __future__ import annotations

import importlib
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from lasagna_judge.testing._responses import (
    _anthropic_message,
    _error_body,
    _http,
    _openai_completion,
)
from lasagna_judge.testing._script import Fault, Reply, ReplyValue, _ReplyError


class _Server(Protocol):
    """What the routes use of their FakeLLMServer: its script, ids, errors and URL."""

    _ids: int
    errors: list[str]

    @property
    def url(self) -> str: ...

    def _next_reply(self, request: dict[str, Any]) -> ReplyValue: ...


ItemFailure = Literal["errored", "expired", "canceled"]
_ROUTE = re.compile(
    r".*?/(?:(?P<anthropic>messages/batches)(?:/(?P<abatch>[\w-]+)"
    r"(?:(?P<results>/results)|(?P<acancel>/cancel))?)?"
    r"|(?P<batches>batches)(?:/(?P<obatch>[\w-]+)(?P<ocancel>/cancel)?)?"
    r"|(?P<files>files)(?:/(?P<file>[\w-]+)/content)?)$"
)
OPENAI_MAX_REQUESTS = 50_000


@dataclass
class _Batch:
    kind: Literal["openai", "anthropic"]
    id: str
    created: float
    items: list[tuple[str, dict[str, Any]]]
    input_file_id: str = ""
    at: int = 0  # when it was made (Unix seconds)
    cancelled: bool = False
    results: list[tuple[str, dict[str, Any] | None, str | None]] | None = None
    """(custom_id, reply body, failure) for each item, once the batch has ended."""
    files: dict[str, str] = field(default_factory=dict)  # "output"/"error" -> file id


class BatchRoutes:
    """The batch endpoints of one FakeLLMServer (its `batches`)."""

    def __init__(self, server: _Server) -> None:
        self._server = server
        self.delay = 0.0
        self.fail: Callable[[dict[str, Any]], ItemFailure | None] | None = None
        self.created = 0
        self.polls = 0
        self.requests: list[dict[str, Any]] = []
        self.create_fault: tuple[Literal["500", "cut"], int] | None = None
        self.on_request: Callable[[str, str], None] | None = None
        self.status_patch: dict[str, Any] | None = None
        self.results_origin: str | None = None
        self._files: dict[str, bytes] = {}
        self._names: dict[str, str] = {}  # file id -> its name
        self._batches: dict[str, _Batch] = {}
        self._ids = 0

    def handles(self, route: str) -> bool:
        return _ROUTE.match(route) is not None

    def respond(
        self, method: str, route: str, headers: dict[str, str], body: bytes
    ) -> bytes | None:
        """The reply to a request whose route `handles` took; None: close the connection
        without one."""
        if self.on_request is not None:
            self.on_request(method, route)
        match = _ROUTE.match(route)
        assert match is not None
        parts = match.groupdict()
        anthropic = bool(parts["anthropic"])
        batch_id = parts["abatch"] or parts["obatch"]
        if parts["files"]:
            if parts["file"] is None and method == "POST":
                return self._upload(headers, body)
            if parts["file"] is None and method == "GET":
                return _http(200, _listed(self._file_list()))
            if parts["file"] is not None and method == "GET":
                content = self._files.get(parts["file"])
                if content is None:
                    return _http(404, _error_body(False, 404, "no such file"))
                return _jsonl(content)
        elif batch_id is None and method == "GET":
            kind = "anthropic" if anthropic else "openai"
            listed = [b for b in reversed(self._batches.values()) if b.kind == kind]
            return _http(200, _listed([self._status_body(b) for b in listed]))
        elif batch_id is None and method == "POST":
            made = self._create_anthropic(body) if anthropic else self._create_openai(body)
            return self._faulted(made, anthropic)
        elif method in ("GET", "POST"):
            batch = self._batches.get(batch_id)
            if batch is None:
                return _http(404, _error_body(anthropic, 404, "no such batch"))
            if parts["acancel"] or parts["ocancel"]:
                batch.cancelled = True
                return self._status(batch)
            return self._results(batch) if parts["results"] else self._status(batch)
        return _http(404, _error_body(False, 404, f"no route for {method} {route}"))

    def _faulted(self, made: bytes, anthropic: bool) -> bytes | None:
        """A create's reply, or the fault set for it: the batch is made either way."""
        if self.create_fault is None or not made.startswith(b"HTTP/1.1 200"):
            return made
        kind, left = self.create_fault
        self.create_fault = (kind, left - 1) if left > 1 else None
        if kind == "cut":
            return None
        return _http(500, _error_body(anthropic, 500, "the server failed after creating it"))

    def _file_list(self) -> list[dict[str, Any]]:
        return [
            {"id": i, "object": "file", "purpose": "batch", "filename": self._names.get(i, ""),
             "bytes": len(c), "created_at": 0, "status": "processed"}
            for i, c in reversed(self._files.items()) if i in self._names
        ]  # fmt: skip

    # -- submitting ------------------------------------------------------------------------

    def _next_id(self, prefix: str) -> str:
        self._ids += 1
        return f"{prefix}_fake_{self._ids}"

    def _upload(self, headers: dict[str, str], body: bytes) -> bytes:
        fields = _multipart(headers.get("content-type", ""), body)
        if fields.get("purpose") != b"batch" or "file" not in fields:
            return _http(400, _error_body(False, 400, "expected purpose=batch and a file"))
        file_id = self._next_id("file")
        self._files[file_id] = fields["file"]
        self._names[file_id] = fields.get("filename", b"").decode("utf-8", "replace")
        return _http(200, {"id": file_id, "object": "file", "purpose": "batch"})

    def _create_openai(self, body: bytes) -> bytes:
        request = json.loads(body)
        content = self._files.get(str(request.get("input_file_id")))
        if content is None or request.get("endpoint") != "/v1/chat/completions":
            return _http(400, _error_body(False, 400, "expected an input_file_id and endpoint"))
        items = []
        for line in content.decode("utf-8").splitlines():
            if line.strip():
                item = json.loads(line)
                items.append((str(item["custom_id"]), item["body"]))
        if len(items) > OPENAI_MAX_REQUESTS:
            message = f"a batch takes {OPENAI_MAX_REQUESTS:,} requests at most, got {len(items):,}"
            return _http(400, _error_body(False, 400, message))
        batch = self._add("openai", "batch", items)
        batch.input_file_id = str(request["input_file_id"])
        return self._status(batch)

    def _create_anthropic(self, body: bytes) -> bytes:
        request = json.loads(body)
        items = [(str(r["custom_id"]), r["params"]) for r in request.get("requests") or []]
        if not items:
            return _http(400, _error_body(True, 400, "expected requests"))
        return self._status(self._add("anthropic", "msgbatch", items))

    def _add(self, kind: Literal["openai", "anthropic"], prefix: str, items: list[Any]) -> _Batch:
        self.created += 1
        self.requests.extend(body for _, body in items)
        batch = _Batch(kind, self._next_id(prefix), time.monotonic(), items, at=int(time.time()))
        self._batches[batch.id] = batch
        return batch

    # -- ending ----------------------------------------------------------------------------

    def _ended(self, batch: _Batch) -> bool:
        late = time.monotonic() - batch.created >= self.delay
        if batch.results is None and (late or batch.cancelled):
            batch.results = [self._answer(batch, cid, body) for cid, body in batch.items]
            if batch.kind == "openai":
                self._write_openai_files(batch)
        return batch.results is not None

    def _answer(
        self, batch: _Batch, custom_id: str, body: dict[str, Any]
    ) -> tuple[str, dict[str, Any] | None, str | None]:
        failure = self.fail(body) if self.fail is not None else None
        if batch.cancelled and time.monotonic() - batch.created < self.delay:
            failure = "canceled"  # not reached before the cancel
        if failure is not None:
            return custom_id, None, failure
        server = self._server
        try:
            reply = server._next_reply(body)
        except _ReplyError as exc:
            server.errors.append(str(exc))
            return custom_id, None, "errored"
        if isinstance(reply, Fault):
            if reply.status not in (None, 200) or reply.malformed:
                return custom_id, None, "errored"
            reply = Reply(reply.content)
        if isinstance(reply, str):
            reply = Reply(reply)
        server._ids += 1
        if batch.kind == "anthropic":
            return custom_id, _anthropic_message(body, reply, server._ids), None
        return custom_id, _openai_completion(body, reply, server._ids), None

    def _write_openai_files(self, batch: _Batch) -> None:
        assert batch.results is not None
        out: list[dict[str, Any]] = []
        errors: list[dict[str, Any]] = []
        for custom_id, reply, failure in batch.results:
            line: dict[str, Any] = {"id": self._next_id("batch_req"), "custom_id": custom_id}
            if reply is not None:
                out.append({**line, "response": _ok(reply), "error": None})
            elif failure == "errored":
                fault = {"status_code": 500, "body": _error_body(False, 500, "injected")}
                errors.append({**line, "response": fault, "error": None})
            else:
                code = "batch_expired" if failure == "expired" else "batch_cancelled"
                errors.append({**line, "response": None, "error": {"code": code, "message": code}})
        for name, lines in (("output", out), ("error", errors)):
            if lines:
                file_id = self._next_id("file")
                self._files[file_id] = "".join(json.dumps(x) + "\n" for x in lines).encode()
                batch.files[name] = file_id

    def _status(self, batch: _Batch) -> bytes:
        self.polls += 1
        return _http(200, {**self._status_body(batch), **(self.status_patch or {})})

    def _status_body(self, batch: _Batch) -> dict[str, Any]:
        """The batch as its API documents it, built with the SDK's own type."""
        ended = self._ended(batch)
        results = batch.results or []
        failures = [f for _, _, f in results]
        when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(batch.at))
        body: dict[str, Any]
        if batch.kind == "anthropic":
            origin = self.results_origin or self._server.url
            body = {
                "id": batch.id,
                "type": "message_batch",
                "processing_status": "ended" if ended else "in_progress",
                "request_counts": {
                    "processing": 0 if ended else len(batch.items),
                    "succeeded": failures.count(None),
                    "errored": failures.count("errored"),
                    "canceled": failures.count("canceled"),
                    "expired": failures.count("expired"),
                },
                "results_url": f"{origin}/v1/messages/batches/{batch.id}/results"
                if ended
                else None,
                "created_at": when,
                "expires_at": when,
                "ended_at": when if ended else None,
                "archived_at": None,
                "cancel_initiated_at": when if batch.cancelled else None,
            }
            return _checked("anthropic.types.messages", "MessageBatch", body)
        status = "in_progress"
        if ended:
            status = "completed"
            if "canceled" in failures or batch.cancelled:
                status = "cancelled"
            if "expired" in failures:
                status = "expired"
        body = {
            "id": batch.id,
            "object": "batch",
            "endpoint": "/v1/chat/completions",
            "input_file_id": batch.input_file_id,
            "completion_window": "24h",
            "status": status,
            "output_file_id": batch.files.get("output"),
            "error_file_id": batch.files.get("error"),
            "created_at": batch.at,
            "in_progress_at": batch.at,
            "expires_at": batch.at + 86_400,
            "completed_at": batch.at if ended else None,
            "cancelled_at": batch.at if batch.cancelled and ended else None,
            "errors": None,
            "metadata": None,
            "request_counts": {
                "total": len(batch.items),
                "completed": failures.count(None),
                "failed": len(failures) - failures.count(None),
            },
        }
        return _checked("openai.types", "Batch", body)

    def _results(self, batch: _Batch) -> bytes:
        if not self._ended(batch):
            return _http(400, _error_body(True, 400, "the batch is still in progress"))
        lines = []
        for custom_id, reply, failure in batch.results or []:
            result: dict[str, Any]
            if reply is not None:
                result = {"type": "succeeded", "message": reply}
            elif failure == "errored":
                result = {"type": "errored", "error": _error_body(True, 500, "injected")}
            else:
                result = {"type": failure}
            lines.append(json.dumps({"custom_id": custom_id, "result": result}) + "\n")
        return _jsonl("".join(lines).encode())


def _checked(module: str, name: str, body: dict[str, Any]) -> dict[str, Any]:
    """`body` read by the SDK's own type and written back (as is without the SDK)."""
    try:
        kind = getattr(importlib.import_module(module), name)
    except ImportError:
        return body
    checked: dict[str, Any] = kind.model_validate(body).model_dump(mode="json")
    return checked


def _listed(items: list[dict[str, Any]]) -> dict[str, Any]:
    """A page of a list, as both APIs give it (one page holds them all)."""
    first = items[0]["id"] if items else None
    last = items[-1]["id"] if items else None
    return {"object": "list", "data": items, "has_more": False, "first_id": first,
            "last_id": last}  # fmt: skip


def _ok(reply: dict[str, Any]) -> dict[str, Any]:
    return {"status_code": 200, "request_id": "req_fake", "body": reply}


def _jsonl(content: bytes) -> bytes:
    """A file's bytes as OpenAI and Anthropic serve them: not application/json."""
    head = (
        "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
        f"Content-Length: {len(content)}\r\nConnection: keep-alive\r\n\r\n"
    )
    return head.encode("latin-1") + content


def _multipart(content_type: str, body: bytes) -> dict[str, bytes]:
    """The fields of a multipart/form-data body, by name (enough for one file and a field)."""
    match = re.search(r'boundary="?([^";]+)"?', content_type)
    if match is None:
        return {}
    fields: dict[str, bytes] = {}
    for part in body.split(b"--" + match.group(1).encode("latin-1")):
        head, sep, value = part.partition(b"\r\n\r\n")
        name = re.search(rb'; name="([^"]+)"', head)
        if sep and name is not None:
            fields[name.group(1).decode("latin-1")] = value.removesuffix(b"\r\n")
        filename = re.search(rb'filename="([^"]+)"', head)
        if sep and filename is not None:
            fields["filename"] = filename.group(1)
    return fields
