"""The one runner: tasks in, records out, every door.

Given a plan, it makes the tasks, reads what a store already holds and applies the resume
rule (`_records`), ranks every pending query in one batch (`_rankings`), loads the user's
systems (`_system_tasks`), asks the model provider for the models the pending tasks need,
and hands the tasks to the executor it is given. Each outcome comes back to the runner, the
one writer: the record is written atomically, and the slot is freed only once it is in its
file, so a run killed at any moment loses at most the tasks in flight (`_writer`: a
retrieval-only task's record goes into a batch file; files are flushed to disk in groups).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from lasagna_cli.engine._errors import EngineUsageError
from lasagna_cli.engine._steps import Step, no_step
from lasagna_cli.engine.config._config import ModelSpec, RetrieverSpec
from lasagna_cli.engine.plan._plan import PlannedDataset, Task, judged_fingerprint, make_tasks
from lasagna_cli.engine.records._records import failed_grade, failure_record, resume_status
from lasagna_cli.engine.records._store import Record, RecordStore, read_records
from lasagna_cli.engine.records._writer import Writer
from lasagna_cli.engine.retrieval._rankings import rank_tasks
from lasagna_cli.engine.retrieval._vectors import VectorFacts
from lasagna_cli.engine.run._executor import Executor, Outcome
from lasagna_cli.engine.run._first_calls import FirstCalls
from lasagna_cli.engine.run._options import RunOptions, judge_identity
from lasagna_cli.engine.run._recipe import ContextRecipe, MakeLLM, Role, SystemsRecipe
from lasagna_cli.engine.run._system_tasks import SystemState, settle_systems
from lasagna_cli.engine.run._tasks import TaskContext, TaskWorker, Work

if TYPE_CHECKING:
    from lasagna_judge import LLM, Embedder

Progress = Callable[[str], None]
"""Told "done", "failed" or "skipped" once per task."""


class Reporter(Protocol):
    """How a long job shows its progress; the commands draw it, the engine only reports."""

    def start(self, total: int, description: str) -> None: ...

    def advance(self, status: str) -> None:
        """One task: "done", "failed" or "skipped"."""
        ...


class Models:
    """The LLM objects of a run, one per (provider, model), made on first use inside the
    run's event loop by `make` and closed at its end. `shared()` wraps objects the caller
    owns: they are used as given and never closed."""

    def __init__(
        self,
        make: Callable[[ModelSpec, Role], LLM],
        *,
        owned: bool = True,
        make_embedder: Callable[[RetrieverSpec], Embedder] | None = None,
    ) -> None:
        self._make = make
        self._owned = owned
        self._made: dict[tuple[Role, tuple[str, str]], LLM] = {}
        self._make_embedder = make_embedder
        self._embedders: dict[tuple[Any, ...], Embedder] = {}

    @classmethod
    def shared(
        cls,
        llms: Mapping[str, LLM],
        judge: LLM | None = None,
        embedders: Mapping[str, Embedder] | None = None,
    ) -> Models:
        def pick(spec: ModelSpec, role: Role) -> LLM:
            if role == "judge" and judge is not None:
                return judge
            if spec.name not in llms:
                raise EngineUsageError(
                    f"a setup answers with {spec.name!r}, and no LLM object is given for it: "
                    f"pass llms={{{spec.name!r}: make_llm({spec.name!r})}}"
                )
            return llms[spec.name]

        def embedder(spec: RetrieverSpec) -> Embedder:
            if embedders is None or spec.embedder is None or spec.embedder not in embedders:
                raise EngineUsageError(
                    f"a setup retrieves with the embedder {spec.embedder!r}, and no Embedder "
                    f"is given for it: pass embedders={{{spec.embedder!r}: "
                    f"make_embedder({spec.embedder!r})}}"
                )
            return embedders[spec.embedder]

        return cls(pick, owned=False, make_embedder=embedder)

    @property
    def make(self) -> MakeLLM:
        """How these models are made: what a worker process makes its own with."""
        return self._make

    def get(self, spec: ModelSpec, role: Role) -> LLM:
        key = (role, spec.key)
        if key not in self._made:
            self._made[key] = self._make(spec, role)
        return self._made[key]

    def embedder(self, spec: RetrieverSpec) -> Embedder:
        """The embedder of a dense or hybrid retriever, one per (name, server, dimensions)."""
        key = (spec.embedder, spec.embedder_endpoint, spec.dimensions)
        if key not in self._embedders:
            if self._make_embedder is None:
                raise EngineUsageError("a dense retriever needs an embedder; none can be made")
            self._embedders[key] = self._make_embedder(spec)
        return self._embedders[key]

    async def aclose(self) -> None:
        if self._owned:
            for llm in self._made.values():
                await llm.aclose()
            for embedder in self._embedders.values():
                await embedder.aclose()
        self._made.clear()
        self._embedders.clear()


@dataclass
class RunOutcome:
    plan: list[PlannedDataset]
    tasks: list[Task]
    records: dict[int, Record | None]
    """Task index -> its record after the run (None: it never ran)."""
    paths: list[Path]
    finished_before: int
    done: int = 0
    failed: int = 0
    failures: list[tuple[Task, str]] = field(default_factory=list)
    reused: set[int] = field(default_factory=set)
    """The tasks whose records were kept as they were."""
    indexes: dict[str, VectorFacts] = field(default_factory=dict)
    """The dense indexes this run used, by corpus label: dimension, tokens, seconds."""


async def prepare(
    plan: Sequence[PlannedDataset], options: RunOptions, state: SystemState, say: Progress
) -> list[PlannedDataset]:
    """The plan with every system setup's tracks settled (systems loaded, probed)."""
    if any(p.setup.system is not None for b in plan for p in b.setups):
        return await settle_systems(
            plan, options.concurrency, state, probe=options.probe_systems, say=say
        )
    return list(plan)


