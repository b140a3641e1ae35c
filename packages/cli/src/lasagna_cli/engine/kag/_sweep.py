"""kag's `benchmark sweep` as a door of the one runner: DATASETS.json + SETUPS.toml +
config.toml to a plan, run in kag's result-file layout.

Each (dataset, question, setup) is a task, in that order; a setup meets only the datasets
it lists. Everything is read and checked before any model is called. Without `resume`, a
folder that already holds some of these results is refused rather than overwritten; with
it, finished results are kept and failed ones too unless `retry_failed` (kag's
`--retry-errors`). With `missing_as_errors` (kag's behaviour), a setup naming a provider,
retriever or database the config lacks is not an error of the file: each of its tasks is
recorded as `{"error": ...}` and the other setups run. A setup whose retriever needs Neo4j
(kag's Embedder retrievers and Neo4j databases) is always recorded so: lasagna cannot reach
a Neo4j server.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from lasagna_cli.engine._data import Corpus
from lasagna_cli.engine._errors import EngineError, EngineUsageError
from lasagna_cli.engine.config._build import Servers, with_embedder_endpoint
from lasagna_cli.engine.config._config import BUILTIN_PROVIDERS, BenchmarkEntry, DatabaseSpec, Setup
from lasagna_cli.engine.datasets import chunk_rule, cut_documents
from lasagna_cli.engine.kag._config import Config, load_config
from lasagna_cli.engine.kag._datasets import Datasets, as_datasets, load_datasets
from lasagna_cli.engine.kag._results import KagStore
from lasagna_cli.engine.kag._setups import BrokenSetup, load_setups, select_setups
from lasagna_cli.engine.plan._plan import PlannedDataset, PlannedSetup, Task, make_tasks
from lasagna_cli.engine.records._folder_lock import FolderLock
from lasagna_cli.engine.records._store import (
    check_writable,
    dump_task_json,
    is_finished,
    remove_stale_temp_files,
    write_bytes_atomic,
)
from lasagna_cli.engine.run._executor import Executor
from lasagna_cli.engine.run._options import RunOptions
from lasagna_cli.engine.run._runner import Models, execute, prepare
from lasagna_cli.engine.run._system_tasks import SystemState
from lasagna_synth import Chunker


@dataclass
class Sweep:
    """A sweep's inputs, read and checked."""

    datasets: Datasets
    config: Config
    setups: dict[str, Setup]
    plan: list[PlannedDataset]
    broken: dict[str, BrokenSetup] = field(default_factory=dict)
    """Setups naming a component the config lacks (with `missing_as_errors` only)."""
    notes: list[str] = field(default_factory=list)
    """What the user is told before the run (a file() read beside the setups file)."""

    def located(self, servers: Servers) -> Sweep:
        """The sweep with each built-in provider's model at the server its calls go to
        (`servers`: OPENAI_BASE_URL, ...), and each embedder at its own: recorded in the
        result files, part of their fingerprint. A config.toml provider names its own
        `base_url`, recorded as it is."""

        def at_server(setup: Setup) -> Setup:
            setup = with_embedder_endpoint(setup, servers)
            model = setup.generator
            if model is None or model.provider is None:
                return setup
            if model.provider != BUILTIN_PROVIDERS.get(model.provider.name):
                return setup
            endpoint = servers.endpoint_at(model.name, None)
            return replace(setup, generator=replace(model, endpoint=endpoint))

        setups = {name: at_server(s) for name, s in self.setups.items()}
        plan = [
            replace(b, setups=tuple(replace(p, setup=setups[p.setup.name]) for p in b.setups))
            for b in self.plan
        ]
        return Sweep(self.datasets, self.config, setups, plan, self.broken, self.notes)

    @property
    def key_variables(self) -> set[str]:
        """The variables config.toml's providers read their keys from (`api_key_env`)."""
        models = [s.generator for s in self.setups.values() if s.generator is not None]
        return {
            m.provider.api_key_env
            for m in models
            if m.provider is not None and m.provider.api_key_env
        }


