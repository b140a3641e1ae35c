"""What every adapter does the same way: find the split's file, and pack what it read into
a `LoadedBenchmark`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from lasagna_synth._adapters._files import find_file
from lasagna_synth._adapters._model import (
    BenchmarkDocument,
    BenchmarkQuestion,
    BenchmarkSpec,
    LoadedBenchmark,
)


class AdapterBase:
    spec: BenchmarkSpec

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
