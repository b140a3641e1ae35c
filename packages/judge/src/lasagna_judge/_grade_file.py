"""Grading a file of answers: its rows read and checked, every answer graded (by one judge,
with its bias check, or by a jury), and the policy on what came back.

The rows are JSON Lines of `id`, `question`, `answers` (a string or a list) and
`prediction`; every row is checked before the first call, and a row too long for a judge is
refused, never cut. A grading fails when no answer got a grade, or a call failed (its
answers are graded again by the same command: finished calls are cached); a judge that gave
every answer the same grade is warned about (`constant_judge`): such a judge measures
nothing. The command line only reads the environment, builds the LLMs and says the result.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lasagna_judge._errors import JudgeError, JudgeUsageError
from lasagna_judge._types import Usage

if TYPE_CHECKING:
    from lasagna_judge._bias import BiasCheck
    from lasagna_judge._grading import Grade
    from lasagna_judge._jury import Verdict
    from lasagna_judge._llm import LLM
    from lasagna_judge._rubrics import Rubric
    from lasagna_judge._summary import GradeSummary

GradeCallback = Callable[[int, "Grade"], None]
RemoteGrading = Callable[[list[dict[str, Any]], GradeCallback], Awaitable[list["Grade"]]]


def read_jsonl(path: Path, what: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line of `path` (`what` names it in the
    messages); a bad line is a one-line JudgeError, a missing file a JudgeUsageError."""
    from lasagna_metrics import parse_json

    if path.is_dir():
        raise JudgeUsageError(f"{what} {path} is a folder; give the path to a .jsonl file")
    if not path.is_file():
        raise JudgeUsageError(f"{what} not found: {path}; give the path to a .jsonl file")
    try:
        # utf-8-sig: a byte-order mark some editors write is not part of the first row
        with path.open(encoding="utf-8-sig") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    value = parse_json(line)
                except json.JSONDecodeError as exc:
                    raise JudgeError(
                        f"{path}:{number}: expected one JSON object per line, found text that "
                        f"is not JSON ({exc.msg} at column {exc.colno})"
                    ) from None
                if not isinstance(value, dict):
                    raise JudgeError(
                        f"{path}:{number}: expected a JSON object, found {type(value).__name__}"
                    )
                yield number, value
    except UnicodeDecodeError as exc:
        raise JudgeError(
            f"{path}: expected UTF-8 text, found undecodable bytes ({exc.reason})"
        ) from None


def did_you_mean_field(name: str, data: Mapping[str, Any]) -> str:
    """ " (found 'answer': a typo?)" when the row has a near miss of the field `name`."""
    close = difflib.get_close_matches(name, [str(k) for k in data], n=1, cutoff=0.6)
    return f" (found {close[0]!r}: a typo?)" if close else ""


def _reference_text(value: object) -> str | None:
    """A reference as text: strings as they are, numbers (1577, 8.7) as written."""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return json.dumps(value)
    return None


@dataclass(frozen=True)
class AnswerRow:
    """One row of a file of answers: the row as read, and what the judge is given."""

    line: int
    data: dict[str, Any]
    question: str
    references: list[str]
    prediction: str

    def item(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "references": self.references,
            "prediction": self.prediction,
        }


