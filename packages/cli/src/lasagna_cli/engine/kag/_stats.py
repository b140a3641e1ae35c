"""`lasagna benchmark stats`: kag's report over a sweep's result files (or a run folder's
task records), and lasagna's own figures beside it, never instead.

kag's figures (`_kag_metrics`): an MCQ question with an `answer` is graded by the whole
trimmed response against the option id; its files are OK, WRONG or ERR, and TOT counts
them. An MCQ without an `answer` makes its files "skipped"; other questions are not kag's.

lasagna's, under their own names:
- option extraction (lasagna-metrics' `extract_choice`: "(b) ...", "The answer is b"):
  the same files, an answer naming no option "unanswered";
- free-form questions with references (lasagna's DATASETS.json extension): EM and F1
  (SQuAD), and judge grades with `--judge`; errors counted, never scored as 0;
- missing: the questions of a dataset a setup covers (it has results there, or its
  recorded `datasets` list names it) with no result file.
A file named as a result (`<prefix><setup>.json`) that cannot be read (truncated, not
JSON, neither kag shape) is left out of every figure and reported (`Damaged`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from lasagna_cli.engine.kag._datasets import Datasets, dataset_of
from lasagna_cli.engine.kag._kag_metrics import (
    RUST_WHITESPACE,
    Outcome,
    SetupMetrics,
    kag_grade,
    ranked,
    report_json,
)
from lasagna_cli.engine.kag._result_files import Result
from lasagna_cli.engine.kag._result_stats import kag_timing
from lasagna_cli.engine.run._scoring import gradable, score_answer

# -- what each result is --------------------------------------------------------------------

Kind = Literal["graded", "unkeyed", "other"]


def mcq_kind(result: Result) -> Kind:
    """kag's view of the result's question: an MCQ with an answer, one without, or none."""
    if result.recorded is not None:
        return "graded" if result.recorded.keyed else "unkeyed"
    question = result.question
    if question.options is None:
        return "other"
    return "graded" if question.correct_option is not None else "unkeyed"


def kag_correct(result: Result) -> bool:
    assert result.text is not None
    recorded = result.recorded
    if recorded is None:
        assert result.question.correct_option is not None
        return kag_grade(result.text, result.question.correct_option)
    # kag's match (the trimmed response is the answer id) is lasagna's rule 1 of
    # extract_choice, so it is a correct record whose answer is its choice, alone.
    return (
        bool(recorded.correct)
        and recorded.choice is not None
        and kag_grade(result.text.strip(RUST_WHITESPACE), recorded.choice)
    )


def extracted(result: Result) -> Literal["correct", "incorrect", "unanswered"]:
    """lasagna's option extraction of an ok MCQ result."""
    assert result.text is not None
    if result.recorded is not None:
        choice, correct = result.recorded.choice, result.recorded.correct
    else:
        scored = score_answer(result.text, result.question)
        choice, correct = scored.choice, scored.correct
    if choice is None:
        return "unanswered"
    return "correct" if correct else "incorrect"


# -- lasagna's own figures -----------------------------------------------------------------


@dataclass
class Extra:
    """lasagna's counts and sums for one setup, overall or on one dataset."""

    correct: int = 0
    incorrect: int = 0
    unanswered: int = 0
    mcq_errors: int = 0
    free_errors: int = 0
    em: list[float] = field(default_factory=list)
    f1: list[float] = field(default_factory=list)
    grades: list[int] = field(default_factory=list)
    grade_unparsed: int = 0
    grade_errors: int = 0
    missing: int = 0
    retrieval_s: list[float] = field(default_factory=list)

    def add(self, result: Result, grade: Any | None) -> None:
        kind = mcq_kind(result)
        if kind == "unkeyed":
            return
        if result.text is None:
            if kind == "graded":
                self.mcq_errors += 1
            else:
                self.free_errors += 1
            return
        seconds = result.stats.get("retrieval_time_s")
        if isinstance(seconds, int | float) and not isinstance(seconds, bool):
            self.retrieval_s.append(float(seconds))
        if kind == "graded":
            outcome = extracted(result)
            setattr(self, outcome, getattr(self, outcome) + 1)
            return
        scored = score_answer(result.text, result.question)
        if scored.exact_match is None or scored.f1 is None:
            return
        self.em.append(scored.exact_match)
        self.f1.append(scored.f1)
        if grade is not None:
            if grade.status == "ok" and grade.score is not None:
                self.grades.append(int(grade.score))
            elif grade.status == "unparsed":
                self.grade_unparsed += 1
            else:
                self.grade_errors += 1

    def as_json(self, judged: bool) -> dict[str, Any]:
        def mean(values: list[float] | list[int]) -> float | None:
            return sum(values) / len(values) if values else None

        def ratio(a: int, b: int) -> float | None:
            return a / b if b else None

        committed = self.correct + self.incorrect
        total = committed + self.unanswered + self.mcq_errors
        out: dict[str, Any] = {
            "option_extraction": {
                "total": total,
                "correct": self.correct,
                "incorrect": self.incorrect,
                "unanswered": self.unanswered,
                "errors": self.mcq_errors,
                "accuracy": ratio(self.correct, total),
                "precision": ratio(self.correct, committed),
                "coverage": ratio(committed, total),
            },
            "free_form": {
                "scored": len(self.em),
                "errors": self.free_errors,
                "em": mean(self.em),
                "f1": mean(self.f1),
            },
            "missing": self.missing,
            "mean_retrieval_time_s": mean(self.retrieval_s),
        }
        if judged:
            out["judge"] = {
                "scored": len(self.grades),
                "mean_grade": mean(self.grades),
                "unparsed": self.grade_unparsed,
                "errors": self.grade_errors,
            }
        return out