def check_prefix(prefix: str) -> None:
    if prefix and ("/" in prefix or "\\" in prefix or prefix.startswith(".") or "\x00" in prefix):
        raise EngineUsageError(
            f"--prefix: expected a file-name prefix without path separators or a leading dot, "
            f"found {prefix!r}"
        )


DEFAULT_CONFIG = Path("config.toml")


def default_config(setups_path: Path, config_path: Path | None) -> Path | None:
    """The config file: as given; else config.toml in the working directory, as kag's
    default; else config.toml beside the setups file; else none (built-in providers)."""
    if config_path is not None:
        return config_path
    for candidate in (DEFAULT_CONFIG, setups_path.parent / DEFAULT_CONFIG):
        if candidate.is_file():
            return candidate
    return None


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
    *,
    missing_as_errors: bool = False,
) -> Sweep:
    datasets = load_datasets(datasets_path)
    chosen_config = default_config(setups_path, config_path)
    config = load_config(chosen_config, environ, folders=[setups_path.parent])
    notes: list[str] = []
    found: dict[str, BrokenSetup] = {}
    loaded = load_setups(
        setups_path,
        config,
        datasets,
        environ,
        notes,
        found,
        missing_as_errors=missing_as_errors,
        folders=[chosen_config.parent] if chosen_config is not None else [],
    )
    broken = {n: b for n, b in found.items() if n not in skip}
    setups = select_setups(loaded, [n for n in skip if n not in found])
    if not setups and not broken:
        raise EngineUsageError("--skip leaves no setup to run")
    plan = []
    for dataset in as_datasets(datasets):
        chosen = [s for s in setups.values() if s.covers(dataset.name)]
        if not chosen:
            continue
        entry = BenchmarkEntry(where=f"{datasets_path} ({dataset.name})", dataset=dataset)
        planned = tuple(PlannedSetup(s, ("generation",), _mode(s)) for s in chosen)
        plan.append(PlannedDataset(entry, dataset, dataset.questions, planned))
    sweep = Sweep(datasets, config, setups, plan, broken, notes)
    if not plan and not broken_tasks(sweep):
        raise EngineError(
            f"no task: no setup covers a dataset of {datasets_path} (check the setups' "
            "`datasets` lists)"
        )
    return sweep


def broken_tasks(sweep: Sweep) -> list[tuple[str, str, BrokenSetup]]:
    """(dataset, question, setup) of every task of a broken setup, in kag's order."""
    return [
        (dataset, question, broken)
        for dataset, questions in sweep.datasets.items()
        for question in questions
        for broken in sweep.broken.values()
        if broken.datasets is None or dataset in broken.datasets
    ]


def record_broken(sweep: Sweep, store: KagStore, resume: bool) -> int:
    """Write the `{"error": ...}` file of every task of a broken setup (with `resume`, not
    over a finished one, as kag's --continue); returns how many were written."""
    written = 0
    for dataset, question, broken in broken_tasks(sweep):
        path = store.at(dataset, question, broken.name)
        if resume and is_finished(path):
            continue
        write_bytes_atomic(path, dump_task_json({"error": broken.error}))
        written += 1
    return written


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


def refuse_overwrite(sweep: Sweep, store: KagStore, output: Path) -> None:
    """Without --continue or --overwrite, finished results are never overwritten: that
    would lose work (kag overwrites them)."""
    broken = broken_tasks(sweep)
    total = task_count(sweep.plan) + len(broken)
    # A dataset folder that does not exist holds no result: a new --output stats nothing.
    names = {bench.name for bench in sweep.plan} | {dataset for dataset, _, _ in broken}
    held = {name for name in names if (output / name).is_dir()}
    paths = [
        store.at(bench.name, question.id, planned.setup.name)
        for bench in sweep.plan
        if bench.name in held
        for question in bench.questions
        for planned in bench.setups
    ]
    paths += [store.at(d, q, b.name) for d, q, b in broken if d in held]
    finished = [path for path in paths if is_finished(path)]
    if finished:
        raise EngineUsageError(
            f"{output} already holds {len(finished)} of these {total} results "
            f"(e.g. {finished[0]}); lasagna does not overwrite them as kag does: pass "
            "--continue to skip them, --overwrite to run them again (kag's behaviour), or "
            "choose another --output or --prefix"
        )


