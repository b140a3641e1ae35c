"""Building the LLM for a command: the one place in lasagna that reads environment variables.

Libraries take an LLM object; commands call `build_llm` with their options, and the
environment fills in what the options leave out: the model (MODEL_NAME), each provider's
key and server, the LLM cache's folder (`ENV_VARIABLES`, listed with what each does in
docs/reference/environment.md). --base-url beats the variables. Keys are passed to the LLM
and never printed. A price table (`--prices FILE`) is read here too, for every command
that prices its calls.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lasagna_cli.commands._errors import USAGE_ERROR, CliError, exit_code_for

if TYPE_CHECKING:
    from lasagna_cli.engine.config import Servers
    from lasagna_judge import LLM, Proxies

ENV_VARIABLES = (
    "MODEL_NAME",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OLLAMA_BASE_URL",
    "OLLAMA_HOST",
    "LASAGNA_CACHE_DIR",
)
CACHE_FILENAME = "llm-cache.sqlite"
EMBEDDER_BASE_URL = "LASAGNA_EMBEDDER_BASE_URL"
"""The embedders' own server variable, read before OPENAI_BASE_URL/OLLAMA_HOST."""


def embedder_base_url(model: str, env: Mapping[str, str]) -> str | None:
    provider = model.partition("/")[0]
    if provider == "openai":
        return _get(env, EMBEDDER_BASE_URL) or _get(env, "OPENAI_BASE_URL")
    if provider == "ollama":
        return _get(env, EMBEDDER_BASE_URL) or _ollama_base_url(env)
    return None


def _variables_read() -> str:
    return "variables read: " + ", ".join(ENV_VARIABLES)


def _get(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name, "").strip()
    return value or None


def _named(chosen: str, model: str | None, flag: str | None) -> str:
    # The model as the user gave it: with the flag they typed ("--generator openai/x"),
    # from MODEL_NAME, or alone when a file named it (a sweep's setup).
    if not model:
        return f"MODEL_NAME {chosen}"
    return f"{flag} {chosen}" if flag else chosen


def resolve_model(
    model: str | None, env: Mapping[str, str] | None = None, flag: str | None = "--model"
) -> str:
    """`model` (given as `flag`), else MODEL_NAME (`env`: the process environment's); a
    CliError (usage) when neither names a provider/model."""
    chosen = model or _get(os.environ if env is None else env, "MODEL_NAME")
    if chosen is None:
        option = flag or "--model"
        raise CliError(
            f"no model: pass {option} provider/name (openai/gpt-4o-mini, anthropic/..., "
            f"ollama/llama3.2) or set MODEL_NAME; {option} local/smollm2 runs on this machine "
            f"with no key and no server, and {option} fake/scripted tries the command in "
            "seconds (a scripted model)",
            USAGE_ERROR,
        )
    from lasagna_judge import PROVIDERS

    provider, sep, name = chosen.partition("/")
    if not sep or not name or provider not in PROVIDERS:
        hint = f"; did you mean openai/{chosen}?" if provider not in PROVIDERS and chosen else ""
        raise CliError(
            f"{_named(repr(chosen), model, flag)}: expected provider/name with provider one "
            f"of {', '.join(PROVIDERS)}{hint}",
            USAGE_ERROR,
        )
    return chosen


def _ollama_base_url(env: Mapping[str, str]) -> str | None:
    full = _get(env, "OLLAMA_BASE_URL")
    if full:
        return full
    host = _get(env, "OLLAMA_HOST")
    if not host:
        return None
    if "://" not in host:
        host = f"http://{host}"
    return host.rstrip("/") + "/v1"


def cache_setting(cache: bool, env: Mapping[str, str]) -> bool | Path:
    """False with --no-cache; else LASAGNA_CACHE_DIR/llm-cache.sqlite, else the default."""
    if not cache:
        return False
    folder = _get(env, "LASAGNA_CACHE_DIR")
    return Path(folder).expanduser() / CACHE_FILENAME if folder else True


