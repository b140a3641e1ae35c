"""One loader for every benchmark entry: the user's files and the registered benchmarks.

The registered benchmarks' raw files are checked first (`probe`: their questions read, not
yet their slow documents), so a missing file is refused before any data is loaded.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from lasagna_cli.engine._data import Dataset
from lasagna_cli.engine._steps import Step, no_step
from lasagna_cli.engine.benchmarks import LoadedBenchmark
from lasagna_cli.engine.config._config import BenchmarkEntry
from lasagna_cli.engine.datasets._named import named_dataset, read_named
from lasagna_cli.engine.datasets._own import own_dataset, read_own


class DatasetLoader:
    """Loads entries into Datasets; `text_cache` keeps the text extracted from PDFs;
    `on_step` is told `reading <entry>` while each is read (see `_steps`)."""

    def __init__(
        self,
        text_cache: Path | None = None,
        data_dir_label: str = "`data_dir:`",
        on_step: Step = no_step,
    ) -> None:
        self.text_cache = text_cache
        self.data_dir_label = data_dir_label
        self.on_step = on_step
        self._probed: dict[int, LoadedBenchmark] = {}

    def probe(self, entries: Iterable[BenchmarkEntry]) -> None:
        for entry in entries:
            if entry.benchmark is not None and entry.dataset is None:
                self._probed[id(entry)] = read_named(
                    entry, with_text=False, data_dir_label=self.data_dir_label
                )

    def __call__(self, entry: BenchmarkEntry) -> Dataset:
        stage = f"reading {entry.where}"
        self.on_step(stage, 0, None)
        dataset = self._load(entry)
        self.on_step(stage, 1, 1)
        return dataset

    def _load(self, entry: BenchmarkEntry) -> Dataset:
        if entry.benchmark is None:
            return own_dataset(read_own(entry), entry)
        probed = self._probed.get(id(entry))
        # BEIR reads everything either way; the others read their document texts now.
        loaded = probed if probed is not None and entry.benchmark == "beir" else None
        if loaded is None:
            loaded = read_named(
                entry,
                with_text=True,
                text_cache=self.text_cache,
                data_dir_label=self.data_dir_label,
                on_step=self.on_step,
            )
        return named_dataset(entry, loaded)