def check_sweep_options(
    output: Path, prefix: str, *, resume: bool, retry_failed: bool, overwrite: bool
) -> None:
    """The sweep's options that contradict each other or cannot name a result file,
    refused before any file is read."""
    if retry_failed and not resume:
        raise EngineUsageError("--retry-errors goes with --continue")
    if overwrite and resume:
        raise EngineUsageError(
            "--overwrite runs every task again and --continue keeps finished ones; choose one"
        )
    check_prefix(prefix)
    if output.exists() and not output.is_dir():
        raise EngineUsageError(f"--output {output}: exists and is not a folder; choose another")


@dataclass(frozen=True)
class SweepOutcome:
    """What a sweep came to, task by task: the command says it and chooses its exit code."""

    total: int
    done: int = 0
    failed: int = 0
    skipped: int = 0
    seconds: float = 0.0
    nothing_to_do: bool = False
    """Every result was there already: no task ran and none was written."""
    interrupted: bool = False
    """Ctrl-C ended it; the finished results are whole and kept (`resume` goes on)."""

    def lines(self, output: Path) -> list[str]:
        """What the sweep came to, for its closing lines: nothing to do, or the counts and
        the rate, then why it stopped (interrupted) or how to run the failed tasks again."""
        if self.nothing_to_do:
            return [f"nothing to do: all {self.total} results exist in {output}"]
        ran = self.done + self.failed
        rate = ran / self.seconds if self.seconds > 0 else 0.0
        lines = [
            f"sweep: {self.done} done, {self.failed} failed, {self.skipped} skipped "
            f"of {self.total} tasks in {self.seconds:.1f} s ({rate:.1f} tasks/s); "
            f"results in {output}"
        ]
        if self.interrupted:
            lines.append("interrupted: finished results are kept; resume with --continue")
        elif self.failed:
            lines.append(
                f'{self.failed} tasks failed (recorded as {{"error": ...}}); run them again '
                "with --continue --retry-errors"
            )
        return lines


