"""`benchmark run`'s config built whole from PATH and the flags: a sweep file or one data
path, each model located at the server its calls go to, and the tasks in flight chosen when
nothing says.

Where a model's calls go is part of what a run measures: the endpoint is recorded in the
results (scheme, host, port, path; never a credential or a query) and enters a setup's
fingerprint and comparability key. The command reads the servers from the environment and
--base-url into `Servers`; the engine only applies them.
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from lasagna_cli.engine._errors import EngineUsageError
from lasagna_cli.engine.config._config import RunConfig, Setup, endpoint_url
from lasagna_cli.engine.config._flags import Flags

#: Providers whose models run in this process: they call no server.
IN_PROCESS = ("local", "fake")
HOSTED_CONCURRENCY = 64
"""Tasks in flight when every model is OpenAI's or Anthropic's own API (the adaptive pace
finds its rate limit, so a generous bound lets a run use all of it)."""
OTHER_CONCURRENCY = 8
"""Tasks in flight for any other server, an in-process model or a user's system (a
self-hosted server queues what it cannot serve, and a call queued too long fails)."""

#: What `benchmark run` reads as PATH.
RUN_ACCEPTS = (
    "a .jsonl, .csv or SQuAD .json file, a BEIR folder, a sweep file (.yaml/.toml), or a "
    "registered benchmark's name (`lasagna benchmark list`) with --data-dir"
)


@dataclass(frozen=True)
class Servers:
    """The servers model calls go to: each provider's base URL from the environment
    (`urls`: openai, anthropic, ollama), each embedding provider's (`embedder_urls`), and
    the command's --base-url, the server of every model that calls one (`base_url`)."""

    urls: Mapping[str, str] = field(default_factory=dict)
    embedder_urls: Mapping[str, str] = field(default_factory=dict)
    base_url: str | None = None

    def server(self, model: str) -> str | None:
        """--base-url for `model` when it calls a server; an in-process model never does."""
        in_process = model.partition("/")[0] in IN_PROCESS
        return self.base_url if self.base_url is not None and not in_process else None

    def endpoint_at(self, model: str, base_url: str | None) -> str | None:
        """The endpoint of `model`'s calls sent to `base_url`, else to its provider's server
        from the environment; None for a provider's own API and an in-process model."""
        provider = model.partition("/")[0]
        url = base_url if base_url is not None else self.urls.get(provider)
        return endpoint_url(url) if url and provider not in IN_PROCESS else None

    def endpoint(self, model: str) -> str | None:
        """The endpoint a run's `model` calls (`server`, else the environment's)."""
        return self.endpoint_at(model, self.server(model))

    def concurrency(self, models: list[str]) -> int:
        """The calls in flight when the command's --concurrency is not given: HOSTED_ when
        every one of `models` goes to OpenAI's or Anthropic's own API, else OTHER_."""
        hosted = is_hosted(models, [self.endpoint(model) for model in models])
        return HOSTED_CONCURRENCY if hosted else OTHER_CONCURRENCY

    def endpoints(self, base_url: str | None) -> dict[str, str]:
        """Provider -> the server its calls go to: `base_url`, or the environment's."""
        found = {
            p: self.endpoint_at(f"{p}/model", base_url) for p in ("openai", "anthropic", "ollama")
        }
        return {p: url for p, url in found.items() if url is not None}

    def embedder_endpoint(self, model: str) -> str | None:
        """The embedding server `model` calls; None for OpenAI's own and in-process ones."""
        url = self.embedder_urls.get(model.partition("/")[0])
        return self.endpoint_at(model, url) if url else None


def with_embedder_endpoint(setup: Setup, servers: Servers) -> Setup:
    """A dense or hybrid setup with the server its embedding calls go to."""
    spec = setup.retriever
    if spec is None or not spec.uses_vectors or spec.embedder is None:
        return setup
    endpoint = servers.embedder_endpoint(spec.embedder)
    return replace(setup, retriever=replace(spec, embedder_endpoint=endpoint))


def located(config: RunConfig, servers: Servers) -> RunConfig:
    """The run's models with the servers their calls will go to. A model of a provider the
    config names (a sweep's config.toml) records that provider's own server."""

    def at_server(setup: Setup) -> Setup:
        if setup.generator is not None and setup.generator.provider is None:
            endpoint = servers.endpoint(setup.generator.name)
            setup = replace(setup, generator=replace(setup.generator, endpoint=endpoint))
        return with_embedder_endpoint(setup, servers)

    return replace(
        config,
        setups=tuple(at_server(s) for s in config.setups),
        judge_endpoint=servers.endpoint(config.judge) if config.judge is not None else None,
        jury=tuple(replace(j, endpoint=servers.endpoint(j.name)) for j in config.jury),
    )


def is_hosted(models: list[str], endpoints: list[str | None]) -> bool:
    """Every model is OpenAI's or Anthropic's own API (none at another server)."""
    return (
        bool(models)
        and all(m.partition("/")[0] in ("openai", "anthropic") for m in models)
        and all(e is None for e in endpoints)
    )


def default_concurrency(config: RunConfig) -> int:
    """A located run's tasks in flight when neither --concurrency nor its file says:
    HOSTED_CONCURRENCY when every model is OpenAI's or Anthropic's own API, else
    OTHER_CONCURRENCY (also when a setup asks the user's own system, which no adaptive pace
    protects, or a model of a server the file names)."""
    specs = [setup.generator for setup in config.setups if setup.generator is not None]
    specs += config.jury
    if config.judge_endpoint or any(setup.system is not None for setup in config.setups):
        return OTHER_CONCURRENCY
    if any(model.provider is not None or model.endpoint for model in specs):
        return OTHER_CONCURRENCY
    models = [model.name for model in specs] + ([config.judge] if config.judge else [])
    return HOSTED_CONCURRENCY if is_hosted(models, []) else OTHER_CONCURRENCY