def read_answers(path: Path, max_chars: int) -> list[AnswerRow]:
    """The rows of a file of answers, each checked (fields, unique ids, types) and none over
    `max_chars` characters of question, answers and prediction (a judge would be sent all
    of it, and billed for it)."""
    rows: list[AnswerRow] = []
    first_line: dict[str, int] = {}
    for number, data in read_jsonl(path, "input file"):
        where = f"{path}:{number}"
        for name in ("id", "question", "answers", "prediction"):
            if name not in data:
                raise JudgeError(
                    f"{where}: missing field {name!r}{did_you_mean_field(name, data)}; each row "
                    "needs id, question, answers (a string or a list of strings) and prediction"
                )
        row_id = data["id"]
        if isinstance(row_id, bool) or not isinstance(row_id, str | int) or row_id == "":
            raise JudgeError(
                f"{where}: field 'id' must be a non-empty string or an integer, found {row_id!r}"
            )
        key = str(row_id)
        if key in first_line:
            raise JudgeError(
                f"{where}: duplicate id {row_id!r} (first on line {first_line[key]}); ids "
                "must be unique so that grades can be matched to labels"
            )
        first_line[key] = number
        for name in ("question", "prediction"):
            if not isinstance(data[name], str):
                raise JudgeError(
                    f"{where}: field {name!r} must be a string, found "
                    f"{type(data[name]).__name__} ({data[name]!r:.60})"
                )
        answers = data["answers"]
        raw = answers if isinstance(answers, list) else [answers]
        references = [_reference_text(a) for a in raw]
        texts = [r for r in references if r is not None]
        if len(texts) != len(references) or not any(t.strip() for t in texts):
            raise JudgeError(
                f"{where}: field 'answers' must be a non-empty string or a list of them, "
                f"found {answers!r:.80}"
            )
        rows.append(AnswerRow(number, data, data["question"], texts, data["prediction"]))
    if not rows:
        raise JudgeError(f"{path}: no rows; expected one JSON object per line")
    for row in rows:
        size = len(row.question) + len(row.prediction) + sum(len(r) for r in row.references)
        if size > max_chars:
            raise JudgeError(
                f"{path}:{row.line} (id {row.data['id']!r}): {size:,} characters in question, "
                f"answers and prediction, over the limit of {max_chars:,} (about {size // 4:,} "
                "tokens would go to the judge); shorten the row, or raise --max-chars"
            )
    return rows


def constant_judge(
    scores: Sequence[float | int | None], *, against_labels: bool = False
) -> str | None:
    """A warning when a judge gave every answer of a set the same grade (a small model may
    give 4 to every answer, a wrong one included): such a judge measures nothing. None when
    the grades differ, or there are too few to tell (fewer than 3). `against_labels`: said
    while checking it against human labels (`judge calibrate`), so the advice is not to do
    what is being done."""
    given = [s for s in scores if s is not None]
    if len(given) < 3 or len(set(given)) != 1:
        return None
    advice = (
        "the agreement below cannot be better than chance; use a stronger judge model"
        if against_labels
        else "check it against human labels with `lasagna judge calibrate`, or use a stronger "
        "judge model"
    )
    return (
        f"the judge gave all {len(given)} graded answers the same grade ({given[0]:g}): such a "
        f"judge measures nothing; {advice}"
    )