def load_prices(path: Path) -> dict[str, tuple[float, float]]:
    """A `--prices` table (`lasagna_judge.read_prices`), its errors naming the flag."""
    from lasagna_judge import JudgeError, read_prices

    try:
        return read_prices(path)
    except JudgeError as exc:
        raise CliError(f"--prices: {exc}", exit_code_for(exc)) from None


def build_llm(
    model: str | None = None,
    base_url: str | None = None,
    concurrency: int = 8,
    cache: bool = True,
    *,
    no_cache: bool = False,
    requests_per_minute: float | None = None,
    tokens_per_minute: float | None = None,
    prices: Mapping[str, tuple[float, float]] | None = None,
    env: Mapping[str, str] | None = None,
    flag: str | None = "--model",
    base_url_flag: str | None = "--base-url",
) -> LLM:
    """The LLM for a command's --model/--base-url/--concurrency/--no-cache/--prices options.

    `env` defaults to the process environment (tests pass their own). A model that needs
    a key or a server neither given nor configured is a usage error that lists every
    variable read and points to local/smollm2; so is any setting make_llm refuses (a base
    URL that is not http(s), a local model file that does not exist, an unusable cache).
    `flag` is the option the user gave the model with ("--generator", "--judge"; None when
    it came from a file) and `base_url_flag` the command's server option (None when it has
    none), so that every message names what the user can actually type.
    `requests_per_minute` and `tokens_per_minute` are the run's limits: a Ray worker's LLM
    takes its share of them (`engine.run._rate_share`).
    """
    from lasagna_cli.engine.run import shared
    from lasagna_judge import JudgeError, make_llm

    env = os.environ if env is None else env
    chosen = resolve_model(model, env, flag)
    provider = chosen.partition("/")[0]
    named = _named(chosen, model, flag)
    given = f"{flag} " if flag else ""
    local = f"{given}local/smollm2 or {given}fake/scripted (scripted replies, to try things)"
    server = f"OPENAI_BASE_URL or {base_url_flag}" if base_url_flag else "OPENAI_BASE_URL"
    if concurrency < 1:
        raise CliError(f"--concurrency must be at least 1, got {concurrency}", USAGE_ERROR)
    if base_url and provider not in ("openai", "anthropic", "ollama"):
        raise CliError(
            f"{base_url_flag or 'a base URL'} does not apply to {named}, which runs in-process",
            USAGE_ERROR,
        )
    base_url = base_url or servers(env).urls.get(provider)
    hosted = provider in ("openai", "anthropic")
    api_key = _get(env, f"{provider.upper()}_API_KEY") if hosted else None
    if provider == "openai" and not api_key and not base_url:
        raise CliError(
            f"{named} needs OPENAI_API_KEY, or a server: {server} for any "
            f"OpenAI-compatible endpoint; or use {local}, which need neither "
            f"({_variables_read()})",
            USAGE_ERROR,
        )
    if provider == "anthropic" and not api_key:
        raise CliError(
            f"{named} needs ANTHROPIC_API_KEY; or use {local}, which need no key "
            f"({_variables_read()})",
            USAGE_ERROR,
        )

    from lasagna_cli.commands._cache_warnings import watch

    try:
        llm = make_llm(
            chosen,
            base_url=base_url,
            api_key=api_key,
            cache=cache_setting(cache and not no_cache, env),
            concurrency=concurrency,
            requests_per_minute=shared(requests_per_minute),
            tokens_per_minute=shared(tokens_per_minute),
            prices=prices,
            proxies=proxies_of(env),
            on_wait=lambda line: _say(f"{chosen}: {line}"),
        )
    except JudgeError as exc:  # every one is about the flags and variables above
        raise CliError(f"{named}: {exc}", USAGE_ERROR) from None
    watch(llm)
    return llm


def _say(line: str) -> None:
    """A line on stderr as it happens: a wait over 10 s and its reason (`make_llm(on_wait=)`),
    an embedder's cut input (`make_embedder(on_cut=)`)."""
    import typer

    typer.echo(line, err=True)


def proxies_of(env: Mapping[str, str] | None = None) -> Proxies | None:
    """HTTP_PROXY, HTTPS_PROXY and NO_PROXY as the libraries take them (they read no
    environment variable themselves): model calls and HTTP systems honour them."""
    from lasagna_judge import JudgeError, Proxies

    try:
        return Proxies.from_environ(os.environ if env is None else env)
    except JudgeError as exc:
        raise CliError(str(exc), USAGE_ERROR) from None


