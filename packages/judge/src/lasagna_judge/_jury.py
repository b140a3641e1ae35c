"""A jury: every answer graded by several judges, one grade from theirs, and how far they
agree.

- Each judge grades every answer as `grade_batch` does (its own cache, retries, refusal
  rule and failure states); the judges run at once.
- The jury's grade of an answer is the mean of the scores of the judges whose grade parsed
  (`JURY_AGGREGATE`). A judge that failed or did not parse is left out of that mean and counted
  (`graded` of `judges`), never read as 0; with no parsed grade, the verdict has no score
  and the status of its judges' failure ("unparsed" when any judge's reply did not parse,
  else "error").
- Agreement is Krippendorff's alpha at the interval level (the scores are numbers whose
  differences mean something: 0/4, 0-4; for two values it equals the nominal alpha), over
  the answers at least two judges graded (`lasagna_metrics.krippendorff_alpha`).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from lasagna_judge._errors import JudgeError
from lasagna_judge._grading import Grade, grade_batch
from lasagna_judge._llm import LLM
from lasagna_judge._rubrics import Rubric

JURY_AGGREGATE = "mean"
"""How a jury's grade is made from its judges' parsed scores."""
AGREEMENT = "Krippendorff's alpha (interval)"


@dataclass(frozen=True)
class Verdict:
    """One answer's grades, one per judge in the jury's order, and the jury's grade."""

    grades: tuple[Grade, ...]

    @property
    def scores(self) -> list[float | None]:
        """Each judge's score, None where its grade has none."""
        return [float(g.score) if g.status == "ok" and g.score is not None else None
                for g in self.grades]  # fmt: skip

    @property
    def graded(self) -> int:
        """How many judges gave a score."""
        return sum(1 for s in self.scores if s is not None)

    @property
    def score(self) -> float | None:
        """The jury's grade: the mean of the judges' scores, None when none has one."""
        found = [s for s in self.scores if s is not None]
        return math.fsum(found) / len(found) if found else None

    @property
    def status(self) -> str:
        """ok with a score; else unparsed when a judge's reply did not parse, else error."""
        if self.graded:
            return "ok"
        return "unparsed" if any(g.status == "unparsed" for g in self.grades) else "error"

    def to_dict(self) -> dict[str, Any]:
        """The jury's fields, JSON-ready: its grade and status, and each judge's grade."""
        return {
            "score": self.score,
            "status": self.status,
            "aggregate": JURY_AGGREGATE,
            "judges_graded": self.graded,
            "judges": len(self.grades),
            "jury": [g.to_dict() for g in self.grades],
        }


@dataclass(frozen=True)
class JuryAgreement:
    """How far a jury's judges agree over their verdicts."""

    alpha: float | None
    """None when undefined: fewer than two pairable grades, or all of them equal."""
    answers: int
    """The answers at least two judges graded (the ones alpha is computed over)."""
    measure: str = AGREEMENT


def jury_agreement(verdicts: Sequence[Verdict]) -> JuryAgreement:
    """Krippendorff's alpha of the judges' scores over the verdicts (see the module)."""
    from lasagna_metrics import krippendorff_alpha

    if not verdicts:
        return JuryAgreement(None, 0)
    judges = len(verdicts[0].grades)
    ratings = [[v.scores[j] for v in verdicts] for j in range(judges)]
    return JuryAgreement(
        krippendorff_alpha(ratings, "interval"), sum(1 for v in verdicts if v.graded >= 2)
    )


async def grade_jury(
    judges: Sequence[LLM],
    rubric: Rubric,
    items: Sequence[object],
    *,
    concurrency: int = 8,
    on_grade: Callable[[int, int, Grade], None] | None = None,
) -> list[Verdict]:
    """Grade every item with every judge (all judges at once, `concurrency` items in flight
    for each); the verdicts are in the order of `items`. `on_grade(judge, index, grade)` is
    called as each grade finishes."""
    if len(judges) < 2:
        raise JudgeError(f"a jury needs at least two judges, found {len(judges)}")

    def callback(judge: int) -> Callable[[int, Grade], None] | None:
        if on_grade is None:
            return None
        return lambda index, grade: on_grade(judge, index, grade)

    found = await asyncio.gather(
        *(
            grade_batch(llm, rubric, items, concurrency=concurrency, on_grade=callback(j))
            for j, llm in enumerate(judges)
        )
    )
    return [Verdict(tuple(per_judge[i] for per_judge in found)) for i in range(len(items))]
