"""How a worker process makes a run's `TaskWorker` (see `_executor`): the context's data
(datasets, corpora, rubric, the systems' specs and probes) travels as it is, its models as
their specs and the function that makes them, so each worker process loads each model once
and the driver's LLM objects (open connections) never leave the driver. `judge grade
--executor ray` ships its answers the same way (`grade_remotely`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from lasagna_cli.engine._data import Corpus, Dataset
from lasagna_cli.engine.config._config import JUDGE_MAX_CHARS, ModelSpec
from lasagna_cli.engine.records._store import Record
from lasagna_cli.engine.run._executor import Recipe
from lasagna_cli.engine.run._system_tasks import SystemState
from lasagna_cli.engine.run._tasks import TaskContext, TaskWorker, Work
from lasagna_cli.engine.systems import LoadedSystem, load_system

if TYPE_CHECKING:
    from lasagna_cli.engine.run._executor import Executor, Outcome
    from lasagna_judge import LLM, Grade, Rubric

Role = Literal["generator", "judge"]
MakeLLM = Callable[[ModelSpec, Role], "LLM"]


@dataclass
class SystemsRecipe:
    """A run's systems for a worker: predictions files as read, other systems by their
    spec (loaded again there), and what the driver's probes and checks found."""

    systems: dict[str, LoadedSystem]
    probed: dict[Any, Any]
    checks: dict[Any, Any]
    concurrency: int

    @classmethod
    def of(cls, state: SystemState, concurrency: int) -> SystemsRecipe:
        systems = {
            name: system if system.predictions is not None else replace(system, adapter=None)
            for name, system in state.systems.items()
        }
        return cls(systems, dict(state.probed), dict(state.checks), concurrency)

    async def open(self) -> SystemState:
        systems = {}
        for name, system in self.systems.items():
            loaded = system.predictions is not None
            systems[name] = system if loaded else await load_system(system.spec, self.concurrency)
        return SystemState(systems, dict(self.probed), dict(self.checks))


@dataclass
class ContextRecipe(Recipe[Work, Record]):
    datasets: Sequence[Dataset]
    make: MakeLLM
    generators: Mapping[tuple[str, str], ModelSpec] = field(default_factory=dict)
    judge: ModelSpec | None = None
    rubric: Rubric | None = None
    judge_identity: Mapping[str, Any] | None = None
    databases: Mapping[str, Corpus] = field(default_factory=dict)
    systems: SystemsRecipe | None = None
    judge_max_chars: int = JUDGE_MAX_CHARS
    jury: tuple[ModelSpec, ...] = ()
    _ctx: TaskContext | None = field(default=None, repr=False, compare=False)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_ctx"] = None  # what a worker made stays there
        return state

    async def open(self) -> TaskWorker:
        ctx = TaskContext(
            self.datasets,
            rubric=self.rubric,
            judge_identity=self.judge_identity,
            judge_max_chars=self.judge_max_chars,
            databases=self.databases,
        )
        self._ctx = ctx
        for key, spec in self.generators.items():
            ctx.generators[key] = self.make(spec, "generator")
        if self.judge is not None:
            ctx.judge = self.make(self.judge, "judge")
            ctx.jury = [self.make(spec, "judge") for spec in self.jury]
        if self.systems is not None:
            ctx.systems = await self.systems.open()
        return TaskWorker(ctx)

    async def close(self) -> None:
        ctx, self._ctx = self._ctx, None
        if ctx is None:
            return
        llms = [*ctx.generators.values(), *([ctx.judge] if ctx.judge is not None else [])]
        llms += ctx.jury
        for llm in llms:
            await llm.aclose()
        if ctx.systems is not None:
            await ctx.systems.aclose()


@dataclass
class GradeRecipe(Recipe[int, "Grade"]):
    """`grade_remotely`'s answers for a worker, and the judge `make` builds there once."""

    items: Sequence[Mapping[str, Any]]
    rubric: Rubric
    make: Callable[[], LLM]
    _llm: LLM | None = field(default=None, repr=False)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_llm": None}

    async def open(self) -> Callable[[int], Any]:
        from lasagna_judge import grade_batch

        llm = self._llm = self.make()

        async def grade_one(index: int) -> Grade:
            (found,) = await grade_batch(llm, self.rubric, [self.items[index]], concurrency=1)
            return found

        return grade_one

    async def close(self) -> None:
        if self._llm is not None:
            await self._llm.aclose()
            self._llm = None


class _RemoteGrader:
    """The executor's task function: only its recipe is used, on the workers."""

    def __init__(self, recipe: GradeRecipe) -> None:
        self._recipe = recipe

    async def __call__(self, index: int) -> Grade:
        raise NotImplementedError("graded on the executor's workers, from the recipe")

    def recipe(self) -> GradeRecipe:
        return self._recipe


def grade_remotely(
    executor: Callable[[], Executor], rubric: Rubric, make: Callable[[], LLM]
) -> Callable[[list[dict[str, Any]], Callable[[int, Grade], None]], Awaitable[list[Grade]]]:
    """`lasagna_judge.grade_answers(remote=...)`: every item's grade, in the order given,
    each graded on a worker of the executor `executor()` makes when the grading starts, by
    the judge `make` (picklable) builds there once (the driver's LLM never leaves it), with
    the same isolation as `grade_batch` (a failed call is that answer's error grade)."""

    async def grade(
        items: list[dict[str, Any]], on_grade: Callable[[int, Grade], None]
    ) -> list[Grade]:
        grades: list[Grade | None] = [None] * len(items)

        def on_outcome(outcome: Outcome[int, Grade]) -> None:
            if outcome.error is not None or outcome.result is None:
                raise outcome.error or RuntimeError("no grade")
            grades[outcome.task] = outcome.result
            on_grade(outcome.task, outcome.result)

        recipe = GradeRecipe(items, rubric, make)
        await executor().run(range(len(items)), _RemoteGrader(recipe), on_outcome)
        return [g for g in grades if g is not None]

    return grade
