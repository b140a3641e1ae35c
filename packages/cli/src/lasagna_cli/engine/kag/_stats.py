"""`lasagna benchmark stats`: grade and summarise a sweep's result folder.

MCQ questions with an answer are graded by the option id the result picks (trimmed,
case-insensitive, also read from "(b) ..." or "b) ..." and "The answer is b" through
lasagna-metrics' `extract_choice`):
- correct / incorrect: the result picks the right / another option;
- unanswered: an ok result that names no option; errors and missing results count in the
  total but are neither correct nor incorrect.
ACC = correct / total, PREC = correct / (correct + incorrect),
COVER = (correct + incorrect) / total.
Free-form questions with reference answers get EM and F1 (SQuAD v2.0), averaged over the
ok results; errors and missing results are counted, never scored as 0. The same holds
for judge grades.
A setup covers a dataset when it has results there or its recorded `datasets` list names
it; a question it covers without a result file is "skipped".
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lasagna_cli.engine._data import Question
from lasagna_cli.engine._scoring import gradable, score_answer
from lasagna_cli.engine.kag._datasets import Datasets, dataset_of
from lasagna_cli.engine.kag._names import is_component_name
from lasagna_cli.engine.kag._store import decode_result
from lasagna_synth import TEMP_PREFIX


@dataclass(frozen=True, slots=True)
class Result:
    question: Question
    setup: str
    path: Path
    text: str | None
    """The answer, None for an error (or an unreadable file)."""
    error: str | None
    stats: dict[str, Any]


def read_result(path: Path, question: Question, setup: str) -> Result | None:
    """The result in a file; None when it is not a result file (not JSON, or neither of
    kag's two shapes): such a file is no setup's, and `iter_results` names it."""
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    record = decode_result(data)
    if record is None:
        return None
    if record.get("error") is not None:
        return Result(question, setup, path, None, str(record["error"]), {})
    text = str(record["generation"]["prediction"])
    return Result(question, setup, path, text, None, record.get("stats") or {})


def iter_results(
    datasets: Datasets, results: Path, prefix: str, foreign: list[Path] | None = None
) -> Iterator[Result]:
    """Every result of the datasets' questions, in dataset, question, setup-name order;
    files that are not results (corrupt, or something else) go to `foreign`."""
    for questions in datasets.values():
        for question in questions.values():
            folder = results / dataset_of(question) / question.id
            try:
                names = sorted(p.name for p in folder.iterdir())
            except (FileNotFoundError, NotADirectoryError):
                continue
            for name in names:
                if name.startswith((TEMP_PREFIX, ".")) or not name.endswith(".json"):
                    continue
                if not name.startswith(prefix):
                    continue
                setup = name[len(prefix) : -len(".json")]
                found = read_result(folder / name, question, setup)
                if found is not None and is_component_name(setup):
                    yield found
                elif foreign is not None:
                    foreign.append(folder / name)


@dataclass
class Tally:
    """The counts and sums behind one row of the report (a setup, overall or on a dataset)."""

    questions: int = 0
    results: int = 0
    errors: int = 0
    mcq_total: int = 0
    correct: int = 0
    incorrect: int = 0
    unanswered: int = 0
    em: list[float] = field(default_factory=list)
    f1: list[float] = field(default_factory=list)
    grades: list[int] = field(default_factory=list)
    grade_unparsed: int = 0
    grade_errors: int = 0
    generation_s: list[float] = field(default_factory=list)
    context_length: list[float] = field(default_factory=list)
    retrieval_s: list[float] = field(default_factory=list)

    def add_missing(self, question: Question) -> None:
        self.questions += 1
        if question.is_mcq and question.correct_option is not None:
            self.mcq_total += 1

    def as_dict(self, judged: bool) -> dict[str, Any]:
        def mean(values: list[float] | list[int]) -> float | None:
            return sum(values) / len(values) if values else None

        def ratio(a: int, b: int) -> float | None:
            return a / b if b else None

        out: dict[str, Any] = {
            "questions": self.questions,
            "results": self.results,
            "errors": self.errors,
            "skipped": self.questions - self.results,
            "mcq": {
                "total": self.mcq_total,
                "correct": self.correct,
                "incorrect": self.incorrect,
                "unanswered": self.unanswered,
                "acc": ratio(self.correct, self.mcq_total),
                "prec": ratio(self.correct, self.correct + self.incorrect),
                "cover": ratio(self.correct + self.incorrect, self.mcq_total),
            },
            "free_form": {"scored": len(self.em), "em": mean(self.em), "f1": mean(self.f1)},
            "mean_generation_time_s": mean(self.generation_s),
            "mean_context_length": mean(self.context_length),
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


def _number(stats: dict[str, Any], key: str) -> float | None:
    value = stats.get(key)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _add_result(tally: Tally, result: Result, grade: Any | None) -> None:
    question = result.question
    tally.questions += 1
    tally.results += 1
    is_graded_mcq = question.options is not None and question.correct_option is not None
    if is_graded_mcq:
        tally.mcq_total += 1
    if result.text is None:
        tally.errors += 1
        return
    scored = score_answer(result.text, question)
    if is_graded_mcq:
        if scored.choice is None:
            tally.unanswered += 1
        elif scored.correct:
            tally.correct += 1
        else:
            tally.incorrect += 1
    elif scored.exact_match is not None and scored.f1 is not None:
        tally.em.append(scored.exact_match)
        tally.f1.append(scored.f1)
        if grade is not None:
            if grade.status == "ok" and grade.score is not None:
                tally.grades.append(int(grade.score))
            elif grade.status == "unparsed":
                tally.grade_unparsed += 1
            else:
                tally.grade_errors += 1
    for key, values in (
        ("generation_time_s", tally.generation_s),
        ("context_length", tally.context_length),
        ("retrieval_time_s", tally.retrieval_s),
    ):
        number = _number(result.stats, key)
        if number is not None:
            values.append(number)


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
    return result.text is not None and gradable(result.question)


def summarize(
    datasets: Datasets, results: list[Result], grades: dict[Path, Any] | None = None
) -> list[dict[str, Any]]:
    """Per setup, overall and per dataset, ranked by ACC (missing last), then name."""
    judged = grades is not None
    grades = grades or {}
    by_key = {(r.setup, dataset_of(r.question), r.question.id): r for r in results}
    report = []
    for setup, covered in _covered(results, datasets).items():
        overall = Tally()
        per_dataset: dict[str, Tally] = {}
        for dataset in (d for d in datasets if d in covered):
            tally = per_dataset[dataset] = Tally()
            for question in datasets[dataset].values():
                result = by_key.get((setup, dataset, question.id))
                for target in (tally, overall):
                    if result is None:
                        target.add_missing(question)
                    else:
                        _add_result(target, result, grades.get(result.path))
        report.append(
            {
                "setup": setup,
                "overall": overall.as_dict(judged),
                "datasets": {d: t.as_dict(judged) for d, t in per_dataset.items()},
            }
        )

    def rank(row: dict[str, Any]) -> tuple[bool, float, str]:
        acc = row["overall"]["mcq"]["acc"]
        return (acc is None, -(acc or 0.0), row["setup"])

    report.sort(key=rank)
    return report


# -- rendering ------------------------------------------------------------------------------


def _fmt(value: float | None, spec: str = ".3f") -> str:
    """A table cell: the number in `spec`, or "-" when there is none."""
    return "-" if value is None else format(value, spec)


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1000


def _row(name: str, stats: dict[str, Any], judged: bool) -> list[str]:
    mcq, free = stats["mcq"], stats["free_form"]
    cells = [
        name,
        _fmt(mcq["acc"]),
        _fmt(mcq["prec"]),
        _fmt(mcq["cover"]),
        _fmt(free["em"]),
        _fmt(free["f1"]),
    ]
    if judged:
        judge = stats["judge"]
        cells += [
            _fmt(judge["mean_grade"]),
            str(judge["unparsed"]),
            str(judge["errors"]),
        ]
    cells += [
        str(stats["errors"]),
        str(stats["skipped"]),
        _fmt(stats["mean_generation_time_s"]),
        _fmt(stats["mean_context_length"], ".0f"),
        _fmt(_ms(stats["mean_retrieval_time_s"]), ".2f"),
    ]
    return cells


def _table(rows: list[list[str]], header: list[str]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = []
    for row in [header, *rows]:
        cells = [row[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)
        ]
        lines.append("  ".join(cells).rstrip())
    return lines


def render_text(report: list[dict[str, Any]], judged: bool) -> str:
    header = ["setup", "ACC", "PREC", "COVER", "EM", "F1"]
    if judged:
        header += ["grade", "unparsed", "grade-err"]
    header += ["errors", "skipped", "gen s", "context", "retr ms"]
    lines = ["overall"]
    lines += _table([_row(r["setup"], r["overall"], judged) for r in report], header)
    datasets: list[str] = []
    for row in report:
        datasets += [d for d in row["datasets"] if d not in datasets]
    for dataset in datasets:
        lines += ["", f"dataset {dataset}"]
        rows = [
            _row(r["setup"], r["datasets"][dataset], judged)
            for r in report
            if dataset in r["datasets"]
        ]
        lines += _table(rows, header)
    return "\n".join(lines)


def find_results(results: Path, prefix: str, pattern: re.Pattern[str]) -> Iterator[Result]:
    """The ok results under `results/<dataset>/<question>/` whose text matches, in path order.

    Needs no datasets file: the folder layout names the dataset, question and setup.
    """
    for path in sorted(results.glob(f"*/*/{glob_escape(prefix)}*.json")):
        dataset, question_id = path.parent.parent.name, path.parent.name
        setup = path.name[len(prefix) : -len(".json")]
        if path.name.startswith((TEMP_PREFIX, ".")) or not is_component_name(setup):
            continue
        question = Question(
            id=question_id, text="", metadata={"dataset": dataset, "question": question_id}
        )
        result = read_result(path, question, setup)
        if result is not None and result.text is not None and pattern.search(result.text):
            yield result


def glob_escape(text: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", text)
