"""The providers' official SDK clients, built on lasagna's one HTTP stack: each LLM has one
`httpx2.AsyncClient` whose transport is its `RetryingSender` (`_transport.policy_transport`),
and the openai, anthropic and ollama clients it uses all send through it, their own
retries off (max_retries=0) so that lasagna's one policy decides. The SDKs build the
requests and read the replies, whatever documented field a reply carries; a failure they
raise becomes the call's one-line `LLMCallError` here (`sdk_failure`), with the provider's
own message.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from lasagna_judge._errors import LLMCallError, MissingExtraError
from lasagna_judge._providers import call_failed, error_detail
from lasagna_judge._usage import _current_call

if TYPE_CHECKING:
    import httpx2

    from lasagna_judge._transport import RetryingSender

OPENAI_BASE_URL = "https://api.openai.com/v1"


def user_agent() -> str:
    try:
        return f"lasagna-judge/{version('lasagna-judge')}"
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "lasagna-judge"


@dataclass(frozen=True)
class Wire:
    """What an LLM's (or embedder's) SDK clients send through: its `RetryingSender` as an
    httpx2 transport (`_transport.policy_transport`), and the one httpx2 client on it,
    which reads no environment (proxies are the caller's `Proxies`), follows no redirect
    and adds no auth of its own (a URL's user:password@ is the sender's to turn into one
    Authorization header, only when no key is given). `aclose` closes the connections,
    not the client: a later call (a new event loop) opens new ones."""

    sender: RetryingSender
    transport: httpx2.AsyncBaseTransport
    http: httpx2.AsyncClient
    timeout: float

    @classmethod
    def of(cls, sender: RetryingSender, timeout: float, deadline: float | None) -> Wire:
        # What httpx2 imports on its first request (httpcore2, h11, anyio's asyncio
        # backend), imported here, before the first calls leave together: done
        # then, it held their replies back, and a provider's limit looked lower than it is.
        import anyio._backends._asyncio  # noqa: F401
        import httpcore2  # noqa: F401
        import httpx2

        from lasagna_judge._transport import policy_transport

        transport = policy_transport(sender, deadline)
        http = httpx2.AsyncClient(
            transport=transport,
            timeout=httpx2.Timeout(timeout),
            trust_env=False,
            follow_redirects=False,
            auth=httpx2.Auth(),
        )
        return cls(sender, transport, http, timeout)

    async def aclose(self) -> None:
        await self.sender.aclose()


def split_query(base_url: str) -> tuple[str, dict[str, str]]:
    """A base URL without its query string, and that query (an Azure-style
    `?api-version=2024-06-01`), which the SDK then adds to every request's URL."""
    parts = urlsplit(base_url)
    if not parts.query:
        return base_url, {}
    bare = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
    return bare, dict(parse_qsl(parts.query, keep_blank_values=True))


def openai_client(api_key: str | None, base_url: str | None, wire: Wire) -> Any:
    """An `openai.AsyncOpenAI` on `http`: the key given (no Authorization header without
    one: a vLLM or Ollama server needs none), the base URL given (OpenAI's without one), no
    retries of its own."""
    import openai

    base, query = split_query(base_url or OPENAI_BASE_URL)
    kind = openai.AsyncOpenAI if api_key else _keyless_openai()
    return kind(
        api_key=api_key or "no-key",
        base_url=base,
        default_query=query or None,
        default_headers={"User-Agent": user_agent()},
        max_retries=0,
        timeout=wire.timeout,
        http_client=wire.http,
    )


_keyless: list[Any] = []


def _keyless_openai() -> Any:
    """`AsyncOpenAI` for a server that takes no key: no Authorization header is sent, and
    none is asked for (the SDK refuses a request without one)."""
    if not _keyless:
        import openai

        class KeylessOpenAI(openai.AsyncOpenAI):
            @property
            def auth_headers(self) -> dict[str, str]:
                return {}

            def _auth_headers(self, security: Any) -> dict[str, str]:
                return {}

            def _validate_headers(self, headers: Any, custom_headers: Any) -> None:
                return None

        _keyless.append(KeylessOpenAI)
    return _keyless[0]


def anthropic_client(api_key: str, base_url: str | None, wire: Wire) -> Any:
    """An `anthropic.AsyncAnthropic` on `http` (extra `anthropic`), no retries of its own."""
    try:
        import anthropic
    except ImportError:
        raise MissingExtraError("anthropic/...", "anthropic", "anthropic") from None
    return anthropic.AsyncAnthropic(
        api_key=api_key,
        base_url=base_url,
        default_headers={"User-Agent": user_agent()},
        max_retries=0,
        timeout=wire.timeout,
        http_client=wire.http,
    )


def ollama_client(base_url: str, api_key: str | None, wire: Wire) -> Any:
    """An `ollama.AsyncClient` for Ollama's native API (extra `ollama`) whose httpx2 client
    sends through `transport`: neither OLLAMA_HOST nor OLLAMA_API_KEY is heeded (the host
    and key are the caller's)."""
    try:
        import ollama
    except ImportError:
        raise MissingExtraError("ollama/... (wire ollama-chat)", "ollama", "ollama") from None
    import httpx2
    from ollama._client import BaseClient

    def shared(**options: Any) -> httpx2.AsyncClient:
        headers = {k: v for k, v in options["headers"].items() if k != "authorization"}
        headers["user-agent"] = user_agent()
        if api_key:
            headers["authorization"] = f"Bearer {api_key}"
        return httpx2.AsyncClient(
            base_url=options["base_url"],
            headers=headers,
            transport=wire.transport,
            timeout=httpx2.Timeout(wire.timeout),
            trust_env=False,
            follow_redirects=False,
            auth=httpx2.Auth(),
        )

    class Client(ollama.AsyncClient):
        def __init__(self) -> None:  # the base's own takes no factory for its HTTP client
            BaseClient.__init__(self, shared, base_url)

    return Client()


def _transport_errors() -> tuple[type[BaseException], ...]:
    """The SDKs' and httpx2's errors (anthropic's only once imported: a call of another
    provider never raises them, and importing it takes a second)."""
    import httpx2
    import openai

    anthropic = sys.modules.get("anthropic")
    extra = (anthropic.APIError,) if anthropic is not None else ()
    return (openai.APIError, httpx2.HTTPError, *extra)


def sdk_failure(model: str, exc: BaseException) -> LLMCallError | None:
    """The LLMCallError of a call an SDK raised `exc` for: a reply with an error status
    (with the provider's own message from its body), or a transport failure, or any error
    right after a failed attempt (an SDK choking on a body that is not JSON, say), with the
    last attempt's failure; None for an exception that is not a failed call."""
    response = getattr(exc, "response", None)
    status = getattr(exc, "status_code", None) or getattr(response, "status_code", None)
    if isinstance(status, int) and not 200 <= status < 300:
        body = getattr(response, "content", b"")
        detail = error_detail(body) if isinstance(body, bytes) else ""
        return call_failed(model, status=status, detail=detail or str(exc))
    record = _current_call.get()
    if isinstance(exc, _transport_errors()) or (record is not None and record.last_failure):
        detail = getattr(exc, "message", None) or str(exc) or type(exc).__name__
        return call_failed(model, detail=str(detail))
    return None
