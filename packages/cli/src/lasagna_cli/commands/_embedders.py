"""The embedder of a dense or hybrid retriever, from its name and the environment (the one
place commands read embedding keys and servers).

`openai/...` reads OPENAI_API_KEY and its server from LASAGNA_EMBEDDER_BASE_URL, else
OPENAI_BASE_URL (a generator and an embedder often live on different servers);
`ollama/...` reads OLLAMA_BASE_URL / OLLAMA_HOST; `local/...` runs in-process.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from lasagna_cli.commands._errors import USAGE_ERROR, CliError
from lasagna_cli.commands._llm import (
    EMBEDDER_BASE_URL,
    _get,
    _say,
    cache_folder,
    cache_setting,
    embedder_base_url,
    proxies_of,
)

if TYPE_CHECKING:
    from lasagna_cli.engine.config import RetrieverSpec
    from lasagna_judge import Embedder


def build_embedder(
    spec: RetrieverSpec,
    env: Mapping[str, str] | None = None,
    *,
    cache: bool = True,
    concurrency: int = 4,
) -> Embedder:
    """The Embedder a retriever names; a missing key or server is one usage line."""
    from lasagna_judge import DEFAULT_EMBEDDER, JudgeError, make_embedder

    env = os.environ if env is None else env
    model = spec.embedder or DEFAULT_EMBEDDER
    base_url = embedder_base_url(model, env)
    api_key = _get(env, "OPENAI_API_KEY") if model.startswith("openai/") else None
    if model.startswith("openai/") and not api_key and not base_url:
        raise CliError(
            f"the embedder {model} needs OPENAI_API_KEY, or a server: {EMBEDDER_BASE_URL} "
            "or OPENAI_BASE_URL for any OpenAI-compatible /embeddings; or use "
            "--embedder local/wordllama, which needs neither",
            USAGE_ERROR,
        )
    setting = cache_setting(cache, env)
    try:
        return make_embedder(
            model,
            base_url=base_url,
            api_key=api_key,
            cache=setting,
            concurrency=concurrency,
            dimensions=spec.dimensions,
            proxies=proxies_of(env),
            on_cut=_say,
        )
    except JudgeError as exc:
        said = str(exc)  # most of the judge's messages name the embedder first already
        named = said if said.startswith(model) else f"{model}: {said}"
        raise CliError(f"the embedder {named}", USAGE_ERROR) from None


def vector_folder(env: Mapping[str, str] | None = None) -> Path:
    """Where corpus vectors are kept between runs: beside the LLM cache."""
    return cache_folder("vectors", env)
