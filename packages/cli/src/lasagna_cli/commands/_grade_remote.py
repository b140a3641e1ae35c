"""`judge grade --executor ray`: each answer graded on a Ray worker by the judge it makes
once from the command's settings (the driver's LLM never leaves it), in the order given,
with the same isolation as `grade_batch` (a failed call is that answer's error grade)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lasagna_cli.engine.run import Executor, Outcome, Recipe

if TYPE_CHECKING:
    from lasagna_judge import LLM, Grade, Rubric


@dataclass
class GradeRecipe(Recipe[int, "Grade"]):
    items: Sequence[Mapping[str, Any]]
    rubric: Rubric
    llm_settings: Mapping[str, Any]
    """build_llm's arguments: the same judge on every worker."""
    _llm: LLM | None = field(default=None, repr=False)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_llm": None}

    async def open(self) -> Callable[[int], Any]:
        from lasagna_cli.commands._llm import build_llm
        from lasagna_judge import grade_batch

        llm = self._llm = build_llm(**self.llm_settings)

        async def grade_one(index: int) -> Grade:
            (found,) = await grade_batch(llm, self.rubric, [self.items[index]], concurrency=1)
            return found

        return grade_one

    async def close(self) -> None:
        if self._llm is not None:
            await self._llm.aclose()
            self._llm = None


class RemoteGrader:
    """The executor's task function: only its recipe is used, on the workers."""

    def __init__(self, recipe: GradeRecipe) -> None:
        self._recipe = recipe

    async def __call__(self, index: int) -> Grade:
        raise NotImplementedError("graded on the executor's workers, from the recipe")

    def recipe(self) -> GradeRecipe:
        return self._recipe


async def grade_on(
    executor: Executor,
    recipe: GradeRecipe,
    on_grade: Callable[[int, Grade], None],
) -> list[Grade]:
    """Every item's grade, in order."""
    grades: list[Grade | None] = [None] * len(recipe.items)

    def on_outcome(outcome: Outcome[int, Grade]) -> None:
        if outcome.error is not None or outcome.result is None:
            raise outcome.error or RuntimeError("no grade")
        grades[outcome.task] = outcome.result
        on_grade(outcome.task, outcome.result)

    await executor.run(range(len(recipe.items)), RemoteGrader(recipe), on_outcome)
    return [g for g in grades if g is not None]
