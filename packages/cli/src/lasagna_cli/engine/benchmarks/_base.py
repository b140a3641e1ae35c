"""The base class of benchmark adapters: what every adapter does the same way (find the
split's file, pack what it read into a `LoadedBenchmark`), and the two methods each one
writes for its own raw format."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from lasagna_cli.engine.benchmarks._files import find_file
from lasagna_cli.engine.benchmarks._model import (
    BenchmarkDocument,
    BenchmarkQuestion,
    BenchmarkSpec,
    LoadedBenchmark,
    ReadOptions,
    Subset,
)


class BenchmarkAdapter(ABC):
    """Subclass it to add a benchmark: set `spec`, write `load` and `write_subset`, and
    register an instance (`register_benchmark`, or the `lasagna.benchmarks` entry-point
    group). Nothing is downloaded: `load` reads files the user already has, and a missing
    one is a `BenchmarkFileError` (see `find`)."""

    spec: BenchmarkSpec

    @abstractmethod
    def load(self, source: Path, split: str, options: ReadOptions) -> LoadedBenchmark:
        """Read the split from `source` (a folder, or the split's file itself)."""

    @abstractmethod
    def write_subset(self, source: Path, split: str, out_dir: Path, keep: Subset) -> list[Path]:
        """Write the kept documents and questions to `out_dir` in the raw format, so that
        `load(out_dir, split, ...)` reads exactly that subset. Returns the files written."""

    def find(
        self, source: Path, split: str, names: Sequence[str], patterns: Sequence[str] = ()
    ) -> Path:
        """The split's file (see `find_file`); a missing one says where to get it."""
        return find_file(
            source,
            benchmark=self.spec.name,
            split=split,
            names=names,
            patterns=patterns,
            files_help=self.spec.files_help,
        )

    def loaded(
        self,
        split: str,
        documents: Iterable[BenchmarkDocument],
        questions: Iterable[BenchmarkQuestion],
        files: Iterable[Path],
        *,
        skipped: Mapping[str, int] | None = None,
        notes: Iterable[str] = (),
    ) -> LoadedBenchmark:
        """The benchmark as read; a skip reason with no question skipped is left out."""
        return LoadedBenchmark(
            name=self.spec.name,
            split=split,
            documents=tuple(documents),
            questions=tuple(questions),
            files=tuple(files),
            skipped={reason: n for reason, n in (skipped or {}).items() if n},
            notes=tuple(notes),
        )
