"""Summaries of grades: the mean over the answers that got a score, counts by status and
path, tokens, and how many answers came from the cache or from the run's batch. Unparsed
and error grades are counted, never averaged as 0."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from lasagna_judge._grading import GRADE_PATHS, GRADE_STATUSES, Grade


@dataclass(frozen=True)
class GradeSummary:
    """Counts and means over grades. Only grades with a score enter the mean; unparsed and
    error grades are counted, never averaged as 0."""

    n: int
    scored: int
    mean_score: float | None
    score_counts: dict[int, int]
    by_status: dict[str, int]
    by_path: dict[str, int]
    input_tokens: int
    output_tokens: int
    cached: int
    rubric: str = ""
    models: tuple[str, ...] = field(default=())
    batch: int = 0  # answers the batch of the run that graded them answered (not `cached`)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["score_counts"] = {str(k): v for k, v in self.score_counts.items()}
        data["models"] = list(self.models)
        return data


def summarize_grades(grades: Iterable[Grade | Mapping[str, Any]]) -> GradeSummary:
    """Summarise grades (Grade objects or their `to_dict()` rows, e.g. read from JSONL)."""
    rows = [g.to_dict() if isinstance(g, Grade) else g for g in grades]
    scores = [int(r["score"]) for r in rows if r.get("status") == "ok" and _has_score(r)]
    by_status = Counter(str(r.get("status")) for r in rows)
    by_path = Counter(str(r["path"]) for r in rows if r.get("path"))
    rubrics = sorted({f"{r.get('rubric_id')}@{r.get('rubric_version')}" for r in rows})
    return GradeSummary(
        n=len(rows),
        scored=len(scores),
        mean_score=sum(scores) / len(scores) if scores else None,
        score_counts=dict(sorted(Counter(scores).items())),
        by_status={s: by_status.get(s, 0) for s in GRADE_STATUSES}
        | {s: c for s, c in by_status.items() if s not in GRADE_STATUSES},
        by_path={p: by_path.get(p, 0) for p in GRADE_PATHS}
        | {p: c for p, c in by_path.items() if p not in GRADE_PATHS},
        input_tokens=sum(int(r.get("input_tokens") or 0) for r in rows),
        output_tokens=sum(int(r.get("output_tokens") or 0) for r in rows),
        cached=sum(1 for r in rows if r.get("cached")),
        batch=sum(1 for r in rows if r.get("batch") and not r.get("cached")),
        rubric=", ".join(rubrics),
        models=tuple(sorted({str(r.get("model")) for r in rows if r.get("model")})),
    )


def _has_score(row: Mapping[str, Any]) -> bool:
    score = row.get("score")
    return isinstance(score, int | float) and not isinstance(score, bool)
