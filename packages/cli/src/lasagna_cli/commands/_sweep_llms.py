"""The models of `lasagna benchmark sweep`'s setups: one LLM per (provider, model), with
its provider's key, server and rate limits."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lasagna_cli.commands._errors import USAGE_ERROR, CliError

if TYPE_CHECKING:
    from lasagna_cli.engine.config import ProviderSpec, Setup
    from lasagna_judge import LLM


def provider_api_key(provider: ProviderSpec, setup: str) -> str | None:
    """The key of a config.toml provider: its own `key` (kag's), else the value of the
    variable it names (CLI layer only)."""
    from lasagna_cli.commands._llm import key_from_variable

    if provider.api_key is not None:
        return provider.api_key
    if provider.api_key_env is None:
        return None
    value = key_from_variable(provider.api_key_env)
    if value is None:
        raise CliError(
            f"setup {setup!r}: provider {provider.name!r} reads its API key from "
            f"${provider.api_key_env}, which is not set; export it, or point the setup at "
            "another provider (e.g. local, which needs no key)",
            USAGE_ERROR,
        )
    return value


def make_setup_llms(
    setups: list[Setup],
    parallel: int,
    limits: tuple[float | None, float | None] = (None, None),
    cache: bool = False,
) -> dict[tuple[str, str], LLM]:
    """One LLM object per (provider, model), all built (and every key checked) before any
    call. Built-in providers go through `build_llm`, so they read the same variables as
    every other command (OPENAI_API_KEY, OPENAI_BASE_URL, ANTHROPIC_API_KEY, OLLAMA_HOST);
    config.toml providers use their base_url and the key variable they name. `limits`
    (--rpm, --tpm) hold for each model; a config.toml provider's own keys beat them.
    `cache`: --batch's, whose answers the tasks read from the LLM cache."""
    import os

    from lasagna_cli.commands._llm import build_llm, cache_setting, proxies_of
    from lasagna_cli.engine.config import BUILTIN_PROVIDERS
    from lasagna_cli.engine.run import shared
    from lasagna_judge import make_llm

    llms: dict[tuple[str, str], LLM] = {}
    for setup in setups:
        model = setup.generator
        if model is None or model.key in llms:
            continue
        provider = model.provider
        assert provider is not None
        # The result files are the sweep's record and --continue its resume: no LLM cache
        # (but for --batch, whose answers wait there).
        if provider == BUILTIN_PROVIDERS.get(provider.name):
            try:
                llms[model.key] = build_llm(
                    model.name, concurrency=parallel, cache=cache, flag=None,
                    base_url_flag=None, requests_per_minute=limits[0],
                    tokens_per_minute=limits[1],
                )  # fmt: skip
            except CliError as exc:
                raise CliError(f"setup {setup.name!r}: {exc}", exc.exit_code) from None
        else:
            llms[model.key] = make_llm(
                model.name,
                base_url=provider.base_url,
                api_key=provider_api_key(provider, setup.name),
                cache=cache_setting(cache, os.environ) if cache else False,
                concurrency=parallel,
                requests_per_minute=shared(provider.requests_per_minute or limits[0]),
                tokens_per_minute=shared(provider.tokens_per_minute or limits[1]),
                proxies=proxies_of(),
                wire=provider.wire,
            )
    return llms
