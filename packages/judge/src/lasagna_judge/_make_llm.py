"""`make_llm`: an `LLM` for `provider/model`, its arguments checked before anything is built.

It picks the backend (OpenAI-compatible, Anthropic or an embedded llama.cpp model), puts the
retrying sender under it (retries, the concurrency bound, the rate limit) and opens the
response cache; vendor SDKs and the HTTP stack are imported only for the provider asked for.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from lasagna_judge._cache import ResponseCache, default_cache_path
from lasagna_judge._errors import JudgeError
from lasagna_judge._llm import LLM
from lasagna_judge._providers import (
    BATCH_PROVIDERS,
    PROVIDERS,
    STRUCTURED_MODES,
    Backend,
    StructuredMode,
)
from lasagna_judge._proxies import Proxies
from lasagna_judge._ratelimit import RateLimiter
from lasagna_judge._retry import RetryPolicy
from lasagna_judge._usage import Meter, Prices

OLLAMA_DEFAULT_BASE_URL = "http://localhost:11434/v1"


def parse_model(model: str) -> tuple[str, str]:
    """Split `provider/name`; a JudgeError says what a model name looks like."""
    provider, sep, name = model.partition("/")
    if not sep or not name or provider not in PROVIDERS:
        raise JudgeError(
            f"expected a model named provider/model with provider one of {', '.join(PROVIDERS)} "
            f"(e.g. openai/gpt-4o-mini, anthropic/claude-3-5-haiku-latest, ollama/llama3.2, "
            f"local/smollm2, fake/scripted), got {model!r}"
        )
    return provider, name


def has_batch_api(model: str) -> bool:
    """Whether `model`'s provider has a batch API (known from its name, before any LLM is
    built, so that a command refuses `--batch` before any work)."""
    return model.partition("/")[0] in BATCH_PROVIDERS


def make_llm(
    model: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    cache: bool | Path | str = True,
    concurrency: int = 8,
    requests_per_minute: float | None = None,
    tokens_per_minute: float | None = None,
    adaptive: bool = True,
    max_retries: int = 5,
    timeout: float = 60.0,
    prices: Prices | None = None,
    mode: StructuredMode | None = None,
    temperature: float | None = 0.0,
    retry_policy: RetryPolicy | None = None,
    seed: int | None = None,
    proxies: Proxies | None = None,
    deadline: float | None = None,
    ca_file: str | Path | None = None,
    wire: str | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> LLM:
    """Build an LLM for `provider/model`.

    - `openai/<model>`: OpenAI, or any OpenAI-compatible server at `base_url` (vLLM,
      llama.cpp server, LM Studio, a FakeLLMServer). Needs `api_key` or `base_url`.
    - `ollama/<model>`: Ollama's OpenAI-compatible endpoint (default
      http://localhost:11434/v1).
    - `anthropic/<model>`: Anthropic (extra `anthropic`); needs `api_key`.
    - `local/smollm2` or `local/<path.gguf>`: an embedded llama.cpp model (extra `local`),
      no server, no key.
    - `fake/<name>` (`fake/scripted`): a scripted model, served in this process by
      lasagna's fake server through the same SDK path (`_fake`): no key, no server, no
      download, output that looks real and means nothing. Takes no `base_url` or `wire`.

    `cache`: True for the default file (`<user cache dir>/lasagna/llm-cache.sqlite`), a
    path for that file, False for none. `concurrency` bounds requests in flight;
    `requests_per_minute` and `tokens_per_minute` space them (a request's tokens estimated
    from its size as it leaves, then its reply's usage); `adaptive` (the default) slows the
    pace after a 429, 503 or 529, holds every call for its Retry-After, and speeds up again
    while calls succeed (False: `concurrency` calls in flight whatever the server says);
    `max_retries` transport retries with backoff.
    `mode` picks how structured output is asked for: "tools" (default for openai and
    anthropic), "json_schema" (response_format json_schema; default for ollama), "json"
    (JSON mode, schema in the prompt) or "md_json". `temperature` is sent when a call
    gives none (not to models that reject it); None sends none. `prices` maps a model
    (`provider/name` or `name`) to USD per 1M (input, output) tokens. `proxies`: the HTTP
    proxies the calls go through (`Proxies.from_environ(env)`, given the process's
    environment, honours HTTP_PROXY, HTTPS_PROXY and NO_PROXY); None, the default, connects
    directly: this function reads no environment variable. `timeout` is the idle one (to
    connect, and between bytes of a reply); `deadline` bounds a whole call, its retries
    included (default: five times `timeout`), so a server that trickles a byte a second
    holds no call past it. `ca_file`: a PEM file of the certificates trusted instead of the
    system's (a company's own CA; SSL_CERT_FILE does the same for every program).
    `wire` picks the HTTP API of openai/ and ollama/ models: "chat" (chat completions, the
    default), "responses" (openai/: OpenAI's Responses API at `base_url`/responses) or
    "ollama-chat" (ollama/: Ollama's native `base_url`/api/chat, default
    http://localhost:11434, where a call's max_tokens is sent as options.num_ctx, the
    context window, as kag does; extra `ollama`). Both speak as kag's clients do; structured
    calls on them ask for JSON in the prompt (mode md_json). Every call goes through the
    provider's official SDK (openai, anthropic, ollama), its own retries off: lasagna's
    policy decides. Every wait is capped; `on_wait` is told, in a line, of any wait over
    10 s before it starts, and why (a command prints it on stderr).
    """
    provider, name = parse_model(model)
    if concurrency < 1:
        raise JudgeError(f"concurrency must be at least 1, got {concurrency}")
    if max_retries < 0:
        raise JudgeError(f"max_retries must be >= 0, got {max_retries}")
    if not timeout > 0:
        raise JudgeError(f"timeout must be > 0 seconds, got {timeout}")
    if deadline is not None and not deadline > 0:
        raise JudgeError(f"deadline must be > 0 seconds, got {deadline}")
    if ca_file is not None and not Path(ca_file).is_file():
        raise JudgeError(f"ca_file: expected a PEM file of certificates, found no file {ca_file}")
    for limit, value in (
        ("requests_per_minute", requests_per_minute),
        ("tokens_per_minute", tokens_per_minute),
    ):
        if value is not None and not value > 0:
            raise JudgeError(f"{limit} must be > 0, got {value}")
    if mode is not None and mode not in STRUCTURED_MODES:
        raise JudgeError(f"mode must be one of {', '.join(STRUCTURED_MODES)}, got {mode!r}")
    if provider == "anthropic" and mode not in (None, "tools", "json"):
        raise JudgeError(f"anthropic models take mode 'tools' or 'json', got {mode!r}")
    if provider == "fake" and base_url is not None:
        raise JudgeError(
            f"{model} is served in this process by lasagna's scripted server; it takes no "
            "base_url (for a server of your own, name the model openai/<name>)"
        )
    if base_url is not None:
        _check_base_url(base_url)
    _check_wire(provider, wire)

    meter = Meter()
    policy = retry_policy or RetryPolicy(max_retries=max_retries)
    if retry_policy is not None and max_retries != retry_policy.max_retries:
        policy = RetryPolicy(
            max_retries=max_retries,
            base_delay=retry_policy.base_delay,
            max_delay=retry_policy.max_delay,
            max_retry_after=retry_policy.max_retry_after,
        )
    backend: Backend
    if provider == "local":
        from lasagna_judge._local import LocalBackend, resolve_local_model

        path = resolve_local_model(name)
        backend = LocalBackend(name, path, meter=meter)
    else:
        if provider == "openai" and not api_key and not base_url:
            raise JudgeError(
                f"{model} needs an API key: pass api_key=..., or base_url=... for an "
                "OpenAI-compatible server; or use local/smollm2 (a real model, in-process) or "
                "fake/scripted (a scripted one, to try things), which need neither"
            )
        if provider == "anthropic":
            from lasagna_judge._anthropic import check_anthropic_installed

            check_anthropic_installed()
            if not api_key:
                raise JudgeError(
                    f"{model} needs an API key: pass api_key=...; or use local/smollm2 (a real "
                    "model, in-process) or fake/scripted (a scripted one), which need none"
                )
        limiter = (
            RateLimiter(requests_per_minute, tokens_per_minute)
            if requests_per_minute or tokens_per_minute
            else None
        )
        sender = _sender(
            concurrency, limiter, adaptive, policy, meter, seed, proxies, ca_file, on_wait
        )
        from lasagna_judge._sdk import Wire

        links = Wire.of(sender, timeout, deadline or 5 * timeout)
        if provider == "fake":
            from lasagna_judge._fake import fake_backend

            backend = fake_backend(name, wire=links, mode=mode)
        else:
            backend = _sdk_backend(
                provider,
                name,
                api_key=api_key,
                base_url=base_url,
                wire=links,
                mode=mode,
                choice=wire,
            )
        if provider == "ollama" and wire != "ollama-chat":
            base_url = base_url or OLLAMA_DEFAULT_BASE_URL

    response_cache: ResponseCache | None
    if cache is False:
        response_cache = None
    elif cache is True:
        response_cache = ResponseCache(default_cache_path())
    else:
        response_cache = ResponseCache(Path(cache))
    return LLM(
        model,
        backend,
        meter=meter,
        cache=response_cache,
        temperature=temperature,
        prices=prices,
        secrets=[api_key] if api_key else [],
        endpoint=base_url if provider not in ("local", "fake") else None,
    )


def _check_wire(provider: str, wire: str | None) -> None:
    allowed = {"openai": ("chat", "responses"), "ollama": ("chat", "ollama-chat")}
    if wire is None or wire in allowed.get(provider, ()):
        return
    choices = ", ".join(allowed.get(provider, ())) or "none (it has one API)"
    raise JudgeError(f"wire {wire!r} does not apply to {provider}/ models; choose {choices}")


def _check_base_url(base_url: str) -> None:
    # A URL without its scheme ("localhost:8000/v1") would otherwise fail on every attempt
    # of every call, after all the retries.
    parts = urlsplit(base_url)
    try:
        _ = parts.port  # raises for a port that is not a number
        port_ok = True
    except ValueError:
        port_ok = False
    if parts.scheme not in ("http", "https") or not parts.hostname or not port_ok:
        shown = "***@" + base_url.rsplit("@", 1)[1] if "@" in base_url else base_url
        raise JudgeError(
            f"base_url: expected an http:// or https:// URL such as http://localhost:8000/v1, "
            f"got {shown!r}"
        )


def _sender(
    concurrency: int,
    limiter: RateLimiter | None,
    adaptive: bool,
    policy: RetryPolicy,
    meter: Meter,
    seed: int | None,
    proxies: Proxies | None = None,
    ca_file: str | Path | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> Any:
    from lasagna_judge._adaptive import AdaptivePace
    from lasagna_judge._transport import RetryingSender
    from lasagna_judge._wire import HttpSender

    return RetryingSender(
        HttpSender(limit=concurrency, proxies=proxies, ca_file=str(ca_file) if ca_file else None),
        policy=policy,
        concurrency=concurrency,
        meter=meter,
        limiter=limiter,
        pace=AdaptivePace() if adaptive else None,
        rng=random.Random(seed) if seed is not None else None,
        on_wait=on_wait,
    )


def _sdk_backend(
    provider: str,
    name: str,
    *,
    api_key: str | None,
    base_url: str | None,
    wire: Any,
    mode: StructuredMode | None,
    choice: str | None,
) -> Backend:
    """The backend of a provider reached through its SDK, on `wire` (`_sdk.Wire`)."""
    keys = {"api_key": api_key, "base_url": base_url, "wire": wire}
    if provider == "anthropic":
        from lasagna_judge._anthropic import AnthropicBackend

        return AnthropicBackend(name, **keys, mode=mode or "tools")
    if choice in ("responses", "ollama-chat"):
        from lasagna_judge._native_apis import OllamaChatBackend, ResponsesBackend

        kind = ResponsesBackend if choice == "responses" else OllamaChatBackend
        return kind(provider, name, **keys)
    from lasagna_judge._openai_compat import OpenAICompatBackend

    if provider == "ollama":
        keys["base_url"] = base_url or OLLAMA_DEFAULT_BASE_URL
    default: StructuredMode = "json_schema" if provider == "ollama" else "tools"
    return OpenAICompatBackend(provider, name, **keys, mode=mode or default)
