"""The registered public benchmarks, by name.

The seven built-in adapters are registered when this module is imported. Others come from
`register_benchmark(adapter)`, or from installed packages through the entry-point group
`lasagna.benchmarks`:

    [project.entry-points."lasagna.benchmarks"]
    mybench = "mypackage.bench:MyBenchAdapter"   # an adapter class, or an instance

Entry points are loaded lazily, once, the first time the registry is consulted (listing,
looking up or registering a benchmark), after the built-in ones, in the order
`importlib.metadata` gives them. One that cannot be loaded, or that does not give an
adapter, is an `EngineError` naming it and what it raised; nothing of that discovery is
kept, so the next consultation tries again and says the same.
"""

from __future__ import annotations

import difflib
import re
from importlib import metadata
from pathlib import Path
from typing import Any

from lasagna_cli.engine._errors import EngineError, EngineUsageError
from lasagna_cli.engine._steps import Step, no_step
from lasagna_cli.engine.benchmarks._model import (
    Adapter,
    BenchmarkFileError,
    BenchmarkSpec,
    LoadedBenchmark,
    ReadOptions,
)
from lasagna_cli.engine.benchmarks.beir import BeirAdapter
from lasagna_cli.engine.benchmarks.chroma_chunking import ChromaChunkingAdapter
from lasagna_cli.engine.benchmarks.financebench import FinanceBenchAdapter
from lasagna_cli.engine.benchmarks.locomo import LocomoAdapter
from lasagna_cli.engine.benchmarks.qasper import QasperAdapter
from lasagna_cli.engine.benchmarks.squad import SquadAdapter
from lasagna_cli.engine.benchmarks.syllabusqa import SyllabusQAAdapter

#: The entry-point group installed packages register their adapters under.
ENTRY_POINT_GROUP = "lasagna.benchmarks"

# A name is typed on the command line and becomes part of dataset names (`<name>@<hex>`).
_NAME = re.compile(r"[a-z0-9][a-z0-9._-]*")


class UnknownBenchmarkError(EngineUsageError):
    """A benchmark name or split that is not registered."""


def _check_adapter(adapter: object) -> Adapter:
    """`adapter` if it is one (a `BenchmarkSpec` as `spec`, `load` and `write_subset`),
    else an `EngineUsageError` saying what is missing."""
    spec = getattr(adapter, "spec", None)
    missing = [m for m in ("load", "write_subset") if not callable(getattr(adapter, m, None))]
    if not isinstance(spec, BenchmarkSpec) or missing:
        lacks = ([] if isinstance(spec, BenchmarkSpec) else ["spec: BenchmarkSpec"]) + missing
        raise EngineUsageError(
            f"expected a benchmark adapter (spec: BenchmarkSpec, load(source, split, options) "
            f"and write_subset(...); subclass BenchmarkAdapter), found "
            f"{type(adapter).__name__} without {', '.join(lacks)}"
        )
    if not _NAME.fullmatch(spec.name):
        raise EngineUsageError(
            f"benchmark name {spec.name!r}: expected lowercase letters, digits, '.', '_' or "
            "'-', starting with a letter or digit (it is typed on the command line)"
        )
    if spec.default_split not in spec.splits:
        raise EngineUsageError(
            f"benchmark {spec.name!r}: default_split {spec.default_split!r} is not one of its "
            f"splits ({', '.join(spec.splits) or 'none'})"
        )
    return adapter  # type: ignore[return-value]  # checked above, member by member


def _from_entry_point(entry_point: metadata.EntryPoint) -> Adapter:
    where = f"entry point {entry_point.name!r} ({entry_point.value}) in group {ENTRY_POINT_GROUP}"
    try:
        loaded: Any = entry_point.load()
        adapter = loaded() if isinstance(loaded, type) else loaded
        return _check_adapter(adapter)
    except Exception as exc:
        raise EngineError(
            f"benchmark {where} is broken: {type(exc).__name__}: {exc}; fix or uninstall the "
            "package that provides it"
        ) from exc


