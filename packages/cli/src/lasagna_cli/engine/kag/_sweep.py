"""kag's `benchmark sweep` as a door of the one runner: DATASETS.json + SETUPS.toml +
config.toml to a plan, run in kag's result-file layout.

Each (dataset, question, setup) is a task, in that order; a setup meets only the datasets
it lists. Everything is read and checked before any model is called. Without `resume`, a
folder that already holds some of these results is refused rather than overwritten; with
it, finished results are kept and failed ones too unless `retry_failed` (kag's
`--retry-errors`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from lasagna_cli.engine._config import BenchmarkEntry, Setup
from lasagna_cli.engine._errors import EngineError, EngineUsageError
from lasagna_cli.engine._plan import PlannedDataset, PlannedSetup, Task, make_tasks
from lasagna_cli.engine._store import is_finished
from lasagna_cli.engine.kag._config import Config, load_config
from lasagna_cli.engine.kag._datasets import Datasets, as_datasets, load_datasets
from lasagna_cli.engine.kag._setups import load_setups, select_setups
from lasagna_cli.engine.kag._store import KagStore


@dataclass
class Sweep:
    """A sweep's inputs, read and checked."""

    datasets: Datasets
    config: Config
    setups: dict[str, Setup]
    plan: list[PlannedDataset]

    def with_setups(self, change: Callable[[Setup], Setup]) -> Sweep:
        """The sweep with every setup changed by `change` (the plan's too)."""
        setups = {name: change(s) for name, s in self.setups.items()}
        plan = [
            replace(b, setups=tuple(replace(p, setup=setups[p.setup.name]) for p in b.setups))
            for b in self.plan
        ]
        return Sweep(self.datasets, self.config, setups, plan)


def check_prefix(prefix: str) -> None:
    if prefix and ("/" in prefix or "\\" in prefix or prefix.startswith(".") or "\x00" in prefix):
        raise EngineUsageError(
            f"--prefix: expected a file-name prefix without path separators or a leading dot, "
            f"found {prefix!r}"
        )


def default_config(setups_path: Path, config_path: Path | None) -> Path | None:
    """The config file: as given, else config.toml beside the setups file, if present."""
    if config_path is None and (setups_path.parent / "config.toml").is_file():
        return setups_path.parent / "config.toml"
    return config_path


def _mode(setup: Setup) -> str:
    if setup.system is not None:
        return "system"
    return "rag" if setup.retriever is not None else "closed-book"


def load_sweep(
    datasets_path: Path,
    setups_path: Path,
    config_path: Path | None,
    skip: Sequence[str],
    environ: Mapping[str, str],
) -> Sweep:
    datasets = load_datasets(datasets_path)
    config = load_config(default_config(setups_path, config_path))
    setups = select_setups(load_setups(setups_path, config, datasets, environ), skip)
    if not setups:
        raise EngineUsageError("--skip leaves no setup to run")
    plan = []
    for dataset in as_datasets(datasets):
        chosen = [s for s in setups.values() if s.covers(dataset.name)]
        if not chosen:
            continue
        entry = BenchmarkEntry(where=f"{datasets_path} ({dataset.name})", dataset=dataset)
        planned = tuple(PlannedSetup(s, ("generation",), _mode(s)) for s in chosen)
        plan.append(PlannedDataset(entry, dataset, dataset.questions, planned))
    if not plan:
        raise EngineError(
            f"no task: no setup covers a dataset of {datasets_path} (check the setups' "
            "`datasets` lists)"
        )
    return Sweep(datasets, config, setups, plan)


def sweep_tasks(plan: Sequence[PlannedDataset]) -> list[Task]:
    """Every task in dataset, question, setup order."""
    tasks = make_tasks(plan, None)
    order = {
        (position, question.id): i
        for position, bench in enumerate(plan)
        for i, question in enumerate(bench.questions)
    }
    setup_order = {
        (position, planned.setup.name): i
        for position, bench in enumerate(plan)
        for i, planned in enumerate(bench.setups)
    }
    return sorted(
        tasks,
        key=lambda t: (
            t.position,
            order[(t.position, t.item)],
            setup_order[(t.position, t.setup_name)],
        ),
    )


def task_count(plan: Sequence[PlannedDataset]) -> int:
    return sum(len(b.questions) * len(b.setups) for b in plan)


def refuse_overwrite(plan: Sequence[PlannedDataset], store: KagStore, output: Path) -> None:
    """Without --continue, finished results are never overwritten: that would lose work."""
    finished = [
        path
        for bench in plan
        for question in bench.questions
        for planned in bench.setups
        if is_finished(path := store.at(bench.name, question.id, planned.setup.name))
    ]
    if finished:
        raise EngineUsageError(
            f"{output} already holds {len(finished)} of these {task_count(plan)} results "
            f"(e.g. {finished[0]}); pass --continue to skip them, or choose another --output "
            "or --prefix"
        )