def plan_tasks(plan: Sequence[PlannedDataset], options: RunOptions) -> list[Task]:
    return make_tasks(plan, judge_identity(options))


async def execute(
    plan: Sequence[PlannedDataset],
    tasks: Sequence[Task],
    store: RecordStore,
    executor: Executor,
    models: Models,
    options: RunOptions,
    state: SystemState,
    *,
    on_progress: Progress = lambda status: None,
    on_failure: Callable[[Path, str], None] = lambda path, error: None,
    say: Progress = lambda line: None,
    before_start: Callable[[int, int], None] = lambda finished, total: None,
    on_step: Step = no_step,
) -> RunOutcome:
    """Run what the store does not already hold; see the module docstring."""
    paths = [store.path(t) for t in tasks]
    existing = read_records(store, paths) if options.resume else [None] * len(tasks)
    statuses = [
        resume_status(r, t, retry_failed=options.retry_failed)
        for r, t in zip(existing, tasks, strict=True)
    ]
    outcome = RunOutcome(
        list(plan),
        list(tasks),
        dict(enumerate(existing)),
        paths,
        finished_before=statuses.count("done"),
        reused={i for i, status in enumerate(statuses) if status == "done"},
    )
    before_start(outcome.finished_before, len(tasks))
    to_run = [i for i, s in enumerate(statuses) if s == "run"]
    to_grade = [i for i, s in enumerate(statuses) if s == "grade"]
    for _ in range(outcome.finished_before):
        on_progress("skipped")
    if not to_run and not to_grade:
        return outcome

    datasets = [b.dataset for b in plan]
    ctx = TaskContext(datasets, systems=state, databases=options.databases)
    ctx.judge_max_chars = options.judge_max_chars
    identity = judge_identity(options)
    # Models first: a missing key is refused before an index is built.
    answering = [tasks[i] for i in to_run if tasks[i].planned.answers]
    generators: dict[tuple[str, str], ModelSpec] = {}
    for task in answering:
        spec = task.setup.generator
        if spec is not None and task.setup.system is None and spec.key not in ctx.generators:
            ctx.generators[spec.key] = models.get(spec, "generator")
            generators[spec.key] = spec
    judge = None
    if identity is not None and options.judge is not None and (answering or to_grade):
        judge = ModelSpec(options.judge)
        ctx.judge = models.get(judge, "judge")
        ctx.jury = [models.get(spec, "judge") for spec in options.jury]
        ctx.rubric = options.rubric
        ctx.judge_identity = identity
    ranked, outcome.indexes = await rank_tasks(
        [tasks[i] for i in to_run],
        ctx.corpus,
        lambda t: _corpus_label(t, plan),
        say,
        embedder_of=models.embedder,
        vector_folder=options.vector_folder,
        per_document=options.ingest_per_document,
        on_step=on_step,
    )
    for i, task in zip(to_run, ranked, strict=True):
        outcome.tasks[i] = task

    work = [Work(i, outcome.tasks[i]) for i in to_run]
    work += [Work(i, outcome.tasks[i], existing[i]) for i in to_grade]
    work.sort(key=lambda w: w.index)
    recipe = ContextRecipe(
        ctx.datasets,
        models.make,
        generators,
        judge,
        ctx.rubric,
        ctx.judge_identity,
        ctx.databases,
        SystemsRecipe.of(state, options.concurrency) if state.systems else None,
        options.judge_max_chars,
        jury=options.jury if judge is not None else (),
    )
    worker = TaskWorker(ctx, recipe)

    def batched(work: Work) -> bool:
        task = outcome.tasks[work.index]
        return store.batched and work.regrade is None and not _calls_out(task, judge is not None)

    first_calls = FirstCalls() if options.probe_systems else None
    async with Writer(files=sum(1 for w in work if not batched(w))) as writer:

        async def on_outcome(result: Outcome[Work, Record]) -> None:
            i = result.task.index
            record = result.result if result.error is None else None
            if record is None:
                record = failure_record(outcome.tasks[i], result.error or RuntimeError("no record"))
            task = outcome.tasks[i]
            outcome.records[i] = record

            def count() -> None:
                _count(outcome, task, paths[i], record, on_progress, on_failure)

            if batched(result.task):
                await writer.queue(paths[i], store.encode(record), count)
            else:
                await writer.write(paths[i], store.encode(record))
                count()
            calls_model = task.planned.answers or result.task.regrade is not None
            if first_calls is not None and calls_model:
                first_calls.see(result.error, result.result)  # after the record is kept

        await executor.run(work, worker, on_outcome)
    return outcome