def check_data_path(path: str, accepts: str = RUN_ACCEPTS) -> None:
    """A PATH that does not exist is a usage error, with the registered benchmark it may
    have meant to name."""
    if Path(path).exists():
        return
    from lasagna_cli.engine._errors import did_you_mean
    from lasagna_cli.engine.benchmarks import benchmark_names

    close = did_you_mean(path, benchmark_names())
    hint = f"{close[:-2]}, a registered benchmark? run it with --data-dir)" if close else ""
    raise EngineUsageError(f"{path}: no such file or folder{hint}; give {accepts}")


def build_config(path: str, flags: Flags, *, servers: Servers, env: Mapping[str, str]) -> RunConfig:
    """The config of `benchmark run PATH`: a sweep file's, or one data path's from the
    flags; its models located (`servers`), its concurrency chosen when not given. `env`
    fills `${VAR}` in a sweep's system headers."""
    from lasagna_cli.engine.config._sweepfile import config_from_sweep, is_sweep_file

    if is_sweep_file(path):
        config = config_from_sweep(path, flags, env)
    else:
        check_data_path(path)
        from lasagna_cli.engine.config._flags import config_from_path

        config = config_from_path(path, flags)
    config = located(config, servers)
    if config.concurrency is None:
        config = replace(config, concurrency=default_concurrency(config))
    return config


def jury_flags(judges: Sequence[str]) -> tuple[str | None, tuple[str, ...]]:
    """--judge given once or more: the first judge, and the jury's other judges."""
    if len(set(judges)) < len(judges):
        raise EngineUsageError(
            f"--judge: each judge of a jury once, found {', '.join(judges)}; remove the "
            "repeated one"
        )
    return (judges[0] if judges else None), tuple(judges[1:])


def checked_base_url(
    base_url: str | None, path: str, generator: str | None, judges: Sequence[str]
) -> str | None:
    """--base-url, refused when no model of the run (its generator, every judge) calls a
    server (a sweep file names its own models, so it is taken as it is)."""
    from lasagna_cli.engine.config._sweepfile import is_sweep_file

    if base_url is None or is_sweep_file(path):
        return base_url
    models = [m for m in (generator, *judges) if m is not None]
    if not any(Servers(base_url=base_url).server(m) for m in models):
        found = (
            f"this run's models are {' and '.join(models)}, which run in-process"
            if models
            else "neither is given"
        )
        raise EngineUsageError(
            f"--base-url is the server of --generator or --judge (openai/, ollama/ or "
            f"anthropic/ models); {found}"
        )
    return base_url


def check_predictions_from_data(path: str) -> None:
    """--predictions-from-data reads one data file's outputs: a sweep file is refused."""
    from lasagna_cli.engine.config._sweepfile import is_sweep_file

    if is_sweep_file(path):
        raise EngineUsageError(
            f"--predictions-from-data scores the outputs one data file records, and {path} "
            "is a sweep file; run each data file with it, or give a setup "
            "`system: {predictions: FILE}`"
        )


def run_flags(
    path: str,
    values: Mapping[str, Any],
    given: Container[str],
    env: Mapping[str, str],
    **resolved: Any,
) -> Flags:
    """`benchmark run PATH`'s `Flags` from its flags' values (by parameter name): the user's
    system they name (`env` fills `${VAR}` in its headers), and --split left at its default
    lets a sweep's registered benchmark run its own. `resolved`: what the command settled
    beforehand (the judge and jury, the rate limits)."""
    from lasagna_cli.engine.config._chunking_flags import chunking_spec
    from lasagna_cli.engine.config._config import ChunkingSpec
    from lasagna_cli.engine.config._flags import parse_filter_flags, parse_tracks
    from lasagna_cli.engine.systems import spec_from_flags

    system = spec_from_flags(
        system=values["system"],
        predictions=values["predictions"],
        allow_missing=values["allow_missing"],
        timeout=values["system_timeout"],
        retries=values["system_retries"],
        headers=values["system_headers"] or [],
        env=env,
        predictions_from_data=path if values["predictions_from_data"] else None,
        data_format=values["data_format"],
    )
    tracks, corpus = values["tracks"], values["corpus"]
    names = {"chunker": "--chunker", "size": "--chunk-size", "overlap": "--chunk-overlap"}
    chunking = {
        "chunker": values["chunker"],
        "size": values["chunk_size"],
        "overlap": values["chunk_overlap"],
    }
    return Flags(
        profile=values["profile"],
        tracks=parse_tracks(tracks, "--tracks") if tracks is not None else None,
        generator=values["generator"],
        rubric=values["rubric"],
        judge_max_chars=values["max_chars"],
        diagnostics=values["diagnostics"],
        n_samples=values["n_samples"],
        seed=values["seed"],
        split=values["split"],
        split_given="split" in given,
        top_k=values["top_k"],
        filters=parse_filter_flags(values["filters"] or []),
        concurrency=values["concurrency"],
        drop_unknown_judgments=values["drop_unknown_judgments"],
        data_format=values["data_format"],
        retriever=values["retriever"],
        embedder=values["embedder"],
        vector_store=values["vector_store"],
        collection=values["collection"],
        corpus=Path(corpus).expanduser() if corpus is not None else None,
        chunking=chunking_spec(chunking, "--chunker", ChunkingSpec(), names),
        system=system,
        **resolved,
    )
