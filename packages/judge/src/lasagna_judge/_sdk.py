"""The providers' official SDK clients, built on lasagna's one HTTP stack: each LLM has one
`httpx2.AsyncClient` whose transport is its `RetryingSender` (`_transport.policy_transport`),
and the openai, anthropic and ollama clients it uses all send through it, their own
retries off (max_retries=0) so that lasagna's one policy decides. The SDKs build the
requests and read the replies, whatever documented field a reply carries; a failure they
raise becomes the call's one-line `LLMCallError` here (`sdk_failure`), with the provider's
own message.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from lasagna_judge._errors import LLMCallError, MissingExtraError
from lasagna_judge._providers import _is_transport_failure, call_failed, error_detail

if TYPE_CHECKING:
    import httpx2

OPENAI_BASE_URL = "https://api.openai.com/v1"


def user_agent() -> str:
    try:
        return f"lasagna-judge/{version('lasagna-judge')}"
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "lasagna-judge"


def http_client(transport: httpx2.AsyncBaseTransport, timeout: float) -> httpx2.AsyncClient:
    """The httpx2 client an LLM's SDK clients share: every request through `transport`
    (`_transport.policy_transport`: its retries, limits and metering), none
    reading the environment (proxies are the caller's `Proxies`), no redirect followed, and
    no auth of httpx2's own (a URL's user:password@ is the sender's to turn into one
    Authorization header, only when no key is given)."""
    import httpx2

    return httpx2.AsyncClient(
        transport=transport,
        timeout=httpx2.Timeout(timeout),
        trust_env=False,
        follow_redirects=False,
        auth=httpx2.Auth(),
    )


def split_query(base_url: str) -> tuple[str, dict[str, str]]:
    """A base URL without its query string, and that query (an Azure-style
    `?api-version=2024-06-01`), which the SDK then adds to every request's URL."""
    parts = urlsplit(base_url)
    if not parts.query:
        return base_url, {}
    bare = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
    return bare, dict(parse_qsl(parts.query, keep_blank_values=True))


def openai_client(
    api_key: str | None, base_url: str | None, timeout: float, http: httpx2.AsyncClient
) -> Any:
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
        timeout=timeout,
        http_client=http,
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


def anthropic_client(
    api_key: str, base_url: str | None, timeout: float, http: httpx2.AsyncClient
) -> Any:
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
        timeout=timeout,
        http_client=http,
    )


def ollama_client(
    base_url: str, api_key: str | None, timeout: float, transport: httpx2.AsyncBaseTransport
) -> Any:
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
            transport=transport,
            timeout=httpx2.Timeout(timeout),
            trust_env=False,
            follow_redirects=False,
            auth=httpx2.Auth(),
        )

    class Client(ollama.AsyncClient):
        def __init__(self) -> None:  # the base's own takes no factory for its HTTP client
            BaseClient.__init__(self, shared, base_url)

    return Client()


def sdk_failure(model: str, exc: BaseException) -> LLMCallError | None:
    """The LLMCallError of a call an SDK raised `exc` for: a reply with an error status
    (with the provider's own message from its body), or a transport failure (with the last
    attempt's failure); None for an exception that is not a failed call."""
    response = getattr(exc, "response", None)
    status = getattr(exc, "status_code", None) or getattr(response, "status_code", None)
    if isinstance(status, int) and not 200 <= status < 300:
        body = getattr(response, "content", b"") if response is not None else b""
        detail = error_detail(body) if isinstance(body, bytes) else ""
        said = detail or getattr(exc, "message", None) or getattr(exc, "error", None) or ""
        return call_failed(model, status=status, detail=str(said))
    if _is_transport_failure(exc):
        from lasagna_judge._providers import sdk_call_failed

        return sdk_call_failed(model, exc)
    return None