def run_sweep(
    sweep: Sweep,
    output: Path,
    prefix: str = "",
    *,
    executor: Executor,
    models: Models,
    resume: bool = False,
    retry_failed: bool = False,
    overwrite: bool = False,
    vector_folder: Path | None = None,
    say: Callable[[str], None] = lambda line: None,
    on_start: Callable[[int, str], None] = lambda total, description: None,
    on_progress: Callable[[str], None] = lambda status: None,
    on_failure: Callable[[Path, str], None] = lambda path, error: None,
) -> SweepOutcome:
    """Run every task of `sweep` into kag's result files under `output`, as `benchmark
    sweep` does, and count what came of them.

    Finished results are refused rather than overwritten unless `resume` (kept; failed ones
    too unless `retry_failed`) or `overwrite`. The folder is locked for the sweep (a second
    sweep there would pay for every call again), and temporary files an interrupted sweep
    left behind are removed first. A broken setup's tasks are recorded as errors and counted
    as failed. Blocking: it runs its own event loop; Ctrl-C ends it as an outcome
    (`interrupted`), not an exception, so the counts so far come back.
    """
    from lasagna_synth import run_blocking

    check_sweep_options(
        output, prefix, resume=resume, retry_failed=retry_failed, overwrite=overwrite
    )
    store = KagStore(output, prefix, sweep.setups)
    broken = len(broken_tasks(sweep))
    total = task_count(sweep.plan) + broken
    if not resume and not overwrite:
        refuse_overwrite(sweep, store, output)
    check_writable(output, f"--output {output}")
    counts = {"done": 0, "failed": 0, "skipped": 0}

    def advance(status: str) -> None:
        counts[status] += 1
        on_progress(status)

    nothing = [False]
    # Held until the sweep ends: a second sweep in this folder would pay for every call again.
    with FolderLock(output, f"--output {output}"):
        # Only the sweep's own folders: the output may be the working directory.
        removed = sum(remove_stale_temp_files(output / b.name) for b in sweep.plan)
        if removed:
            say(f"removed {removed} temporary files left by an interrupted sweep")
        options = RunOptions(
            resume=resume,
            retry_failed=retry_failed,
            probe_systems=False,
            concurrency=executor.concurrency,
            vector_folder=vector_folder,
        )

        async def main() -> None:
            state = SystemState()
            try:
                written = record_broken(sweep, store, resume) if broken else 0
                if broken:
                    for _ in range(written):
                        advance("failed")
                    for _ in range(broken - written):
                        advance("skipped")
                    for setup in sweep.broken.values():
                        say(f"setup {setup.name}: {setup.error} (recorded)")
                if not sweep.plan:
                    nothing[0] = written == 0
                    return
                plan = await prepare(sweep.plan, options, state, lambda line: None)
                databases = {
                    s.database.name: s.database for s in sweep.setups.values() if s.database
                }
                if databases:
                    say(f"indexing {len(databases)} database(s)...")
                options.databases = load_databases(databases.values())

                def started(finished: int, total: int) -> None:
                    nothing[0] = finished == total and written == 0

                await execute(
                    plan,
                    sweep_tasks(plan),
                    store,
                    executor,
                    models,
                    options,
                    state,
                    on_progress=advance,
                    on_failure=on_failure,
                    say=lambda line: None,
                    before_start=started,
                )
            finally:
                await models.aclose()
                await state.aclose()

        on_start(total, "sweep")
        start = time.perf_counter()
        interrupted = False
        try:
            run_blocking(main)
        except KeyboardInterrupt:
            interrupted = True
        return SweepOutcome(
            total,
            **counts,
            seconds=time.perf_counter() - start,
            nothing_to_do=nothing[0] and not interrupted,
            interrupted=interrupted,
        )


# -- the databases ----------------------------------------------------------------------------
#
# kag's databases, loaded once per sweep (never per task) into the engine's one corpus model.
#
# A `documents` database is a folder read by lasagna-synth's loaders and cut into passages by
# the engine's one chunking rule (`datasets._passages`: passage ids `<doc>#<i>`); a `beir`
# database is the corpus of a BEIR folder. The runner indexes each once for every setup that
# names it.


def database_corpus(database: DatabaseSpec) -> Corpus:
    """The database's passages, `{passage id: text}` in corpus order."""
    if database.kind == "beir":
        from lasagna_synth import DataError, SynthUsageError, load_data

        try:
            # Only the corpus is searched: judgments naming ids the folder lacks do not matter.
            data = load_data(database.path, drop_unknown_judgments=True)
        except (DataError, SynthUsageError) as exc:  # config.toml's content: exit 1
            raise EngineError(f"database {database.name!r}: {exc}") from None
        texts = dict(data.corpus)
        return Corpus(texts=texts, provenance="native", titled=True)
    from lasagna_synth import load_corpus

    corpus = load_corpus(database.path)
    chunker: Chunker = "sentences" if database.chunker == "sentences" else "fixed"
    ids, doc_ids, chunks = cut_documents(
        ((doc.id, doc.text) for doc in corpus.documents), chunker, database.chunk_words
    )
    if not ids:
        raise EngineError(
            f"database {database.name!r}: no passage in {database.path}; check the folder "
            "(supported documents, not empty)"
        )
    return Corpus(
        texts=dict(zip(ids, chunks, strict=True)),
        provenance="native",
        document_of=dict(zip(ids, doc_ids, strict=True)),
        rule=chunk_rule(chunker, database.chunk_words),
    )


def load_databases(databases: Iterable[DatabaseSpec]) -> dict[str, Corpus]:
    """One corpus per distinct database, in the order first named."""
    found: dict[str, Corpus] = {}
    for database in databases:
        if database.name not in found:
            found[database.name] = database_corpus(database)
    return found
