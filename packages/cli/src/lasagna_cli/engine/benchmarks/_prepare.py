"""`prepare`: every benchmark OpenViking's RAG benchmark samples, sampled as its
scripts/run_sampling.py does (stratified, seed 42, fixed sizes), from raw files already on
disk (nothing is downloaded), into OpenViking's layout: `<out>/<dataset_name>/`.

The sizes and the seed are OpenViking's; the draw is lasagna's (`sample_benchmark`: the
order of sha256 of the seed and the ids), so the documents chosen are not those Python's
`random.sample(data, n)` picks in OpenViking's script.

Raw files are looked for in `<raw>/<dataset_name>` (OpenViking's raw_data/Locomo, ...),
else `<raw>/<name>` (lasagna's names: raw/locomo, ...).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lasagna_cli.engine._errors import EngineUsageError
from lasagna_cli.engine.benchmarks._registry import get_benchmark_spec, load_benchmark
from lasagna_cli.engine.benchmarks._sampling import sample_benchmark, write_sample

#: scripts/run_sampling.py of OpenViking's RAG benchmark: (dataset_name, documents,
#: questions); every one stratified with seed 42.
OFFICIAL: dict[str, tuple[str, int, int | None]] = {
    "locomo": ("Locomo", 3, 100),
    "syllabusqa": ("SyllabusQA", 7, 90),
    "qasper": ("Qasper", 8, 60),
    "financebench": ("FinanceBench", 3, None),
}
OFFICIAL_SEED = 42


@dataclass(frozen=True)
class Prepared:
    """One benchmark's outcome: written to `out`, or `missing` (no raw files found)."""

    name: str
    out: Path
    source: Path | None
    metadata: dict[str, Any] | None = None
    files: int = 0

    @property
    def missing(self) -> bool:
        return self.source is None


def raw_folder(raw: Path, name: str) -> Path | None:
    spelled = OFFICIAL[name][0]
    for candidate in (raw / spelled, raw / name):
        if candidate.exists():
            return candidate
    return None


def prepare_benchmarks(
    raw: Path, out: Path, names: Sequence[str] = (), seed: int = OFFICIAL_SEED
) -> list[Prepared]:
    """Sample each of `names` (default: all four) with OpenViking's parameters; a
    benchmark whose raw folder is missing is reported, not an error (the others go on)."""
    for name in names:
        if name not in OFFICIAL:
            raise EngineUsageError(
                f"--dataset {name!r}: OpenViking's sampling has parameters for "
                f"{', '.join(OFFICIAL)} only; sample another with `lasagna benchmark sample`"
            )
    done = []
    for name in names or tuple(OFFICIAL):
        spelled, num_docs, sample_size = OFFICIAL[name]
        target = out / spelled
        source = raw_folder(raw, name)
        if source is None:
            done.append(Prepared(name, target, None))
            continue
        bench = load_benchmark(name, source, with_text=False)
        sample = sample_benchmark(
            bench,
            num_docs=num_docs,
            sample_size=sample_size,
            seed=seed,
            mode="stratified",
            unit=get_benchmark_spec(name).sampling_unit,
        )
        written = write_sample(sample, bench, source, target)
        done.append(Prepared(name, target, source, dict(sample.metadata), len(written)))
    return done