def _counts(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{name} {count}" for name, count in counts.items())


def nothing_graded(n: int, by_status: Mapping[str, int], first_error: str | None) -> str:
    """Why a grading where no answer got a grade fails: what came back, and what to do for
    each kind of failure."""
    found = _counts({k: v for k, v in by_status.items() if v and k != "ok"})
    todo = []
    if by_status.get("unparsed"):
        todo.append(
            "unparsed: the judge's replies held no score the rubric allows (each row's "
            '"raw" says what it sent); check --model and --rubric'
        )
    if by_status.get("error"):
        todo.append(
            f"error (first: {first_error}): run the same command again to retry, finished "
            "calls are cached"
        )
    return f"none of the {n} answers got a grade (grades: {found}); " + "; ".join(todo)


def ungraded(grades: Sequence[Grade]) -> str | None:
    """Why grades of which none holds a parsed score fail (None: some answer got one);
    the statuses are counted in the order they are met."""
    if not grades or any(g.status == "ok" for g in grades):
        return None
    by_status: dict[str, int] = {}
    for g in grades:
        by_status[g.status] = by_status.get(g.status, 0) + 1
    first = next((g.error for g in grades if g.status == "error"), None)
    return nothing_graded(len(grades), by_status, first)


@dataclass
class FileGrading:
    """One judge's grades of a file of answers, and what the grading came to."""

    rows: list[dict[str, Any]]
    """The input rows with the grade fields added, in the file's order."""
    grades: list[Grade]
    summary: GradeSummary
    spent: Usage
    """This run's tokens of the grading (the bias check's calls are counted apart)."""
    calls: int
    bias: list[BiasCheck] = field(default_factory=list)
    bias_calls: int = 0
    warning: str | None = None
    """`constant_judge`'s, when the judge gave every answer the same grade."""
    failure: str | None = None
    """Why the grading fails (no answer got a grade, or a call failed); None when it holds."""


async def grade_answers(
    llm: LLM,
    rubric: Rubric,
    rows: Sequence[AnswerRow],
    *,
    concurrency: int,
    on_grade: GradeCallback | None = None,
    bias_check: int = 0,
    remote: RemoteGrading | None = None,
) -> FileGrading:
    """Grade every row with `llm` (closed at the end), then, with `bias_check` N, N sampled
    answers twice more (`check_bias`). `remote(items, on_grade)` grades on other machines
    instead; this run's tokens are then read from the grades that were not cached."""
    from lasagna_judge._bias import check_bias
    from lasagna_judge._grading import check_items, grade_batch
    from lasagna_judge._summary import summarize_grades

    items = [row.item() for row in rows]
    checks: list[BiasCheck] = []
    try:
        if remote is not None:
            check_items(items)  # bad input fails before any worker starts, as here
            grades = await remote(items, on_grade or (lambda index, grade: None))
        else:
            grades = await grade_batch(
                llm, rubric, items, concurrency=concurrency, on_grade=on_grade
            )
        spent, calls = llm.usage, llm.calls_made
        graded_calls = calls  # the calls before the bias check's
        if bias_check:
            checks = await check_bias(
                llm, rubric, items, grades, sample=bias_check, concurrency=concurrency
            )
    finally:
        await llm.aclose()
    if remote is not None:  # the workers' calls, from their grades
        fresh = [g for g in grades if not g.cached and g.prompt_sha256 is not None]
        spent = Usage(sum(g.input_tokens for g in fresh), sum(g.output_tokens for g in fresh))
        calls = len(fresh)
    summary = summarize_grades(grades)
    failure = None
    errors = summary.by_status.get("error", 0)
    first = next((g.error for g in grades if g.status == "error"), None)
    if summary.n and not summary.scored:
        failure = nothing_graded(summary.n, summary.by_status, first)
    elif errors:
        failure = (
            f"{errors} of {summary.n} answers could not be graded (status error; first: "
            f"{first}); run the same command again to retry them, finished calls are cached"
        )
    return FileGrading(
        rows=[{**row.data, **g.to_dict()} for row, g in zip(rows, grades, strict=True)],
        grades=grades,
        summary=summary,
        spent=spent,
        calls=calls,
        bias=checks,
        bias_calls=llm.calls_made - graded_calls,
        warning=constant_judge([g.score for g in grades if g.status == "ok"]),
        failure=failure,
    )


@dataclass
class JuryGrading:
    """A jury's verdicts on a file of answers, and what the grading came to."""

    rows: list[dict[str, Any]]
    verdicts: list[Verdict]
    failure: str | None = None


async def grade_answers_by_jury(
    llms: Sequence[LLM],
    rubric: Rubric,
    rows: Sequence[AnswerRow],
    *,
    concurrency: int,
    on_grade: Callable[[int, int, Grade], None] | None = None,
) -> JuryGrading:
    """Every row graded by each judge of `llms` (all closed at the end): each row's jury
    grade is the mean of its parsed grades (`Verdict`)."""
    from lasagna_judge._jury import grade_jury

    try:
        verdicts = await grade_jury(
            llms, rubric, [row.item() for row in rows], concurrency=concurrency, on_grade=on_grade
        )
    finally:
        for llm in llms:
            await llm.aclose()
    from lasagna_judge._summary import summarize_grades

    failure = None
    if verdicts and all(v.score is None for v in verdicts):
        every = [g for v in verdicts for g in v.grades]
        first = next((g.error for g in every if g.status == "error"), None)
        failure = nothing_graded(len(verdicts), summarize_grades(every).by_status, first)
    else:
        failed = sum(1 for v in verdicts if any(g.status == "error" for g in v.grades))
        if failed:
            failure = (
                f"{failed} of {len(verdicts)} answers have a judge whose call failed (status "
                "error); run the same command again to retry them, finished calls are cached"
            )
    rows_out = [{**row.data, **v.to_dict()} for row, v in zip(rows, verdicts, strict=True)]
    return JuryGrading(rows_out, verdicts, failure)
