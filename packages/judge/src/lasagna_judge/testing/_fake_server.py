"""A fake OpenAI-compatible server (chat completions, and Anthropic's Messages API) on 127.0.0.1.

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
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

__all__ = ["FakeLLMServer", "Fault", "Reply"]


@dataclass(frozen=True)
class Fault:
    """A reply that goes wrong on purpose.

    - `status`: answer with this HTTP status (429, 500, 503, 400, ...) and an error body.
    - `retry_after`: seconds for a `Retry-After` header (a str is sent as is, e.g. an HTTP date).
    - `delay`: seconds to wait before answering; longer than the client's timeout, it is a
      timeout. After the delay the reply is `status` if given, else `content` with status 200.
    - `malformed`: answer 200 with a body that is not JSON.
    - `message`: the error message in the body of a `status` fault.
    """

    status: int | None = None
    retry_after: float | str | None = None
    delay: float = 0.0
    malformed: bool = False
    content: str = ""
    message: str | None = None


@dataclass(frozen=True)
class Reply:
    """A successful reply with options a plain str does not have.

    - `tool_call`: None follows the request (a tool call when it offers tools); False answers
      in plain text even then (a model that ignores the tools); True forces a tool call.
    - `input_tokens`, `output_tokens`: the usage to report instead of the estimate
      (characters / 4, at least 1).
    """

    content: str
    tool_call: bool | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None


ReplyValue: TypeAlias = str | Reply | Fault
ReplySpec: TypeAlias = ReplyValue | Sequence[ReplyValue] | Callable[[dict[str, Any]], ReplyValue]

_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    408: "Request Timeout",
    409: "Conflict",
    411: "Length Required",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
    529: "Overloaded",
}


class _ReplyError(Exception):
    """The scripted reply could not be produced (list exhausted, reply function raised)."""


class FakeLLMServer:
    """An OpenAI-compatible chat server on 127.0.0.1 for tests and benchmarks.

    Use as a context manager (or `start()` / `stop()`). Inspect what it received with
    `requests` (the JSON bodies, in arrival order), `headers`, `times` (monotonic arrival
    times), `calls`, and `max_in_flight` (the most requests it was serving at once).
    Problems of the script itself (a reply list ran out, the reply function raised) are
    answered with HTTP 500 and recorded in `errors`.
    """

    def __init__(
        self,
        reply: ReplySpec | None = None,
        *,
        latency: float = 0.0,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.latency = latency
        self.host = host
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
        return f"http://{self.host}:{self._port}"

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
        return len(self.requests)

    def reset(self) -> None:
        """Forget the requests received (the script keeps its position)."""
        self.requests.clear()
        self.headers.clear()
        self.paths.clear()
        self.times.clear()
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
                self._serve_connection, self.host, self._port, limit=2**24, backlog=1024
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

    async def _respond(self, method: str, path: str, headers: dict[str, str], body: bytes) -> bytes:
        route = path.split("?", 1)[0].rstrip("/")
        if method == "GET" and route.endswith("/models"):
            return _http(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})
        anthropic = route.endswith("/messages")
        if method != "POST" or not (anthropic or route.endswith("/chat/completions")):
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

        self.requests.append(request)
        self.headers.append(headers)
        self.paths.append(route)
        self.times.append(time.monotonic())
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
            delay = self.latency + (reply.delay if isinstance(reply, Fault) else 0.0)
            if delay > 0:
                await asyncio.sleep(delay)
            if isinstance(reply, Fault):
                if reply.status is not None and reply.status != 200:
                    extra = {}
                    if reply.retry_after is not None:
                        extra["Retry-After"] = str(reply.retry_after)
                    message = reply.message or f"injected fault {reply.status}"
                    return _http(reply.status, _error_body(anthropic, reply.status, message), extra)
                if reply.malformed:
                    return _http_raw(200, b'{"id": "broken", "choices": [{"mess')
                reply = Reply(reply.content)
            if isinstance(reply, str):
                reply = Reply(reply)
            if anthropic:
                return _http(200, _anthropic_message(request, reply, call_id))
            return _http(200, _openai_completion(request, reply, call_id))
        finally:
            self.in_flight -= 1


# -- wire formats -------------------------------------------------------------------------


def _estimate_tokens(text: str) -> int:
    return len(text) // 4 + 1


def _input_tokens(request: dict[str, Any]) -> int:
    parts: list[str] = []
    system = request.get("system")
    if system is not None:
        parts.append(json.dumps(system) if not isinstance(system, str) else system)
    for message in request.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        parts.append(content if isinstance(content, str) else json.dumps(content))
    return _estimate_tokens("".join(parts))


def _usage(request: dict[str, Any], reply: Reply) -> tuple[int, int]:
    """Input and output tokens: the reply's own figures, else estimates from the texts."""
    prompt = reply.input_tokens if reply.input_tokens is not None else _input_tokens(request)
    completion = (
        reply.output_tokens if reply.output_tokens is not None else _estimate_tokens(reply.content)
    )
    return prompt, completion


