"""What a run measures, on what, with what: the typed configuration and the doors that make it
(`benchmark run`'s flags, sweep files and their `benchmarks:` entries, `chunking:`).

The names below load on first use (no import cycle through the package)."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lasagna_cli.engine.config._chunking_flags import chunking_spec as chunking_spec
    from lasagna_cli.engine.config._config import (
        BUILTIN_PROVIDERS as BUILTIN_PROVIDERS,
    )
    from lasagna_cli.engine.config._config import (
        DEFAULT_TOP_K as DEFAULT_TOP_K,
    )
    from lasagna_cli.engine.config._config import (
        JUDGE_MAX_CHARS as JUDGE_MAX_CHARS,
    )
    from lasagna_cli.engine.config._config import (
        BenchmarkEntry as BenchmarkEntry,
    )
    from lasagna_cli.engine.config._config import (
        ChunkingSpec as ChunkingSpec,
    )
    from lasagna_cli.engine.config._config import (
        DatabaseSpec as DatabaseSpec,
    )
    from lasagna_cli.engine.config._config import (
        ModelSpec as ModelSpec,
    )
    from lasagna_cli.engine.config._config import (
        PromptSpec as PromptSpec,
    )
    from lasagna_cli.engine.config._config import (
        ProviderSpec as ProviderSpec,
    )
    from lasagna_cli.engine.config._config import (
        RetrieverSpec as RetrieverSpec,
    )
    from lasagna_cli.engine.config._config import (
        RunConfig as RunConfig,
    )
    from lasagna_cli.engine.config._config import (
        Setup as Setup,
    )
    from lasagna_cli.engine.config._config import (
        endpoint_url as endpoint_url,
    )
    from lasagna_cli.engine.config._flags import (
        Flags as Flags,
    )
    from lasagna_cli.engine.config._flags import (
        config_from_path as config_from_path,
    )
    from lasagna_cli.engine.config._flags import (
        parse_filter_flags as parse_filter_flags,
    )
    from lasagna_cli.engine.config._flags import (
        parse_tracks as parse_tracks,
    )
    from lasagna_cli.engine.config._sweepfile import (
        SWEEP_SUFFIXES as SWEEP_SUFFIXES,
    )
    from lasagna_cli.engine.config._sweepfile import (
        config_from_sweep as config_from_sweep,
    )
    from lasagna_cli.engine.config._sweepfile import (
        is_sweep_file as is_sweep_file,
    )

_NAMES = {
    "BUILTIN_PROVIDERS": "_config",
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
    "config_from_path": "_flags",
    "parse_filter_flags": "_flags",
    "parse_tracks": "_flags",
    "SWEEP_SUFFIXES": "_sweepfile",
    "config_from_sweep": "_sweepfile",
    "is_sweep_file": "_sweepfile",
}

__all__ = sorted(_NAMES)


def __getattr__(name: str) -> Any:
    module = _NAMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
