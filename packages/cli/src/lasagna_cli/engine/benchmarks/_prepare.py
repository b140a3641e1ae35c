"""`prepare`: OpenViking's sampling of its four datasets from raw files already on disk
(nothing is downloaded), into its layout `<out>/<dataset_name>/`, draw for draw as its
scripts do (`_ov_sampling`).

Without sizes it is scripts/run_sampling.py: each dataset at that script's sizes,
stratified, seed 42. With `sample_size`, `num_docs` or `full` it is scripts/sample_dataset.py
with those flags, the same for every dataset chosen.

Raw files are looked for in `<raw>/<dataset_name>` (OpenViking's raw_data/Locomo, ...),
else `<raw>/<name>` (lasagna's names: raw/locomo, ...).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lasagna_cli.engine._errors import EngineError, EngineUsageError
from lasagna_cli.engine.benchmarks._ov_sampling import sample_openviking

#: scripts/run_sampling.py: lasagna name -> (dataset_name, documents, questions); every
#: one stratified with seed 42.
OFFICIAL: dict[str, tuple[str, int, int]] = {
    "locomo": ("Locomo", 3, 80),
    "syllabusqa": ("SyllabusQA", 7, 90),
    "qasper": ("Qasper", 8, 60),
    "financebench": ("FinanceBench", 3, 12),
}
OFFICIAL_SEED = 42


@dataclass(frozen=True)
class Prepared:
    """One dataset's outcome: written to `out`, or `missing` (no raw files found)."""

    name: str
    out: Path
    source: Path | None
    metadata: dict[str, Any] | None = None
    files: int = 0

    @property
    def missing(self) -> bool:
        return self.source is None


def dataset_key(name: str) -> str:
    """lasagna's name of a dataset given either way (locomo or Locomo)."""
    lowered = name.lower()
    if lowered not in OFFICIAL:
        raise EngineUsageError(
            f"--dataset {name!r}: OpenViking's sampling knows "
            f"{', '.join(v[0] for v in OFFICIAL.values())} (or all); sample another with "
            "`lasagna benchmark sample`"
        )
    return lowered


def check_prepare(raw: Path, out: Path, datasets: Sequence[str], overwrite: bool) -> list[str]:
    """`benchmark prepare`'s folders checked before anything is drawn: the raw files' folder,
    and each sample's, empty unless `overwrite`; the datasets named ("all": every one) as
    lasagna names them."""
    if not raw.is_dir():
        raise EngineUsageError(
            f"--raw-dir {raw}: no such folder; give the folder holding one folder of raw "
            "files per dataset (raw_data/Locomo, ...)"
        )
    names = [dataset_key(name) for name in datasets if name.lower() != "all"]
    for name in names or OFFICIAL:
        target = out / OFFICIAL[name][0]
        if target.is_dir() and any(target.iterdir()) and not overwrite:
            raise EngineUsageError(
                f"{target} is not empty; pass --overwrite to write the sample over it, or "
                "choose another -o"
            )
    return names


def check_prepared(prepared: Sequence[Prepared]) -> None:
    """The datasets whose raw files were missing, as one error (the others are written)."""
    missing = [d.name for d in prepared if d.missing]
    if missing:
        raise EngineError(
            f"{len(missing)} of {len(prepared)} datasets not prepared: {', '.join(missing)}"
        )


def prepared_line(done: Prepared, raw: Path) -> str:
    """What `benchmark prepare` says of one dataset: what it drew, or where no raw files
    were found (a line for stderr: `done.missing`)."""
    if done.missing or done.metadata is None:
        return (
            f"{done.name}: no raw files in {raw / OFFICIAL[done.name][0]} (or "
            f"{raw / done.name}); see `lasagna benchmark info {done.name}` for the "
            "files and where to get them"
        )
    meta = done.metadata
    return (
        f"{done.name}: {meta['sampled_num_docs']} of {meta['original_num_docs']} "
        f"documents, {meta['sampled_total_qas']} of {meta['original_total_qas']} "
        f"questions -> {done.out}"
    )


def raw_folder(raw: Path, name: str) -> Path | None:
    spelled = OFFICIAL[name][0]
    for candidate in (raw / spelled, raw / name):
        if candidate.exists():
            return candidate
    return None


def prepare_benchmarks(
    raw: Path,
    out: Path,
    names: Sequence[str] = (),
    *,
    seed: int = OFFICIAL_SEED,
    sample_size: int | None = None,
    num_docs: int | None = None,
    full: bool = False,
    mode: str = "stratified",
) -> list[Prepared]:
    """Sample each of `names` (default: all four); a dataset whose raw folder is missing is
    reported, not an error (the others go on)."""
    scripted = full or sample_size is not None or num_docs is not None
    done = []
    for name in [dataset_key(n) for n in names] or list(OFFICIAL):
        spelled, official_docs, official_size = OFFICIAL[name]
        docs: int | None = official_docs
        size: int | None = official_size
        if scripted:  # sample_dataset.py's flags; --full overrides them
            docs, size = (None, None) if full else (num_docs, sample_size)
        target = out / spelled
        source = raw_folder(raw, name)
        if source is None:
            done.append(Prepared(name, target, None))
            continue
        drawn = sample_openviking(
            spelled, source, target, sample_size=size, num_docs=docs, seed=seed, mode=mode
        )
        done.append(Prepared(name, target, source, drawn.metadata, len(drawn.files)))
    return done