def _tool_name(request: dict[str, Any]) -> str | None:
    """The tool the request wants called, if it offers any (OpenAI or Anthropic shapes)."""
    tools = request.get("tools")
    if not tools:
        return None
    choice = request.get("tool_choice")
    if isinstance(choice, dict):
        function = choice.get("function")
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            return str(function["name"])
        if isinstance(choice.get("name"), str):
            return str(choice["name"])
    first = tools[0]
    if isinstance(first, dict):
        function = first.get("function")
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            return str(function["name"])
        if isinstance(first.get("name"), str):
            return str(first["name"])
    return "tool"


def _openai_completion(request: dict[str, Any], reply: Reply, call_id: int) -> dict[str, Any]:
    tool = _tool_name(request) if reply.tool_call is not False else None
    if reply.tool_call is True and tool is None:
        tool = "tool"
    message: dict[str, Any]
    if tool is not None:
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_{call_id}",
                    "type": "function",
                    "function": {"name": tool, "arguments": reply.content},
                }
            ],
        }
        finish = "tool_calls"
    else:
        message = {"role": "assistant", "content": reply.content}
        finish = "stop"
    prompt, completion = _usage(request, reply)
    return {
        "id": f"chatcmpl-fake-{call_id}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": str(request.get("model", "fake")),
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


def _anthropic_message(request: dict[str, Any], reply: Reply, call_id: int) -> dict[str, Any]:
    tool = _tool_name(request) if reply.tool_call is not False else None
    block: dict[str, Any] = {"type": "text", "text": reply.content}
    stop_reason = "end_turn"
    if tool is not None:
        try:
            arguments = json.loads(reply.content)
        except ValueError:
            arguments = None
        # Anthropic's tool input is always an object; other content stays text.
        if isinstance(arguments, dict):
            block = {"type": "tool_use", "id": f"toolu_{call_id}", "name": tool, "input": arguments}
            stop_reason = "tool_use"
    prompt, completion = _usage(request, reply)
    return {
        "id": f"msg_fake_{call_id}",
        "type": "message",
        "role": "assistant",
        "model": str(request.get("model", "fake")),
        "content": [block],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": prompt, "output_tokens": completion},
    }


def _error_body(anthropic: bool, status: int, message: str) -> dict[str, Any]:
    kind = {
        400: "invalid_request_error",
        401: "authentication_error",
        404: "not_found_error",
        429: "rate_limit_error",
        529: "overloaded_error",
    }.get(status, "api_error")
    if anthropic:
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "code": status}}


def _http(status: int, payload: dict[str, Any], extra: dict[str, str] | None = None) -> bytes:
    return _http_raw(status, json.dumps(payload, separators=(",", ":")).encode(), extra)


def _http_raw(status: int, body: bytes, extra: dict[str, str] | None = None) -> bytes:
    head = [
        f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}",
        "Content-Type: application/json",
        f"Content-Length: {len(body)}",
        "Connection: keep-alive",
    ]
    for name, value in (extra or {}).items():
        head.append(f"{name}: {value}")
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body


# -- a schema-valid dummy, the default reply -----------------------------------------------


def _requested_schema(request: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON schema the request asks the reply to follow, if any."""
    tools = request.get("tools")
    if tools and isinstance(tools[0], dict):
        name = _tool_name(request)
        for tool in tools:
            function = tool.get("function") if isinstance(tool.get("function"), dict) else tool
            if function.get("name") == name:
                schema = function.get("parameters") or function.get("input_schema")
                return schema if isinstance(schema, dict) else None
    response_format = request.get("response_format")
    if isinstance(response_format, dict):
        schema = response_format.get("schema")
        if schema is None and isinstance(response_format.get("json_schema"), dict):
            schema = response_format["json_schema"].get("schema")
        return schema if isinstance(schema, dict) else None
    return None


def _schema_dummy(request: dict[str, Any]) -> str:
    """Like pydantic-ai's TestModel: the simplest output that satisfies the requested schema."""
    schema = _requested_schema(request)
    if schema is None:
        return "ok"
    return json.dumps(_dummy_value(schema, schema.get("$defs") or schema.get("definitions") or {}))


def _dummy_value(schema: dict[str, Any], defs: dict[str, Any], depth: int = 0) -> Any:
    if depth > 20:
        return None
    if "$ref" in schema:
        target = defs.get(str(schema["$ref"]).rsplit("/", 1)[-1], {})
        return _dummy_value(target, defs, depth + 1)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            return _dummy_value(schema[key][0], defs, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties") or {}
        return {
            name: _dummy_value(sub, defs, depth + 1)
            for name, sub in properties.items()
            if name in (schema.get("required") or properties)
        }
    if kind == "array":
        count = int(schema.get("minItems", 0))
        return [_dummy_value(schema.get("items") or {}, defs, depth + 1) for _ in range(count)]
    if kind == "integer":
        return int(schema.get("minimum", 0))
    if kind == "number":
        return float(schema.get("minimum", 0))
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return "x" * int(schema.get("minLength", 1))
