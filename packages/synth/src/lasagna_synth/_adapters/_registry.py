"""The registered public benchmarks, by name."""

from __future__ import annotations

import difflib
from pathlib import Path

from lasagna_synth._adapters._model import (
    Adapter,
    BenchmarkFileError,
    BenchmarkSpec,
    LoadedBenchmark,
    ReadOptions,
)
from lasagna_synth._adapters.beir import BeirAdapter
from lasagna_synth._adapters.financebench import FinanceBenchAdapter
from lasagna_synth._adapters.locomo import LocomoAdapter
from lasagna_synth._adapters.qasper import QasperAdapter
from lasagna_synth._adapters.squad import SquadAdapter
from lasagna_synth._adapters.syllabusqa import SyllabusQAAdapter
from lasagna_synth._errors import SynthUsageError

_ADAPTERS: dict[str, Adapter] = {
    adapter.spec.name: adapter
    for adapter in (
        LocomoAdapter(),
        SyllabusQAAdapter(),
        QasperAdapter(),
        FinanceBenchAdapter(),
        SquadAdapter(),
        BeirAdapter(),
    )
}


class UnknownBenchmarkError(SynthUsageError):
    """A benchmark name or split that is not registered."""


def benchmark_names() -> tuple[str, ...]:
    """The registered benchmark names, in registry order."""
    return tuple(_ADAPTERS)


def is_benchmark(name: str) -> bool:
    return name in _ADAPTERS


def get_adapter(name: str) -> Adapter:
    try:
        return _ADAPTERS[name]
    except KeyError:
        close = difflib.get_close_matches(name.lower(), list(_ADAPTERS), n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise UnknownBenchmarkError(
            f"unknown benchmark {name!r}: {hint}expected one of {', '.join(_ADAPTERS)} "
            "(see `lasagna benchmark list`)"
        ) from None


def get_benchmark_spec(name: str) -> BenchmarkSpec:
    return get_adapter(name).spec


def list_benchmarks() -> tuple[BenchmarkSpec, ...]:
    return tuple(adapter.spec for adapter in _ADAPTERS.values())


def resolve_split(spec: BenchmarkSpec, split: str | None) -> str:
    if split is None:
        return spec.default_split
    if split not in spec.splits:
        raise UnknownBenchmarkError(
            f"{spec.name} has no split {split!r}: expected one of {', '.join(spec.splits)}"
        )
    return split


def load_benchmark(
    name: str,
    data_dir: str | Path,
    split: str | None = None,
    *,
    with_text: bool = True,
    text_cache: str | Path | None = None,
) -> LoadedBenchmark:
    """Read a registered benchmark from its raw files under `data_dir` (a folder, or the
    split's file itself). Nothing is downloaded: a missing file is a `BenchmarkFileError`
    naming the file and where to get it.

    `with_text=False` may leave document texts empty where reading them is slow (PDFs):
    enough to count and sample. `text_cache` is a folder where texts extracted from PDFs are
    kept between calls (keyed by the sha256 of the file and of the reader), so a benchmark
    read again, from any run folder, skips the extraction."""
    adapter = get_adapter(name)
    chosen = resolve_split(adapter.spec, split)
    cache = Path(text_cache) if text_cache is not None else None
    return adapter.load(Path(data_dir), chosen, ReadOptions(with_text, cache))


__all__ = [
    "BenchmarkFileError",
    "UnknownBenchmarkError",
    "benchmark_names",
    "get_adapter",
    "get_benchmark_spec",
    "is_benchmark",
    "list_benchmarks",
    "load_benchmark",
    "resolve_split",
]