@dataclass
class StatsReport:
    """kag's report (`kag`) and lasagna's figures per setup (`extras`)."""

    datasets: int
    scorable: int
    skipped: int
    kag: dict[str, SetupMetrics]
    extras: dict[str, tuple[Extra, dict[str, Extra]]]
    judged: bool

    def setup_order(self) -> list[str]:
        """kag's ranking, then the setups kag's table leaves out (no graded MCQ), by name."""
        first = [name for name, _ in ranked(self.kag)]
        return first + sorted(set(self.extras) - set(first))

    def as_json(self) -> dict[str, Any]:
        """kag's JSON report, key for key, and lasagna's figures under "lasagna"."""
        out = report_json(self.datasets, self.scorable, self.skipped, self.kag)
        out["lasagna"] = {
            "setups": {
                name: {
                    "overall": self.extras[name][0].as_json(self.judged),
                    "per_dataset": {
                        d: e.as_json(self.judged) for d, e in sorted(self.extras[name][1].items())
                    },
                }
                for name in self.setup_order()
                if name in self.extras
            }
        }
        return out


def _covered(results: list[Result], datasets: Datasets) -> dict[str, set[str]]:
    """The datasets each setup covers: where it has results, or its recorded list."""
    covered: dict[str, set[str]] = {}
    for result in results:
        covered.setdefault(result.setup, set()).add(dataset_of(result.question))
        recorded = result.stats.get("setup")
        if isinstance(recorded, dict) and "datasets" in recorded:
            listed = recorded["datasets"]
            names = datasets.keys() if listed is None else listed
            covered[result.setup].update(n for n in names if n in datasets)
    return covered


def needs_grading(result: Result) -> bool:
    return result.text is not None and mcq_kind(result) == "other" and gradable(result.question)


def scorable_questions(datasets: Datasets, results: list[Result]) -> int:
    """kag's count: the MCQ questions with an answer (a run folder's, as its records say)."""
    keyed = {
        (dataset_of(r.question), r.question.id)
        for r in results
        if r.recorded is not None and r.recorded.keyed
    }
    return len(keyed) + sum(
        1
        for questions in datasets.values()
        for q in questions.values()
        if q.options is not None and q.correct_option is not None
    )


def summarize(
    datasets: Datasets,
    results: list[Result],
    grades: dict[Path, Any] | None = None,
    dataset_count: int | None = None,
) -> StatsReport:
    judged = grades is not None
    grades = grades or {}
    kag: dict[str, SetupMetrics] = {}
    skipped = 0
    extras: dict[str, tuple[Extra, dict[str, Extra]]] = {}
    seen: set[tuple[str, str, str]] = set()
    for result in results:
        dataset = dataset_of(result.question)
        seen.add((result.setup, dataset, result.question.id))
        kind = mcq_kind(result)
        if kind == "unkeyed":
            skipped += 1
        elif kind == "graded":
            metrics = kag.setdefault(result.setup, SetupMetrics())
            if result.text is None:
                metrics.record(dataset, "error", None, None)
            else:
                timing = kag_timing(result.stats)
                outcome: Outcome = "correct" if kag_correct(result) else "incorrect"
                metrics.record(dataset, outcome, timing.timed, timing.retrieval)
        overall, per_dataset = extras.setdefault(result.setup, (Extra(), {}))
        for extra in (overall, per_dataset.setdefault(dataset, Extra())):
            extra.add(result, grades.get(result.path))
    for setup, covered in _covered(results, datasets).items():
        overall, per_dataset = extras[setup]
        for dataset in covered:
            for question in datasets[dataset].values():
                if (setup, dataset, question.id) not in seen:
                    overall.missing += 1
                    per_dataset.setdefault(dataset, Extra()).missing += 1
    return StatsReport(
        datasets=len(datasets) if dataset_count is None else dataset_count,
        scorable=scorable_questions(datasets, results),
        skipped=skipped,
        kag=kag,
        extras=extras,
        judged=judged,
    )
