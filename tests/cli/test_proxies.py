"""HTTP_PROXY, HTTPS_PROXY and NO_PROXY: model calls and HTTP systems go through the proxy the
environment names, tested with a real forwarding proxy on 127.0.0.1. The libraries read no
environment variable: the commands pass `Proxies.from_environ(os.environ)`."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_judge import JudgeError, LLMCallError, Proxies, make_llm
from lasagna_judge._proxies import bypassed
from lasagna_judge.testing import FakeLLMServer

ROOT = Path(__file__).resolve().parents[2]
ANSWERS = ROOT / "examples" / "judge" / "answers.jsonl"
PASTA = ROOT / "examples" / "data" / "pasta.jsonl"


class LoopbackProxy:
    """A forwarding proxy: absolute-form requests (http://) are sent on, one per connection;
    CONNECT (https://) opens a tunnel. Records what each request asked for."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        try:
            method, target, _version = head.split(b"\r\n", 1)[0].decode().split(" ", 2)
        except ValueError:
            return
        self.seen.append(f"{method} {target}")
        if method == "CONNECT":
            host, _, port = target.rpartition(":")
            up_reader, up_writer = await asyncio.open_connection(host, int(port))
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            await writer.drain()
            await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))
            return
        await self._forward(head, target, reader, writer)

    async def _forward(
        self,
        head: bytes,
        target: str,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        from urllib.parse import urlsplit

        parts = urlsplit(target)
        lines = head.decode("latin-1").split("\r\n")[1:]
        headers = [h for h in lines if h and not h.lower().startswith(("connection:", "proxy-"))]
        length = next(
            (int(h.split(":", 1)[1]) for h in headers if h.lower().startswith("content-length:")),
            0,
        )
        body = await reader.readexactly(length) if length else b""
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        request = "\r\n".join(
            [f"{head.split(b' ', 1)[0].decode()} {path or '/'} HTTP/1.1", *headers]
        )
        up_reader, up_writer = await asyncio.open_connection(parts.hostname, parts.port or 80)
        up_writer.write(request.encode("latin-1") + b"\r\nConnection: close\r\n\r\n" + body)
        await up_writer.drain()
        writer.write(await up_reader.read())  # the whole reply: the server closes after it
        await writer.drain()
        up_writer.close()

    @staticmethod
    async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        try:
            while chunk := await source.read(65536):
                sink.write(chunk)
                await sink.drain()
        except OSError:
            pass
        finally:
            sink.close()


@pytest.fixture
def proxy(loop_server: Callable[..., Any]) -> LoopbackProxy:
    running = LoopbackProxy()
    running.port = loop_server(running.handle).port
    return running


def grade_reply(request: dict[str, Any]) -> str:
    return json.dumps({"reasoning": "fine", "score": 4})


def judge_grade(server: FakeLLMServer, tmp_path: Path) -> Any:
    args = ["judge", "grade", str(ANSWERS), "--model", "openai/judge"]
    args += ["--base-url", server.base_url, "--no-cache"]
    return CliRunner().invoke(app, args)


@pytest.mark.parametrize(
    ("variable", "scheme"),
    [("HTTP_PROXY", "http://"), ("http_proxy", "http://"), ("HTTP_PROXY", "")],  # host:port
)
def test_model_calls_go_through_the_proxy_the_environment_names(
    variable: str,
    scheme: str,
    proxy: LoopbackProxy,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(variable, f"{scheme}127.0.0.1:{proxy.port}")  # curl reads both
    monkeypatch.setenv("NO_PROXY", "")  # 127.0.0.1 is reached through the proxy too
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.setenv("LASAGNA_CACHE_DIR", str(tmp_path / "cache"))
    with FakeLLMServer(reply=grade_reply) as server:
        result = judge_grade(server, tmp_path)
        assert result.exit_code == 0, result.output
        calls = server.calls
    assert calls >= 1
    assert len(proxy.seen) == calls
    assert all(s == f"POST {server.base_url}/chat/completions" for s in proxy.seen), proxy.seen


@pytest.mark.parametrize("no_proxy", ["127.0.0.1", "localhost,127.0.0.1", "*"])
def test_no_proxy_sends_the_calls_directly(
    no_proxy: str, proxy: LoopbackProxy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    monkeypatch.setenv("NO_PROXY", no_proxy)
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with FakeLLMServer(reply=grade_reply) as server:
        result = judge_grade(server, tmp_path)
        assert result.exit_code == 0, result.output
        assert server.calls >= 1
    assert proxy.seen == []


def test_without_a_proxy_variable_nothing_goes_through_one(
    proxy: LoopbackProxy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with FakeLLMServer(reply=grade_reply) as server:
        assert judge_grade(server, tmp_path).exit_code == 0
    assert proxy.seen == []


class EchoSystem:
    """An HTTP system on 127.0.0.1 that answers every question with its gold passages."""

    def __init__(self) -> None:
        from lasagna_synth import load_data

        rows = {r.id: r for r in load_data(PASTA).rows()}

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                row = rows[body["id"]]
                reply = json.dumps({"retrieved": list(row.contexts)}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/ask"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> EchoSystem:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_an_http_system_is_reached_through_the_proxy(
    proxy: LoopbackProxy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    monkeypatch.setenv("NO_PROXY", "")
    monkeypatch.delenv("no_proxy", raising=False)
    with EchoSystem() as system:
        args = ["benchmark", "run", str(PASTA), "--system", system.url, "-o", str(tmp_path / "r")]
        result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert len(proxy.seen) == 14 and set(proxy.seen) == {f"POST {system.url}"}
    recorded = (tmp_path / "r" / "results.json").read_text(encoding="utf-8")
    assert proxy.url not in recorded and str(proxy.port) not in recorded.split('"system"')[-1][:200]

    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    proxy.seen.clear()
    with EchoSystem() as system:
        args = ["benchmark", "run", str(PASTA), "--system", system.url, "-o", str(tmp_path / "d")]
        assert CliRunner().invoke(app, args).exit_code == 0
    assert proxy.seen == []


def test_https_goes_through_a_connect_tunnel(proxy: LoopbackProxy) -> None:
    """An https:// base URL is reached with CONNECT through HTTPS_PROXY (here the server
    speaks plain HTTP, so the TLS handshake fails after the tunnel is open)."""

    async def call() -> None:
        with FakeLLMServer(reply="hi") as server:
            https_url = f"https://127.0.0.1:{server.port}/v1"
            llm = make_llm(
                "openai/m",
                base_url=https_url,
                api_key="k",
                cache=False,
                max_retries=0,
                timeout=1.0,  # the plain server never answers the TLS hello
                proxies=Proxies(https=proxy.url),
            )
            async with llm:
                with pytest.raises((LLMCallError, JudgeError)):
                    await llm.complete([{"role": "user", "content": "hello"}])
            assert proxy.seen == [f"CONNECT 127.0.0.1:{server.port}"]

    asyncio.run(call())


@pytest.mark.parametrize(
    ("env", "url", "expected"),
    [
        ({}, "http://example.com/v1", None),
        ({"HTTP_PROXY": "http://p:1"}, "http://example.com/v1", "http://p:1"),
        ({"HTTP_PROXY": "http://p:1"}, "https://example.com/v1", None),
        ({"HTTPS_PROXY": "http://p:2"}, "https://example.com/v1", "http://p:2"),
        (
            {"http_proxy": "http://lower:1", "HTTP_PROXY": "http://upper:1"},
            "http://a/",
            "http://lower:1",
        ),
        ({"HTTP_PROXY": "http://p:1", "NO_PROXY": "example.com"}, "http://example.com/", None),
        ({"HTTP_PROXY": "http://p:1", "NO_PROXY": ".example.com"}, "http://api.example.com/", None),
        (
            {"HTTP_PROXY": "http://p:1", "no_proxy": "other.org"},
            "http://example.com/",
            "http://p:1",
        ),
        ({"HTTP_PROXY": "http://p:1", "NO_PROXY": "*"}, "http://example.com/", None),
        ({"HTTP_PROXY": "http://p:1", "NO_PROXY": ""}, "http://127.0.0.1:8000/", "http://p:1"),
        ({"HTTP_PROXY": "http://p:1"}, "http://user:pw@127.0.0.1:8000/", "http://p:1"),
    ],
)
def test_which_proxy_a_url_takes(env: dict[str, str], url: str, expected: str | None) -> None:
    proxies = Proxies.from_environ(env)
    assert (proxies.for_url(url) if proxies is not None else None) == expected


def test_a_proxy_url_is_never_shown() -> None:
    proxies = Proxies(http="http://user:secret@proxy:3128")
    assert "secret" not in repr(proxies) and "secret" not in str(proxies)


@pytest.mark.parametrize(
    ("host", "port", "no_proxy", "expected"),
    [
        ("example.com", None, "example.com", True),
        ("api.example.com", None, "example.com", True),
        ("api.example.com", None, ".example.com", True),
        ("badexample.com", None, "example.com", False),
        ("EXAMPLE.com", None, "example.COM", True),
        ("127.0.0.1", 8000, "localhost, 127.0.0.1", True),
        ("127.0.0.1", 8000, "127.0.0.1:8000", True),
        ("127.0.0.1", 8001, "127.0.0.1:8000", False),
        ("::1", 8000, "::1", True),
        ("::1", 8000, "[::1]:8000", True),
        ("::1", 8001, "[::1]:8000", False),
        ("anything", None, "*", True),
        ("example.com", None, "", False),
        ("example.com", None, " , ", False),
    ],
)
def test_no_proxy_entries(host: str, port: int | None, no_proxy: str, expected: bool) -> None:
    assert bypassed(host, port, no_proxy) is expected


def test_a_socks_proxy_is_refused_in_one_line(tmp_path: Path) -> None:
    with FakeLLMServer(reply=grade_reply) as server:
        env = {"http_proxy": None, "HTTP_PROXY": "socks5://127.0.0.1:1080", "OPENAI_API_KEY": "t"}
        args = ["judge", "grade", str(ANSWERS), "--model", "openai/judge"]
        args += ["--base-url", server.base_url, "--no-cache"]
        result = CliRunner().invoke(app, args, env=env)
        assert server.calls == 0
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "HTTP_PROXY: expected an http:// or https:// proxy" in lines[0]
