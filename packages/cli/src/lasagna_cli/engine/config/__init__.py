"""What a run measures, on what, with what: the typed configuration and the doors that make it
(`benchmark run`'s flags, sweep files and their `benchmarks:` entries, `chunking:`).

The names below load on first use (no import cycle through the package)."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lasagna_cli.engine.config._build import (
        HOSTED_CONCURRENCY,
        OTHER_CONCURRENCY,
        RUN_ACCEPTS,
        Servers,
        build_config,
        check_data_path,
        check_predictions_from_data,
        checked_base_url,
        default_concurrency,
        is_hosted,
        jury_flags,
        located,
        run_flags,
        with_embedder_endpoint,
    )
    from lasagna_cli.engine.config._chunking_flags import chunking_spec
    from lasagna_cli.engine.config._config import (
        BUILTIN_PROVIDERS,
        DATA_FORMATS,
        DEFAULT_TOP_K,
        JUDGE_MAX_CHARS,
        BenchmarkEntry,
        ChunkingSpec,
        DatabaseSpec,
        ModelSpec,
        PromptSpec,
        ProviderSpec,
        RetrieverSpec,
        RunConfig,
        Setup,
        endpoint_url,
    )
    from lasagna_cli.engine.config._flags import (
        Flags,
        check_data_format,
        config_from_path,
        parse_filter_flags,
        parse_tracks,
    )
    from lasagna_cli.engine.config._sweepfile import (
        SWEEP_SUFFIXES,
        config_from_sweep,
        is_sweep_file,
    )

_NAMES = {
    **dict.fromkeys(
        (
            "HOSTED_CONCURRENCY",
            "OTHER_CONCURRENCY",
            "RUN_ACCEPTS",
            "Servers",
            "build_config",
            "check_data_path",
            "check_predictions_from_data",
            "checked_base_url",
            "default_concurrency",
            "is_hosted",
            "jury_flags",
            "located",
            "run_flags",
            "with_embedder_endpoint",
        ),
        "_build",
    ),
    "BUILTIN_PROVIDERS": "_config",
    "DATA_FORMATS": "_config",
    "DEFAULT_TOP_K": "_config",
    "JUDGE_MAX_CHARS": "_config",
    "BenchmarkEntry": "_config",
    "ChunkingSpec": "_config",
    "DatabaseSpec": "_config",
    "ModelSpec": "_config",
    "PromptSpec": "_config",
    "ProviderSpec": "_config",
    "RetrieverSpec": "_config",
    "RunConfig": "_config",
    "Setup": "_config",
    "endpoint_url": "_config",
    "chunking_spec": "_chunking_flags",
    "Flags": "_flags",
    "check_data_format": "_flags",
    "config_from_path": "_flags",
    "parse_filter_flags": "_flags",
    "parse_tracks": "_flags",
    "SWEEP_SUFFIXES": "_sweepfile",
    "config_from_sweep": "_sweepfile",
    "is_sweep_file": "_sweepfile",
}

__all__ = [
    "BUILTIN_PROVIDERS",
    "DATA_FORMATS",
    "DEFAULT_TOP_K",
    "HOSTED_CONCURRENCY",
    "JUDGE_MAX_CHARS",
    "OTHER_CONCURRENCY",
    "RUN_ACCEPTS",
    "SWEEP_SUFFIXES",
    "BenchmarkEntry",
    "ChunkingSpec",
    "DatabaseSpec",
    "Flags",
    "ModelSpec",
    "PromptSpec",
    "ProviderSpec",
    "RetrieverSpec",
    "RunConfig",
    "Servers",
    "Setup",
    "build_config",
    "check_data_format",
    "check_data_path",
    "check_predictions_from_data",
    "checked_base_url",
    "chunking_spec",
    "config_from_path",
    "config_from_sweep",
    "default_concurrency",
    "endpoint_url",
    "is_hosted",
    "is_sweep_file",
    "jury_flags",
    "located",
    "parse_filter_flags",
    "parse_tracks",
    "run_flags",
    "with_embedder_endpoint",
]


def __getattr__(name: str) -> Any:
    module = _NAMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