def key_from_variable(variable: str, env: Mapping[str, str] | None = None) -> str | None:
    """The value of the key variable a config file names (sweep providers' `api_key_env`),
    or None when it is unset or empty. The value is passed to the LLM, never printed."""
    return _get(os.environ if env is None else env, variable)


def cache_folder(name: str, env: Mapping[str, str] | None = None) -> Path:
    """A folder kept between runs beside the LLM cache: in LASAGNA_CACHE_DIR, or the user
    cache dir."""
    from lasagna_judge import default_cache_path

    setting = cache_setting(True, os.environ if env is None else env)
    return (setting if isinstance(setting, Path) else default_cache_path()).parent / name


def text_cache(env: Mapping[str, str] | None = None) -> Path:
    """Where texts extracted from PDFs are kept between runs (any run folder)."""
    return cache_folder("pdf-text", env)


def servers(env: Mapping[str, str] | None = None, base_url: str | None = None) -> Servers:
    """The servers model calls go to, read from the environment (OPENAI_BASE_URL,
    ANTHROPIC_BASE_URL, OLLAMA_BASE_URL or OLLAMA_HOST; for embeddings
    LASAGNA_EMBEDDER_BASE_URL first), with the command's --base-url."""
    from lasagna_cli.engine.config import Servers

    env = os.environ if env is None else env
    urls = {
        "openai": _get(env, "OPENAI_BASE_URL"),
        "anthropic": _get(env, "ANTHROPIC_BASE_URL"),
        "ollama": _ollama_base_url(env),
    }
    embedder_urls = {p: embedder_base_url(f"{p}/", env) for p in ("openai", "ollama")}
    return Servers(
        {p: u for p, u in urls.items() if u},
        {p: u for p, u in embedder_urls.items() if u},
        base_url,
    )


CONCURRENCY_HELP = (
    "default: 64 when every model is OpenAI's or Anthropic's own API (the adaptive pace finds "
    "its rate limit), else 8"
)


def concurrency_option(what: str, **options: Any) -> Any:
    """A command's `--concurrency` (None when not given: `auto_concurrency`)."""
    import typer

    return typer.Option(
        "--concurrency", show_default=False, help=f"{what} ({CONCURRENCY_HELP}).", **options
    )


def auto_concurrency(
    models: Iterable[str | None],
    base_url: str | None = None,
    env: Mapping[str, str] | None = None,
) -> int:
    """`--concurrency` when not given: HOSTED_CONCURRENCY when every model goes to OpenAI's
    or Anthropic's own API, whose limit the adaptive pace finds, so a generous bound lets a
    run use the whole limit without guessing it; OTHER_CONCURRENCY otherwise (no model, a
    `--base-url` or OPENAI_BASE_URL server, Ollama, an in-process model): a self-hosted
    server queues what it cannot serve, and a call queued past the idle timeout fails.
    `base_url` is the command's --base-url; a model left None is the environment's."""
    from lasagna_cli.engine.config import OTHER_CONCURRENCY

    env = os.environ if env is None else env
    try:
        names = [resolve_model(model, env, None) for model in models]
    except CliError:  # no model configured: the command's own check says so
        return OTHER_CONCURRENCY
    return servers(env, base_url).concurrency(names)


def run_llm(
    model: str,
    *,
    base_url: str | None,
    concurrency: int,
    requests_per_minute: float | None,
    tokens_per_minute: float | None,
    flag: str | None,
) -> LLM:
    """A model of `benchmark run` (data, sweep file or staged pipeline): `build_llm` with the
    run's --base-url where the model calls a server (openai/, ollama/, anthropic/); an
    in-process one (local/, fake/) never does."""
    from lasagna_cli.engine.config import Servers

    return build_llm(
        model,
        Servers(base_url=base_url).server(model),
        concurrency=concurrency,
        requests_per_minute=requests_per_minute,
        tokens_per_minute=tokens_per_minute,
        flag=flag,
        base_url_flag="--base-url",
    )
