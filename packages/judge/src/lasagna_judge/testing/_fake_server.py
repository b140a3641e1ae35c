"""A fake OpenAI-compatible server (chat completions, and Anthropic's Messages API) on 127.0.0.1,
which also speaks OpenAI's Responses API and Ollama's native chat (`_native_routes`), and
both batch APIs (`_batch_routes`).

Real HTTP/1.1 with keep-alive, served by asyncio in a background thread, so the code under
test goes through its real SDK, retries, timeouts and cache. Parsing is kept to the minimum
(one `json.loads` per request) so that a benchmark can push hundreds of requests a second
through it on a small machine.

    with FakeLLMServer(reply='{"score": 4}', latency=0.05) as server:
        llm = make_llm("openai/fake", base_url=server.base_url, api_key="test", cache=False)

`reply` is a str (every call gets it), a list (served in order), or a function of the
request's JSON body; each reply is a str (the assistant's content), a `Reply` (content with
options) or a `Fault` (a 429, a 500, a delay, a body that is not JSON). When the request
offers tools (instructor's TOOLS modes), the content comes back as the arguments of a call
to the requested tool; with `response_format` it comes back as plain content.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
import threading
import time
from collections.abc import Callable
from typing import Any

from lasagna_judge.testing._batch_routes import BatchRoutes
from lasagna_judge.testing._native_routes import native_reply, native_route
from lasagna_judge.testing._provider import RateLimits
from lasagna_judge.testing._responses import (
    _anthropic_message,
    _embedding_list,
    _error_body,
    _http,
    _http_raw,
    _openai_completion,
    _usage,
)
from lasagna_judge.testing._schema_dummy import _schema_dummy
from lasagna_judge.testing._script import Fault, Reply, ReplySpec, ReplyValue, _ReplyError

__all__ = ["FakeLLMServer", "Fault", "Reply"]
Headers = dict[str, str]


class FakeLLMServer:
    """An OpenAI-compatible chat server on 127.0.0.1 for tests and benchmarks. Use as a
    context manager (or `start()` / `stop()`). Inspect what it received with
    `requests` (the JSON bodies, in arrival order), `headers`, `times` (monotonic arrival
    times), `calls`, and `max_in_flight` (the most requests it was serving at once).
    Problems of the script itself (a reply list ran out, the reply function raised) are
    answered with HTTP 500 and recorded in `errors`. With `tls` (a server-side SSLContext)
    it speaks HTTPS, and its URLs start with https://. With `keep_requests=False` it keeps
    none of them (only `calls` counts): a benchmark's long-lived server stays as fast at
    its millionth request as at its first. `latency` is seconds, or a function drawing them
    for each reply (`lognormal_latency`); `limits` (`RateLimits`) answers 429 with
    Retry-After past a requests- or tokens-per-minute limit, as a provider does.
    """

    def __init__(
        self,
        reply: ReplySpec | None = None,
        *,
        latency: float | Callable[[], float] = 0.0,
        limits: RateLimits | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        embedding_dimension: int = 32,
        tls: ssl.SSLContext | None = None,
        keep_requests: bool = True,
    ) -> None:
        self.latency = latency
        self.limits = limits
        self.embedding_dimension = embedding_dimension
        # Served, in order, to /embeddings requests before they get vectors.
        self.embedding_faults: list[Fault] = []
        self.host = host
        self.tls = tls
        self.keep_requests = keep_requests
        self._calls = 0
        self._port = port
        self._reply: ReplySpec | None = reply
        self._served = 0
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        self.times: list[float] = []
        self.errors: list[str] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self._ids = 0
        self.batches = BatchRoutes(self)
        """OpenAI's Batch API and Anthropic's Message Batches (`_batch_routes`)."""

    # -- lifecycle -------------------------------------------------------------------------

    def __enter__(self) -> FakeLLMServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def start(self) -> None:
        """Start serving in a background thread; returns once the port is bound."""
        if self._thread is not None:
            raise RuntimeError("FakeLLMServer is already running")
        self._ready.clear()
        self._thread = threading.Thread(target=self._run, name="FakeLLMServer", daemon=True)
        self._thread.start()
        self._ready.wait(timeout=10)
        if self._startup_error is not None:
            self._thread.join()
            self._thread = None
            raise RuntimeError(f"FakeLLMServer could not start: {self._startup_error}")

    def stop(self) -> None:
        """Close every connection and stop the server thread."""
        thread, loop, stopping = self._thread, self._loop, self._stopping
        if thread is None or loop is None or stopping is None:
            return
        with contextlib.suppress(RuntimeError):  # the loop may already be closed
            loop.call_soon_threadsafe(stopping.set)
        thread.join(timeout=10)
        self._thread = None

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        """The server's root, e.g. for the Anthropic SDK (which adds /v1 itself)."""
        scheme = "https" if self.tls is not None else "http"
        return f"{scheme}://{self.host}:{self._port}"

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL, ending in /v1."""
        return f"{self.url}/v1"

    # -- the script ------------------------------------------------------------------------

    @property
    def reply(self) -> ReplySpec | None:
        return self._reply

    @reply.setter
    def reply(self, value: ReplySpec | None) -> None:
        """Replace the script; a list starts again from its first item."""
        self._reply = value
        self._served = 0

    @property
    def calls(self) -> int:
        """Requests received so far (chat and messages calls, faults included)."""
        return self._calls

    def reset(self) -> None:
        """Forget the requests received (the script keeps its position)."""
        self.requests.clear()
        self.headers.clear()
        self.paths.clear()
        self.times.clear()
        self._calls = 0
        self.errors.clear()
        self.max_in_flight = self.in_flight

    def _next_reply(self, request: dict[str, Any]) -> ReplyValue:
        spec = self._reply
        if spec is None:
            return _schema_dummy(request)
        if isinstance(spec, str | Reply | Fault):
            return spec
        if callable(spec):
            try:
                return spec(request)
            except Exception as exc:
                raise _ReplyError(f"the reply function raised {exc!r}") from exc
        index = self._served
        self._served += 1
        if index >= len(spec):
            raise _ReplyError(f"the reply list has {len(spec)} items; request {index + 1} got none")
        return spec[index]

    # -- serving ---------------------------------------------------------------------------

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._main())
        finally:
            loop.close()

    async def _main(self) -> None:
        self._stopping = asyncio.Event()
        try:
            server = await asyncio.start_server(
                self._serve_connection,
                self.host,
                self._port,
                limit=2**24,
                backlog=1024,
                ssl=self.tls,
            )
        except OSError as exc:
            self._startup_error = exc
            self._ready.set()
            return
        self._port = server.sockets[0].getsockname()[1]
        self._ready.set()
        async with server:
            await self._stopping.wait()
            server.close()
            for task in list(self._connections):
                task.cancel()
            await asyncio.gather(*self._connections, return_exceptions=True)

    async def _serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
                    return
                lines = head.split(b"\r\n")
                method, _, rest = lines[0].partition(b" ")
                path = rest.partition(b" ")[0].decode("latin-1")
                headers: dict[str, str] = {}
                for line in lines[1:]:
                    if line:
                        name, _, value = line.partition(b":")
                        headers[name.strip().lower().decode("latin-1")] = value.strip().decode(
                            "latin-1"
                        )
                length = int(headers.get("content-length", "0") or 0)
                body = await reader.readexactly(length) if length else b""
                response = await self._respond(method.decode("latin-1"), path, headers, body)
                if response is None:  # a fault: the connection closed without a reply
                    return
                writer.write(response)
                await writer.drain()
                if headers.get("connection", "").lower() == "close":
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        except asyncio.CancelledError:
            return
        finally:
            self._connections.discard(task)
            writer.close()

    async def _respond(self, method: str, path: str, headers: Headers, body: bytes) -> bytes | None:
        route = path.split("?", 1)[0].rstrip("/")
        if self.batches.handles(route):
            return self.batches.respond(method, route, headers, body)
        if method == "GET" and route.endswith("/models"):
            return _http(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})
        anthropic = route.endswith("/messages")
        if method == "POST" and route.endswith("/embeddings"):
            return await self._embeddings(path, headers, body)
        native = native_route(route) if method == "POST" else None
        if method != "POST" or not (anthropic or native or route.endswith("/chat/completions")):
            return _http(404, _error_body(anthropic, 404, f"no route for {method} {path}"))
        if headers.get("transfer-encoding", "").lower() == "chunked":
            return _http(411, _error_body(anthropic, 411, "send a Content-Length body"))
        try:
            request = json.loads(body)
        except ValueError:
            self.errors.append(f"request body is not JSON: {body[:200]!r}")
            return _http(400, _error_body(anthropic, 400, "the request body is not JSON"))
        if not isinstance(request, dict):
            return _http(400, _error_body(anthropic, 400, "the request body is not an object"))

        self._note(request, headers, route)
        admitted = None
        if self.limits is not None:
            place = self.limits.admit(request, time.monotonic())
            if isinstance(place, float):
                message = "FakeLLMServer: rate limit reached; retry after the time given"
                return _http(
                    429, _error_body(anthropic, 429, message), self.limits.refusal_headers(place)
                )
            admitted = place
        self._ids += 1
        call_id = self._ids
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            try:
                reply = self._next_reply(request)
            except _ReplyError as exc:
                self.errors.append(str(exc))
                return _http(500, _error_body(anthropic, 500, f"FakeLLMServer: {exc}"))
            delay = self._latency() + (reply.delay if isinstance(reply, Fault) else 0.0)
            if delay > 0:
                await asyncio.sleep(delay)
            if isinstance(reply, Fault):
                failed = _failed_reply(reply, anthropic)
                if failed is not None:
                    return failed
                if reply.malformed:
                    return _http_raw(200, b'{"id": "broken", "choices": [{"mess')
                reply = Reply(reply.content)
            if isinstance(reply, str):
                reply = Reply(reply)
            if admitted is not None and self.limits is not None:
                self.limits.settle(admitted, sum(_usage(request, reply)))
            if anthropic:
                return _http(200, _anthropic_message(request, reply, call_id))
            if native:
                return _http(200, native_reply(native, request, reply, call_id))
            return _http(200, _openai_completion(request, reply, call_id))
        finally:
            self.in_flight -= 1

    def _latency(self) -> float:
        return self.latency() if callable(self.latency) else self.latency

    def _note(self, request: dict[str, Any], headers: dict[str, str], route: str) -> None:
        self._calls += 1
        if self.keep_requests:
            self.requests.append(request)
            self.headers.append(headers)
            self.paths.append(route)
            self.times.append(time.monotonic())

    async def _embeddings(self, route: str, headers: dict[str, str], body: bytes) -> bytes:
        """Deterministic vectors (`hashed_embedding`), or the next of `embedding_faults`;
        built with openai's `CreateEmbeddingResponse`."""
        try:
            request = json.loads(body)
            texts = request["input"]
            texts = [texts] if isinstance(texts, str) else list(texts)
        except (ValueError, KeyError, TypeError):
            return _http(400, _error_body(False, 400, "expected {'model': ..., 'input': [...]}"))
        self._note(request, headers, route.split("?", 1)[0].rstrip("/"))
        latency = self._latency()
        if latency > 0:
            await asyncio.sleep(latency)
        if self.embedding_faults:
            fault = self.embedding_faults.pop(0)
            if fault.delay > 0:
                await asyncio.sleep(fault.delay)
            failed = _failed_reply(fault, anthropic=False)
            if failed is not None:
                return failed
            if fault.malformed:
                return _http_raw(200, b'{"data": [{"embedd')
        dimension = int(request.get("dimensions") or self.embedding_dimension)
        return _http(200, _embedding_list(str(request.get("model")), texts, dimension))


def _failed_reply(fault: Fault, anthropic: bool) -> bytes | None:
    """The error reply of a `status` fault (with its Retry-After), or None for another."""
    if fault.status is None or fault.status == 200:
        return None
    extra = {"Retry-After": str(fault.retry_after)} if fault.retry_after is not None else {}
    message = fault.message or f"injected fault {fault.status}"
    return _http(fault.status, _error_body(anthropic, fault.status, message), extra)