def _calls_out(task: Task, judged: bool) -> bool:
    """Whether a task calls a model or a user's system (else its record can be batched): a
    predictions file's answer is read, not asked for, so only a judge makes it call out."""
    system = task.setup.system
    if system is not None and system.kind != "predictions":
        return True
    return task.planned.answers and (system is None or judged)


def _count(
    outcome: RunOutcome,
    task: Task | None,
    path: Path,
    record: Record,
    on_progress: Progress,
    on_failure: Callable[[Path, str], None],
) -> None:
    error = record.get("error")
    if error is None:
        outcome.done += 1
        on_progress("done")
        return
    outcome.failed += 1
    if task is not None:
        outcome.failures.append((task, str(error)))
    on_failure(path, str(error))
    on_progress("failed")


async def grade_records(
    graded: Sequence[tuple[Record, Path, Record | None]],
    store: RecordStore,
    executor: Executor,
    ctx: TaskContext,
    models: Models,
    judge: ModelSpec | None,
    *,
    retry_failed: bool = True,
    on_progress: Progress = lambda status: None,
) -> RunOutcome:
    """Grade answer records (the staged pipeline's eval): each `(answer record, where its
    graded record goes, the graded record there now)`; a graded record whose fingerprint
    says these answers and this judge, with no failed grade, is kept. `ctx` holds the judge
    `models` made from the spec `judge` (from which a cluster's workers make their own)."""
    identity = ctx.judge_identity if ctx.judge is not None else None
    outcome = RunOutcome([], [], {}, [p for _, p, _ in graded], finished_before=0)
    pending = []
    for i, (record, _path, before) in enumerate(graded):
        wanted = judged_fingerprint(str(record.get("answer_fingerprint")), identity)
        current = before is not None and before.get("fingerprint") == wanted
        if current and not (retry_failed and failed_grade(before or {})):
            outcome.records[i] = before
            outcome.finished_before += 1
            outcome.reused.add(i)
            on_progress("skipped")
        else:
            pending.append(i)

    recipe = ContextRecipe(
        [], models.make, judge=judge, rubric=ctx.rubric, judge_identity=ctx.judge_identity,
        judge_max_chars=ctx.judge_max_chars,
    )  # fmt: skip
    worker = TaskWorker(ctx, recipe)

    async with Writer(files=len(pending)) as writer:

        async def on_outcome(result: Outcome[Work, Record]) -> None:
            i = result.task.index
            if result.error is not None or result.result is None:
                raise result.error or RuntimeError("no record")
            await writer.write(graded[i][1], store.encode(result.result))
            outcome.records[i] = result.result
            _count(outcome, None, graded[i][1], result.result, on_progress, lambda p, e: None)

        await executor.run([Work(i, None, graded[i][0]) for i in pending], worker, on_outcome)
    return outcome


def _corpus_label(task: Task, plan: Sequence[PlannedDataset]) -> str:
    database = task.setup.database
    if database is not None:
        return f"database {database.name}"
    bench = plan[task.position]
    if bench.dataset.documents is None:
        return bench.name
    chunking = task.setup.chunking
    overlap = f", overlap {chunking.overlap}" if chunking.overlap else ""
    return f"{bench.name} ({chunking.chunker} {chunking.size}{overlap})"
