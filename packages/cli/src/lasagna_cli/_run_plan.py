"""From a run's configuration to its tasks: data loaded, rows chosen, tracks settled.

Everything that can be refused is refused here, before an index is built or a model
loaded: a split or filter the data does not have, a track the data cannot support (with the
reason and the fix), a generation track with no model to generate with.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lasagna_cli._errors import USAGE_ERROR, CliError
from lasagna_cli._run_config import BenchmarkEntry, RunConfig, Setup

if TYPE_CHECKING:
    from lasagna_synth import BenchmarkData, BenchmarkRow


@dataclass(frozen=True)
class PlannedSetup:
    setup: Setup
    tracks: tuple[str, ...]
    generation_mode: str | None
    """"rag" (answers from the top-k passages), "closed-book", or "system" (the user's
    system answers); None without generation."""
    system: Mapping[str, Any] | None = None
    """The user's system as results describe it (no secrets); set once it is loaded."""
    system_identity: Mapping[str, Any] | None = None
    """What decides the system's outputs, for task fingerprints."""

    @property
    def needs_retrieval(self) -> bool:
        """Whether the built-in BM25 retriever runs (a system retrieves for itself)."""
        if self.setup.system is not None:
            return False
        return "retrieval" in self.tracks or self.generation_mode == "rag"


@dataclass(frozen=True)
class PlannedBenchmark:
    entry: BenchmarkEntry
    data: BenchmarkData
    name: str
    split: str
    rows: tuple[BenchmarkRow, ...]
    setups: tuple[PlannedSetup, ...]

    @property
    def sample_ids_sha256(self) -> str:
        """Which questions were asked: the sha256 of their sorted ids."""
        ids = sorted(row.id for row in self.rows)
        return hashlib.sha256("\n".join(ids).encode()).hexdigest()