class _Registry:
    """The adapters by name, in registration order; entry points added on first use."""

    def __init__(self, adapters: tuple[Adapter, ...]) -> None:
        self._adapters: dict[str, Adapter] = {a.spec.name: a for a in adapters}
        self._discovered = False

    def adapters(self) -> dict[str, Adapter]:
        if not self._discovered:
            self._discover()
        return self._adapters

    def _discover(self) -> None:
        found: dict[str, tuple[Adapter, str]] = {}
        for entry_point in metadata.entry_points(group=ENTRY_POINT_GROUP):
            adapter = _from_entry_point(entry_point)
            name = adapter.spec.name
            other = found[name][1] if name in found else None
            if other is None and name in self._adapters:
                other = "a benchmark already registered"
            if other is not None:
                raise EngineError(
                    f"benchmark entry point {entry_point.name!r} ({entry_point.value}) in "
                    f"group {ENTRY_POINT_GROUP} registers {name!r}, as {other} does; "
                    "uninstall one of the packages"
                )
            found[name] = (adapter, f"entry point {entry_point.name!r} ({entry_point.value})")
        self._adapters.update((name, adapter) for name, (adapter, _) in found.items())
        self._discovered = True

    def register(self, adapter: Adapter, *, replace: bool) -> None:
        checked = _check_adapter(adapter)
        adapters = self.adapters()
        name = checked.spec.name
        if name in adapters and not replace:
            raise EngineUsageError(
                f"a benchmark named {name!r} is already registered; pass replace=True to "
                "replace it, or give the new one another name"
            )
        adapters[name] = checked


_BUILT_IN: tuple[Adapter, ...] = (
    LocomoAdapter(),
    SyllabusQAAdapter(),
    QasperAdapter(),
    FinanceBenchAdapter(),
    SquadAdapter(),
    BeirAdapter(),
    ChromaChunkingAdapter(),
)
_REGISTRY = _Registry(_BUILT_IN)


def register_benchmark(adapter: Adapter, *, replace: bool = False) -> None:
    """Add a benchmark to the registry under `adapter.spec.name` (see `Adapter`; subclass
    `BenchmarkAdapter`). A name already registered is an `EngineUsageError` unless
    `replace=True`, which puts the new adapter in the old one's place."""
    _REGISTRY.register(adapter, replace=replace)


def benchmark_names() -> tuple[str, ...]:
    """The registered benchmark names, in registry order."""
    return tuple(_REGISTRY.adapters())


def is_benchmark(name: str) -> bool:
    return name in _REGISTRY.adapters()


def get_adapter(name: str) -> Adapter:
    adapters = _REGISTRY.adapters()
    try:
        return adapters[name]
    except KeyError:
        close = difflib.get_close_matches(name.lower(), list(adapters), n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise UnknownBenchmarkError(
            f"unknown benchmark {name!r}: {hint}expected one of {', '.join(adapters)} "
            "(see `lasagna benchmark list`)"
        ) from None


def get_benchmark_spec(name: str) -> BenchmarkSpec:
    return get_adapter(name).spec


def list_benchmarks() -> tuple[BenchmarkSpec, ...]:
    return tuple(adapter.spec for adapter in _REGISTRY.adapters().values())


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
    on_step: Step = no_step,
) -> LoadedBenchmark:
    """Read a registered benchmark from its raw files under `data_dir` (a folder, or the
    split's file itself). Nothing is downloaded: a missing file is a `BenchmarkFileError`
    naming the file and where to get it.

    `with_text=False` may leave document texts empty where reading them is slow (PDFs):
    enough to count and sample. `text_cache` is a folder where texts extracted from PDFs are
    kept between calls (keyed by the sha256 of the file and of the reader), so a benchmark
    read again, from any run folder, skips the extraction. `on_step` is told the slow
    steps (extracting PDFs) as they go."""
    adapter = get_adapter(name)
    chosen = resolve_split(adapter.spec, split)
    cache = Path(text_cache) if text_cache is not None else None
    return adapter.load(Path(data_dir), chosen, ReadOptions(with_text, cache, on_step))


__all__ = [
    "ENTRY_POINT_GROUP",
    "BenchmarkFileError",
    "UnknownBenchmarkError",
    "benchmark_names",
    "get_adapter",
    "get_benchmark_spec",
    "is_benchmark",
    "list_benchmarks",
    "load_benchmark",
    "register_benchmark",
    "resolve_split",
]
