"""A jury on `benchmark run` (`--judge A --judge B ...`): every answer graded by each judge,
one grade from theirs, by the rule `judge grade`'s jury uses (`lasagna_judge.Verdict`: the
mean of the parsed scores; a failed or unparsed grade is left out and counted, never 0).

A section's `judge` is then the jury's grade: `score` and `status` as a lone judge's are
read (so every report and comparison reads it the same way), `aggregate`, `judges_graded`,
`judges`, the summed tokens, and `jury`: each judge's own grade in the order of the flags.
A regrade (a resumed run whose answers stand) keeps each judge's grade that is still that
judge's (same model, server and rubric, not failed) and asks only the others.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from lasagna_cli.engine._data import Question
from lasagna_cli.engine.config._config import ModelSpec
from lasagna_cli.engine.run._scoring import judge_grade

if TYPE_CHECKING:
    from lasagna_judge import LLM, Rubric


def jury_identity(jury: Sequence[ModelSpec]) -> dict[str, Any]:
    """What a jury adds to the judge's identity (and so to the fingerprint)."""
    from lasagna_judge import JURY_AGGREGATE

    members = [{"model": s.name, **({"endpoint": s.endpoint} if s.endpoint else {})} for s in jury]
    return {"jury": members, "aggregate": JURY_AGGREGATE}


def jury_members(grade: Mapping[str, Any] | None) -> list[Mapping[str, Any]] | None:
    """Each judge's grade of a jury's grade; None for a lone judge's grade."""
    found = grade.get("jury") if isinstance(grade, Mapping) else None
    return [g for g in found if isinstance(g, Mapping)] if isinstance(found, list) else None


def _endpoints(identity: Mapping[str, Any] | None, judges: int) -> list[str | None]:
    identity = identity or {}
    others = [m.get("endpoint") for m in identity.get("jury") or ()]
    found = [identity.get("endpoint"), *others]
    return (found + [None] * judges)[:judges]


def _kept(before: Mapping[str, Any] | None, model: str, endpoint: str | None, rubric: Any) -> Any:
    """A judge's grade the record already holds, if it is still that judge's."""
    previous = jury_members(before)
    if previous is None:
        previous = [before] if isinstance(before, Mapping) else []
    for grade in previous:
        same = (
            grade.get("model") == model
            and grade.get("endpoint") == endpoint
            and grade.get("rubric_id") == rubric.id
            and grade.get("rubric_version") == rubric.version
        )
        if same and grade.get("status") != "error":
            return dict(grade)
    return None


async def jury_grade(
    prediction: str,
    question: Question,
    judges: Sequence[LLM],
    rubric: Rubric,
    identity: Mapping[str, Any] | None,
    max_chars: int,
    before: Mapping[str, Any] | None,
) -> dict[str, Any] | None:
    """The jury's grade of one answer (see the module); None when it has nothing to grade by.
    `identity`: the judge's (its endpoints); `before`: the grade the record holds."""
    from lasagna_judge import GRADE_FIELDS, Grade, Verdict

    endpoints = _endpoints(identity, len(judges))
    kept = [_kept(before, j.model, e, rubric) for j, e in zip(judges, endpoints, strict=True)]
    asked = await asyncio.gather(
        *(
            judge_grade(prediction, question, judge, rubric, max_chars)
            for judge, old in zip(judges, kept, strict=True)
            if old is None
        )
    )
    fresh = iter(asked)
    grades = [old if old is not None else next(fresh) for old in kept]
    if any(g is None for g in grades):  # not gradable: no judge grades it
        return None
    for grade, endpoint in zip(grades, endpoints, strict=True):
        if endpoint is not None and grade is not None:
            grade["endpoint"] = endpoint
    members = [g for g in grades if g is not None]
    # A grade kept from an older record may lack a later field (`batch`): its default.
    verdict = Verdict(tuple(Grade(**{k: g[k] for k in GRADE_FIELDS if k in g}) for g in members))
    found = verdict.to_dict()
    found["jury"] = members
    found["input_tokens"] = sum(int(g.get("input_tokens") or 0) for g in members)
    found["output_tokens"] = sum(int(g.get("output_tokens") or 0) for g in members)
    if found["status"] == "error":  # every judge failed: the first one's reason
        found["error"] = next((g.get("error") for g in members if g.get("error")), None)
    return found