def slug(text: str) -> str:
    """A file-system-safe name; a short hash keeps two names that slug alike apart."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "x"
    if safe == text and len(text) <= 100:
        return text
    return f"{safe[:80]}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"


def load_benchmark(entry: BenchmarkEntry) -> BenchmarkData:
    from lasagna_synth import load_data

    assert entry.path is not None
    return load_data(entry.path, drop_unknown_judgments=entry.drop_unknown_judgments)


def select_rows(data: BenchmarkData, entry: BenchmarkEntry, seed: int) -> list[BenchmarkRow]:
    """The split, filtered, then `n_samples` drawn with the seed (lasagna-rag's draw)."""
    if entry.split not in data.splits:
        splits = ", ".join(sorted(data.splits))
        raise CliError(
            f'{entry.where}: has no split "{entry.split}"; it has {splits}. Choose one with '
            "--split (or `split:` in a sweep file)",
            USAGE_ERROR,
        )
    rows = list(data.splits[entry.split])
    if entry.filters:
        available = data.filterable()
        for key, wanted in entry.filters.items():
            if key not in available:
                raise CliError(
                    f'{entry.where}: cannot filter on "{key}": no row has it in "metadata". '
                    f"Filterable: {', '.join(available) or 'nothing'}",
                    USAGE_ERROR,
                )
            rows = [r for r in rows if r.filter_values().get(key) in wanted]
        if not rows:
            shown = "; ".join(f"{k}: {', '.join(v)}" for k, v in available.items())
            raise CliError(
                f"{entry.where}: no question matches the filters "
                f"{', '.join(f'{k}={v}' for k, vs in entry.filters.items() for v in vs)}; the "
                f"values present are {shown}",
                USAGE_ERROR,
            )
    if entry.n_samples is not None and entry.n_samples < len(rows):
        from lasagna_cli._run_named import NamedBenchmarkData, sample_rows

        if isinstance(data, NamedBenchmarkData):  # lasagna-synth's draw, as `benchmark sample`
            return sample_rows(data, rows, entry.n_samples, seed)
        rows = random.Random(seed).sample(rows, entry.n_samples)
    return rows


def _refuse(entry: BenchmarkEntry, name: str, setup: Setup, message: str) -> CliError:
    shows = (
        f"`lasagna benchmark info {entry.benchmark}` shows what the benchmark has"
        if entry.benchmark is not None
        else f"`lasagna benchmark validate-data {entry.where}` shows what the data supports"
    )
    return CliError(
        f'{entry.where} ({name}), setup "{setup.name}": {message}. {shows}', USAGE_ERROR
    )


def plan_tracks(
    entry: BenchmarkEntry, data: BenchmarkData, name: str, setup: Setup
) -> PlannedSetup:
    """The tracks one setup runs on one benchmark; refused with reason and fix if impossible."""
    if setup.system is not None:
        return _plan_system_tracks(entry, data, name, setup)
    support = data.track_support()
    supported = [t for t, s in support.items() if s.supported]
    if setup.tracks is not None:
        for track in setup.tracks:
            found = support[track]  # type: ignore[index]
            if not found.supported:
                others = (
                    f"; or run the tracks it supports: --tracks {','.join(supported)}"
                    if supported
                    else ""
                )
                raise _refuse(
                    entry,
                    name,
                    setup,
                    f"cannot run the {track} track: {found.reason}. Fix: {found.fix}{others}",
                )
            if track in ("generation", "closed-book") and not setup.generator:
                raise _refuse(
                    entry,
                    name,
                    setup,
                    f"the {track} track needs a model to answer with: add --generator MODEL "
                    "(or `generator:` on the setup); local/smollm2 runs offline with no key",
                )
        tracks = setup.tracks
    else:
        tracks = tuple(
            t
            for t in supported
            if t == "retrieval" or (t == "generation" and setup.generator is not None)
        )
        if not tracks:
            why = "; ".join(f"{t}: {s.reason}" for t, s in support.items() if not s.supported)
            needs_model = [t for t in supported if t != "retrieval"]
            fix = (
                f"it supports {', '.join(needs_model)}, which needs a model: add --generator "
                "MODEL (local/smollm2 runs offline with no key)"
                if needs_model
                else f"nothing can be measured ({why})"
            )
            raise _refuse(entry, name, setup, f"no track to run: {fix}")
    mode = None
    if "generation" in tracks:
        mode = "rag" if data.corpus else "closed-book"
    return PlannedSetup(setup=setup, tracks=tuple(tracks), generation_mode=mode)


def _plan_system_tracks(
    entry: BenchmarkEntry, data: BenchmarkData, name: str, setup: Setup
) -> PlannedSetup:
    """A system's tracks as far as the data goes; what the system returns narrows them
    once it is loaded (`_systems._run.settle_systems`)."""
    support = data.track_support()
    possible = [t for t in ("retrieval", "generation") if support[t].supported]
    if setup.tracks is not None:
        for track in setup.tracks:
            found = support[track]  # type: ignore[index]
            if not found.supported:
                others = f"; or run --tracks {','.join(possible)}" if possible else ""
                raise _refuse(
                    entry,
                    name,
                    setup,
                    f"cannot run the {track} track: {found.reason}. Fix: {found.fix}{others}",
                )
        tracks = setup.tracks
    else:
        tracks = tuple(possible)
        if not tracks:
            why = "; ".join(f"{t}: {support[t].reason}" for t in ("retrieval", "generation"))
            raise _refuse(entry, name, setup, f"no track to run: nothing can be measured ({why})")
    mode = "system" if "generation" in tracks else None
    return PlannedSetup(setup=setup, tracks=tuple(tracks), generation_mode=mode)


def build_plan(config: RunConfig) -> list[PlannedBenchmark]:
    """Load and check every benchmark, choose rows, settle tracks. Loads no model.

    The registered benchmarks' raw files are checked first (their questions read, not yet
    their slow documents), so a missing file is refused before any data is loaded."""
    from lasagna_cli._run_named import load_named, probe

    probed = {i: probe(entry) for i, entry in enumerate(config.benchmarks) if entry.benchmark}
    planned: list[PlannedBenchmark] = []
    for i, entry in enumerate(config.benchmarks):
        data = load_named(entry, probed[i]) if i in probed else load_benchmark(entry)
        name = data.name(entry.name)
        rows = select_rows(data, entry, config.seed)
        setups = [s for s in config.setups if entry.setups is None or s.name in entry.setups]
        planned_setups = tuple(plan_tracks(entry, data, name, s) for s in setups)
        planned.append(
            PlannedBenchmark(
                entry=entry,
                data=data,
                name=name,
                split=entry.split,
                rows=tuple(rows),
                setups=planned_setups,
            )
        )
    _check_unique_folders(planned)
    return planned


def _check_unique_folders(planned: Sequence[PlannedBenchmark]) -> None:
    seen: dict[str, str] = {}
    for bench in planned:
        folder = dataset_folder(bench)
        if folder in seen:
            fix = (
                "make them one entry (a filter takes a list of values per key)"
                if bench.entry.benchmark is not None
                else "give one of them a different `name:` in the sweep file"
            )
            raise CliError(
                f"{bench.entry.where}: runs under the same name and split as {seen[folder]} "
                f"({bench.name}, split {bench.split}); {fix}",
                USAGE_ERROR,
            )
        seen[folder] = bench.entry.where


def dataset_folder(bench: PlannedBenchmark) -> str:
    """Tasks live in `<out>/tasks/<dataset folder>/<setup>/<item>.json`.

    The folder carries the dataset's content hash, so an edited file writes to a new folder
    and resuming never restores a result computed on the old version.
    """
    return slug(f"{bench.name}_{bench.split}")


def task_path(out: Path, bench: PlannedBenchmark, setup: Setup, row_id: str) -> Path:
    return out / "tasks" / dataset_folder(bench) / slug(setup.name) / f"{slug(row_id)}.json"
