"""`judge grade --model A --model B ...`: a jury. Every answer is graded by each judge;
each output row holds the jury's grade (`lasagna_judge.Verdict.to_dict`: the mean of the
parsed scores, how many judges graded, each judge's grade under `jury`), and the summary
gives each judge's figures, the jury's mean and the judges' agreement."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lasagna_cli.commands._errors import DATA_ERROR, USAGE_ERROR, CliError
from lasagna_cli.engine import counted

if TYPE_CHECKING:
    from lasagna_judge import LLM, AnswerRow, Rubric


def grade_with_jury(
    models: Sequence[str],
    rubric: Rubric,
    rows: Sequence[AnswerRow],
    *,
    base_url: str | None,
    concurrency: int,
    no_cache: bool,
    prices: Path | None,
    out: Path | None,
    limits: tuple[float | None, float | None] = (None, None),
) -> None:
    """Grade `rows` with every model of `models` and write the rows."""

    from lasagna_cli.commands._grade_summary import (
        cost_line,
        run_grading,
        summary_lines,
        write_graded,
    )
    from lasagna_cli.commands._llm import build_llm, load_prices
    from lasagna_cli.commands._progress import TaskProgress
    from lasagna_judge import grade_answers_by_jury, jury_agreement, summarize_grades

    if len(set(models)) < len(models):
        raise CliError(
            f"--model: each judge of a jury once, found {', '.join(models)}; remove the "
            "repeated one",
            USAGE_ERROR,
        )
    table = load_prices(prices) if prices is not None else None
    llms: list[LLM] = [
        build_llm(
            m,
            base_url,
            concurrency,
            no_cache=no_cache,
            prices=table,
            requests_per_minute=limits[0],
            tokens_per_minute=limits[1],
        )
        for m in models
    ]
    progress = TaskProgress(len(rows) * len(llms), f"grading with a jury of {len(llms)}")
    found = run_grading(
        progress,
        lambda: grade_answers_by_jury(
            llms,
            rubric,
            rows,
            concurrency=concurrency,
            on_grade=lambda _j, _i, g: progress.advance(
                "failed" if g.status == "error" else "done"
            ),
        ),
    )
    verdicts = found.verdicts
    lines: list[str] = []
    for j, llm in enumerate(llms):
        grades = [v.grades[j] for v in verdicts]
        summary = summarize_grades(grades)
        spent = llm.usage
        lines.append(f"-- judge {j + 1} of {len(llms)}")
        lines += summary_lines(
            summary,
            spent=(spent.input_tokens, spent.output_tokens),
            calls=llm.calls_made,
            cost=cost_line(llm, grades, prices, llm.cost_of(spent)),
        )
    lines += _jury_lines(verdicts, jury_agreement(verdicts))
    write_graded(found.rows, lines, out)
    if found.failure is not None:
        raise CliError(found.failure, DATA_ERROR)


def _jury_lines(verdicts: Sequence[Any], agreement: Any) -> list[str]:
    scores = [v.score for v in verdicts if v.score is not None]
    partial = sum(1 for v in verdicts if 0 < v.graded < len(v.grades))
    none = sum(1 for v in verdicts if v.graded == 0)
    lines = ["-- the jury"]
    if scores:
        lines.append(
            f"jury grade (the mean of each answer's parsed grades): {sum(scores) / len(scores):.3f}"
            f" over {counted(len(scores), 'answer')}; {partial} graded by only some judges, {none} "
            "by none"
        )
    else:
        lines.append("jury grade: n/a (no judge gave any answer a grade)")
    if agreement.alpha is None:
        lines.append(
            f"agreement: {agreement.measure} undefined over {agreement.answers} answers "
            "graded by two or more judges (every grade the same, or no answer with two)"
        )
    else:
        lines.append(
            f"agreement: {agreement.measure} {agreement.alpha:.3f} over {agreement.answers} "
            "answers graded by two or more judges (1 = full agreement, 0 = chance)"
        )
    return lines
