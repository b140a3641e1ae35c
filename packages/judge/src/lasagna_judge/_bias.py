"""Is the judge swayed by what should not matter? Two checks on a seeded sample of graded
answers, each a second grading of a changed copy of the item, compared with its grade:

- verbosity: the answer padded with filler that adds nothing (`BIAS_FILLER`). A judge that
  grades the padded answer higher rewards length.
- reference order: the references in reverse order (only items with two or more). A judge
  whose grade moves with the order reads position, not content.

A pair counts only when both grades parsed (the others are `skipped`, never counted as a
change or as none). The checks cost one call per sampled item each, and are cached like
every grade.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from lasagna_judge._errors import JudgeError
from lasagna_judge._grading import Grade, check_items, grade_batch
from lasagna_judge._llm import LLM
from lasagna_judge._rubrics import Rubric

BIAS_FILLER = (
    " To be thorough, this answer was reached after careful consideration of the question "
    "and of everything relevant to it, and it is stated here as clearly as it can be."
)
"""What the verbosity check appends to an answer: words that add nothing to it."""
CHECKS = ("verbosity", "reference order")


@dataclass(frozen=True)
class BiasCheck:
    """How often one change to the items moved the judge's grade."""

    name: str
    """"verbosity" or "reference order"."""
    sampled: int
    """Items the check applied to."""
    compared: int
    """Of those, the ones both grades parsed for."""
    changed: int
    higher: int
    """Changed to a higher grade (for verbosity: the padded answer graded up)."""
    lower: int

    @property
    def share_changed(self) -> float | None:
        """changed / compared; None when nothing could be compared."""
        return self.changed / self.compared if self.compared else None


def sample_indices(total: int, size: int, seed: int) -> list[int]:
    """Which of `total` items a check of `size` looks at, the same for the same seed."""
    return sorted(random.Random(seed).sample(range(total), min(size, total)))


async def check_bias(
    llm: LLM,
    rubric: Rubric,
    items: Sequence[object],
    grades: Sequence[Grade],
    *,
    sample: int,
    seed: int = 42,
    concurrency: int = 8,
) -> list[BiasCheck]:
    """Both checks on a sample of `items`, against their `grades` (in the items' order)."""
    if sample < 1:
        raise JudgeError(f"a bias check needs a sample of at least 1, got {sample}")
    if len(grades) != len(items):
        raise JudgeError(
            f"expected a grade for each of the {len(items)} items, found {len(grades)}"
        )
    checked = check_items(items)
    # An answer the refusal rule graded had no judge to sway: it is not sampled.
    judged = [i for i, g in enumerate(grades) if g.path != "refusal-heuristic"]
    padded: list[tuple[int, tuple[str, list[str], str]]] = []
    reordered: list[tuple[int, tuple[str, list[str], str]]] = []
    for i in (judged[j] for j in sample_indices(len(judged), sample, seed)):
        question, refs, prediction = checked[i]
        padded.append((i, (question, refs, prediction + BIAS_FILLER)))
        if len(refs) >= 2:
            reordered.append((i, (question, refs[::-1], prediction)))
    found = []
    for name, variants in zip(CHECKS, (padded, reordered), strict=True):
        again = await grade_batch(
            llm,
            rubric,
            [{"question": q, "references": r, "prediction": p} for _, (q, r, p) in variants],
            concurrency=concurrency,
        )
        pairs = [
            (first, second)
            for (i, _), g in zip(variants, again, strict=True)
            if (first := _score(grades[i])) is not None and (second := _score(g)) is not None
        ]
        found.append(
            BiasCheck(
                name=name,
                sampled=len(variants),
                compared=len(pairs),
                changed=sum(1 for a, b in pairs if a != b),
                higher=sum(1 for a, b in pairs if b > a),
                lower=sum(1 for a, b in pairs if b < a),
            )
        )
    return found


def _score(grade: Grade) -> int | None:
    return grade.score if grade.status == "ok" else None
