"""`judge grade --model A --model B ...`: a jury. Every answer is graded by each judge;
each output row holds the jury's grade (`lasagna_judge.Verdict.to_dict`: the mean of the
parsed scores, how many judges graded, each judge's grade under `jury`), and the summary
gives each judge's figures, the jury's mean and the judges' agreement."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from lasagna_cli.commands._errors import DATA_ERROR, USAGE_ERROR, CliError

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
        run_grading,
        write_graded,
    )
    from lasagna_cli.commands._llm import build_llm, load_prices
    from lasagna_cli.commands._progress import TaskProgress
    from lasagna_cli.engine import grading_cost_line, grading_lines, jury_lines
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
        lines += grading_lines(
            summary,
            spent=(spent.input_tokens, spent.output_tokens),
            calls=llm.calls_made,
            cost=grading_cost_line(llm, grades, prices, llm.cost_of(spent)),
        )
    lines += jury_lines(verdicts, jury_agreement(verdicts))
    write_graded(found.rows, lines, out)
    if found.failure is not None:
        raise CliError(found.failure, DATA_ERROR)
