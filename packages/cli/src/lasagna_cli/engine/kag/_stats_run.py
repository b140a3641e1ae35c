"""kag's `stats` as one call: the results read (a sweep's result files or a run folder's task
records), the free-form answers graded by a judge when one is given, and the report.

The judge grades through lasagna-judge's `grade_answers`, the same grading as `judge grade`:
an answer over the size limit is never sent (its grade is an error that says how to grade it),
a judge that gave every answer the same grade is warned about, and a judge that graded none
of the answers fails the report, as a damaged result file does: the figures are shown, then
the failure says why they are not to be trusted.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lasagna_cli.engine._errors import EngineError, EngineUsageError
from lasagna_cli.engine.kag._datasets import Datasets, load_datasets
from lasagna_cli.engine.kag._results import (
    Damaged,
    Result,
    damaged_records,
    dataset_folders,
    is_run_folder,
    iter_results,
    run_folder_results,
)
from lasagna_cli.engine.kag._stats import (
    StatsReport,
    damaged_failure,
    needs_grading,
    render_text,
    summarize,
)

if TYPE_CHECKING:
    from lasagna_judge import LLM, Grade

#: How an answer over the size limit is graded once the limit is raised (finished grades are
#: cached).
REDO = "run the same stats command again"


@dataclass
class StatsJudge:
    """The judge of a stats report, `model` as named: `make_llm` builds it once the results
    are read (a bad results folder is reported before a missing key)."""

    model: str
    make_llm: Callable[[], LLM]
    rubric: str
    concurrency: int
    max_chars: int


@dataclass
class StatsRun:
    """A stats report, with the judge's grades (keyed by result file) and what the report
    came to."""

    report: StatsReport
    results: Path
    prefix: str
    damaged: list[Damaged]
    run_folder: bool
    judge: StatsJudge | None = None
    grades: dict[Path, Grade] | None = None
    warning: str | None = None
    """The judge gave every answer the same grade (`constant_judge`)."""
    ungraded: str | None = None
    """Why the judge's figures are not figures: it graded none of the answers."""

    def render(self, output_format: str) -> str:
        """kag's text table, or its JSON with lasagna's figures and this report's settings."""
        if output_format != "json":
            return render_text(self.report)
        payload: dict[str, Any] = self.report.as_json()
        extra = payload["lasagna"]
        extra.update(results=str(self.results), prefix=self.prefix)
        extra["damaged"] = [{"path": str(p), "problem": why} for p, why in self.damaged]
        if self.judge is not None:
            extra["judge"] = {"model": self.judge.model, "rubric": self.judge.rubric}
        return json.dumps(payload, indent=2, ensure_ascii=False)

    @property
    def failure(self) -> str | None:
        """Why the report fails after it is shown: a damaged result file (its figures are not
        the whole run's), or a judge that graded nothing; None when it holds."""
        return damaged_failure(self.damaged, self.run_folder) or self.ungraded


def _read(
    datasets_path: Path | None, results: Path, prefix: str, damaged: list[Damaged]
) -> tuple[Datasets, list[Result], int]:
    if not results.is_dir():
        raise EngineUsageError(f"results folder not found: {results} (see --results)")
    if datasets_path is None:  # a run folder: its task records name the questions
        datasets, found = run_folder_results(results)
        damaged += damaged_records(results)
        if not found and not damaged:
            raise EngineError(
                f"no answer in the task records of {results}: run it with a generator "
                "(--generator MODEL) to have answers to summarise"
            )
        return datasets, found, len(datasets)
    datasets = load_datasets(datasets_path)
    found = list(iter_results(datasets, results, prefix, damaged))
    if not found and not damaged:
        raise EngineError(
            f"no result of {datasets_path} in {results}"
            + (f" with prefix {prefix!r}" if prefix else "")
            + "; run `lasagna benchmark sweep` first, or check --results and --prefix"
        )
    return datasets, found, dataset_folders(results)


async def _grade(
    found: list[Result],
    judge: StatsJudge,
    on_start: Callable[[int, str], None],
    on_grade: Callable[[], None],
) -> tuple[dict[Path, Grade], str | None]:
    """Judge grades of the free-form results that have references, keyed by result file,
    and the warning about a judge that gave them all the same grade. The judge's answers
    are cached (the LLM cache), so a second `stats` costs nothing."""
    from lasagna_cli.engine.run._scoring import (
        judge_references,
        load_judge_rubric,
        too_long_to_grade,
    )
    from lasagna_judge import AnswerRow, grade_answers

    rubric = load_judge_rubric(judge.rubric)
    llm = judge.make_llm()
    graded = [r for r in found if needs_grading(r)]
    unsent = {
        r.path: g
        for r in graded
        if (g := too_long_to_grade(r.text or "", r.question, llm, rubric, judge.max_chars, REDO))
    }
    todo = [r for r in graded if r.path not in unsent]
    rows = [
        AnswerRow(0, {}, r.question.text, judge_references(r.question), r.text or "") for r in todo
    ]
    on_start(len(rows), "judge")
    if not rows:
        await llm.aclose()
        return dict(unsent), None
    grading = await grade_answers(
        llm, rubric, rows, concurrency=judge.concurrency, on_grade=lambda i, g: on_grade()
    )
    return unsent | dict(zip((r.path for r in todo), grading.grades, strict=True)), (
        grading.warning
    )


def check_stats_source(results: Path, datasets_path: Path | None) -> None:
    """An EngineUsageError when stats has no questions to read: no DATASETS.json, and
    `results` no run folder of `benchmark run` (whose task records name them)."""
    if datasets_path is None and not is_run_folder(results):
        raise EngineUsageError(
            "stats needs --datasets DATASETS.json (the file the sweep ran), or --results "
            "naming a run folder of `benchmark run` (it holds manifest.json); or use "
            "`lasagna benchmark stats find REGEX`"
        )


async def run_stats(
    results: Path,
    datasets_path: Path | None = None,
    *,
    prefix: str = "",
    judge: StatsJudge | None = None,
    on_start: Callable[[int, str], None] = lambda total, description: None,
    on_grade: Callable[[], None] = lambda: None,
) -> StatsRun:
    """kag's stats of the results under `results` (a sweep's, whose questions
    `datasets_path` holds, or a run folder's when it is None), graded by `judge` if given:
    `on_start(total, "judge")` once the answers to grade are known, `on_grade()` as each is
    graded."""
    from lasagna_judge import ungraded

    damaged: list[Damaged] = []
    datasets, found, count = _read(datasets_path, results, prefix, damaged)
    grades, warning = None, None
    if judge is not None:
        grades, warning = await _grade(found, judge, on_start, on_grade)
    return StatsRun(
        report=summarize(datasets, found, grades, count),
        results=results,
        prefix=prefix,
        damaged=damaged,
        run_folder=datasets_path is None,
        judge=judge,
        grades=grades,
        warning=warning,
        ungraded=None if grades is None else ungraded(list(grades.values())),
    )
