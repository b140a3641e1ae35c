"""`make_embedder`: an `Embedder` for `provider/name`, its arguments checked first.

- `local/wordllama` (the default): WordLlama in-process, 256 dimensions, no key, no server,
  no download.
- `local/<folder>`: a sentence-transformers model saved in that folder (its package is the
  user's to install).
- `openai/<model>`: OpenAI, or any OpenAI-compatible `/embeddings` server at `base_url`
  (vLLM, llama.cpp server, text-embeddings-inference, a FakeLLMServer).
- `ollama/<model>`: Ollama's OpenAI-compatible endpoint (default http://localhost:11434/v1).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from lasagna_judge._cache import ResponseCache, default_cache_path
from lasagna_judge._embed import EmbedBackend, Embedder, OverLimit, numpy_module
from lasagna_judge._errors import JudgeError
from lasagna_judge._make_llm import OLLAMA_DEFAULT_BASE_URL, _check_base_url, _sender
from lasagna_judge._proxies import Proxies
from lasagna_judge._retry import RetryPolicy
from lasagna_judge._usage import Meter, Prices

EMBED_PROVIDERS = ("local", "openai", "ollama")
DEFAULT_EMBEDDER = "local/wordllama"
"""The embedder of a dense retriever when none is named: WordLlama, in-process, no key."""


def parse_embedder(model: str) -> tuple[str, str]:
    """Split `provider/name`; a JudgeError says what an embedder name looks like."""
    provider, sep, name = model.partition("/")
    if not sep or not name or provider not in EMBED_PROVIDERS:
        raise JudgeError(
            "expected an embedder named provider/model with provider one of "
            f"{', '.join(EMBED_PROVIDERS)} (e.g. local/wordllama, "
            f"openai/text-embedding-3-small, ollama/nomic-embed-text), got {model!r}"
        )
    return provider, name


def make_embedder(
    model: str = DEFAULT_EMBEDDER,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    cache: bool | Path | str = True,
    concurrency: int = 4,
    batch_size: int | None = None,
    dimensions: int | None = None,
    max_retries: int = 5,
    timeout: float = 60.0,
    prices: Prices | None = None,
    retry_policy: RetryPolicy | None = None,
    proxies: Proxies | None = None,
    deadline: float | None = None,
    ca_file: str | Path | None = None,
    max_input_tokens: int | None = None,
    over_limit: OverLimit = "cut",
    on_cut: Callable[[str], None] | None = None,
) -> Embedder:
    """Build an Embedder. `cache` as for `make_llm` (True: the default file; a path; False);
    `concurrency` bounds requests in flight, `batch_size` texts a request (default 64; 32
    for Ollama); `dimensions` asks a model that can shorten its vectors (OpenAI's v3) for
    that many. `proxies`, `deadline` and `ca_file` as for `make_llm`. An input over the
    model's limit (`max_input_tokens`, default 8,192, OpenAI's) is cut to it before any call
    (`over_limit="cut"`, the count told to `on_cut` in a line) or refused, all of them,
    before any call (`"refuse"`: a JudgeError that counts them)."""
    provider, name = parse_embedder(model)
    numpy_module()  # the vectors are numpy arrays: refuse early without it
    if concurrency < 1:
        raise JudgeError(f"concurrency must be at least 1, got {concurrency}")
    if batch_size is not None and batch_size < 1:
        raise JudgeError(f"batch_size must be at least 1, got {batch_size}")
    if max_input_tokens is not None and max_input_tokens < 1:
        raise JudgeError(f"max_input_tokens must be at least 1, got {max_input_tokens}")
    if over_limit not in ("cut", "refuse"):
        raise JudgeError(f"over_limit must be 'cut' or 'refuse', got {over_limit!r}")
    if dimensions is not None and dimensions < 1:
        raise JudgeError(f"dimensions must be at least 1, got {dimensions}")
    if base_url is not None:
        _check_base_url(base_url)
    if deadline is not None and not deadline > 0:
        raise JudgeError(f"deadline must be > 0 seconds, got {deadline}")
    if ca_file is not None and not Path(ca_file).is_file():
        raise JudgeError(f"ca_file: expected a PEM file of certificates, found no file {ca_file}")
    meter = Meter()
    backend: EmbedBackend
    dimension = None
    if provider == "local":
        from lasagna_judge._embed_backends import (
            WORDLLAMA,
            WORDLLAMA_DIMENSION,
            SentenceTransformerBackend,
            WordLlamaBackend,
        )

        if name == WORDLLAMA:
            wordllama = WordLlamaBackend(meter)
            wordllama.load()
            backend, dimension = wordllama, WORDLLAMA_DIMENSION
        else:
            backend = SentenceTransformerBackend(Path(name).expanduser(), meter)
        if dimensions is not None:
            raise JudgeError(f"{model}: its vectors have a fixed size; drop dimensions=")
        base_url = None
    else:
        from lasagna_judge._embed import MAX_INPUT_TOKENS
        from lasagna_judge._embed_backends import HttpEmbedBackend

        if provider == "openai" and not api_key and not base_url:
            raise JudgeError(
                f"{model} needs an API key: pass api_key=..., or base_url=... for an "
                "OpenAI-compatible server; or use local/wordllama, which needs neither"
            )
        if provider == "ollama":
            base_url = base_url or OLLAMA_DEFAULT_BASE_URL
        from lasagna_judge._sdk import Wire

        policy = retry_policy or RetryPolicy(max_retries=max_retries)
        sender = _sender(concurrency, None, False, policy, meter, None, proxies, ca_file)
        backend = HttpEmbedBackend(
            model,
            name,
            base_url=base_url,
            api_key=api_key,
            wire=Wire.of(sender, timeout, deadline or 5 * timeout),
            batch_size=batch_size or (32 if provider == "ollama" else 64),
            dimensions=dimensions,
            max_input_tokens=max_input_tokens or MAX_INPUT_TOKENS,
        )
    response_cache: ResponseCache | None = None
    if cache is not False and backend.cacheable:
        response_cache = ResponseCache(default_cache_path() if cache is True else Path(cache))
    return Embedder(
        model,
        backend,
        meter=meter,
        cache=response_cache,
        prices=prices,
        dimensions=dimensions,
        endpoint=base_url,
        dimension=dimension,
        over_limit=over_limit,
        on_cut=on_cut,
    )
