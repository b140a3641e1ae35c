"""`lasagna benchmark stats`: ACC/PREC/COVER, EM/F1 and judge grades per setup; `stats find`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from lasagna_cli.commands._errors import (
    INTERRUPTED,
    USAGE_ERROR,
    CliError,
    check_format,
    user_errors,
)
from lasagna_cli.commands._groups import benchmark_app

if TYPE_CHECKING:
    from lasagna_cli.engine.kag import Result

DEFAULT_RESULTS = Path("results")
ResultsFolder = Annotated[
    Path,
    typer.Option(
        "--results", help="A sweep's output folder, or any run folder of `benchmark run`."
    ),
]
Prefix = Annotated[str, typer.Option("--prefix", help="Only result files with this prefix.")]

# A group whose callback is the report itself, so that both `stats --datasets D.json` and
# `stats find REGEX` work: the callback returns early when a subcommand was named.
stats_app = typer.Typer(
    help="Summarise a sweep's results per setup: MCQ ACC/PREC/COVER, EM/F1, judge grades.",
    invoke_without_command=True,
    no_args_is_help=False,
)
benchmark_app.add_typer(stats_app, name="stats")


@stats_app.callback(invoke_without_command=True)
def stats(
    ctx: typer.Context,
    datasets: Annotated[
        Path | None,
        typer.Option(
            "-d",
            "--datasets",
            help="The DATASETS.json the sweep ran (not needed for a run folder of "
            "`benchmark run`, whose task records name the questions).",
        ),
    ] = None,
    results: ResultsFolder = DEFAULT_RESULTS,
    prefix: Prefix = "",
    output_format: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
    judge: Annotated[
        str | None,
        typer.Option(
            "--judge",
            help="Grade free-form answers with this model (provider/name, e.g. local/smollm2; "
            "keys from the environment as for every command).",
        ),
    ] = None,
    rubric: Annotated[
        str, typer.Option("--rubric", help="binary, scale, or a rubric file.")
    ] = "binary",
    base_url: Annotated[
        str | None,
        typer.Option("--base-url", help="The judge's OpenAI-compatible server, if any."),
    ] = None,
    concurrency: Annotated[
        int, typer.Option("--concurrency", min=1, help="Judge calls in flight.")
    ] = 8,
) -> None:
    """Summarise a sweep's results per setup, overall and per dataset, ranked by ACC."""
    if ctx.invoked_subcommand is not None:
        return
    with user_errors():
        from lasagna_cli.engine.kag import is_run_folder

        if datasets is None and not is_run_folder(results):
            raise CliError(
                "stats needs --datasets DATASETS.json (the file the sweep ran), or --results "
                "naming a run folder of `benchmark run` (it holds manifest.json); or use "
                "`lasagna benchmark stats find REGEX`",
                USAGE_ERROR,
            )
        check_format(output_format)
        foreign: list[Path] = []
        typer.echo(
            _report(
                datasets,
                results,
                prefix,
                output_format,
                judge,
                rubric,
                base_url,
                concurrency,
                foreign,
            )
        )
        if foreign:
            shown = ", ".join(str(p) for p in foreign[:5])
            more = f" and {len(foreign) - 5} more" if len(foreign) > 5 else ""
            raise CliError(
                f"{len(foreign)} file(s) in {results} are not result files (not JSON, or not "
                f'{{"ok": ...}} / {{"error": ...}}) and were left out of every setup: '
                f"{shown}{more}; move them out of the results folder"
            )


def _report(
    datasets_path: Path | None,
    results: Path,
    prefix: str,
    output_format: str,
    judge: str | None,
    rubric_name: str,
    base_url: str | None,
    concurrency: int,
    foreign: list[Path],
) -> str:
    import json

    from lasagna_cli.engine.kag import (
        iter_results,
        load_datasets,
        render_text,
        run_folder_results,
        summarize,
    )

    if not results.is_dir():
        raise CliError(f"results folder not found: {results} (see --results)", USAGE_ERROR)
    if datasets_path is None:  # a run folder: its task records name the questions
        datasets, found = run_folder_results(results)
        if not found:
            raise CliError(
                f"no answer in the task records of {results}: run it with a generator "
                "(--generator MODEL) to have answers to summarise"
            )
    else:
        datasets = load_datasets(datasets_path)
        found = list(iter_results(datasets, results, prefix, foreign))
        if not found:
            raise CliError(
                f"no result of {datasets_path} in {results}"
                + (f" with prefix {prefix!r}" if prefix else "")
                + "; run `lasagna benchmark sweep` first, or check --results and --prefix"
            )
    grades = None
    if judge is not None:
        grades = _grade(found, judge, rubric_name, base_url, concurrency)
        from lasagna_cli.engine._scoring import constant_judge

        warning = constant_judge([g.score for g in grades.values() if g.status == "ok"])
        if warning:
            typer.echo(f"warning: {warning}", err=True)
    report = summarize(datasets, found, grades)
    if output_format == "json":
        payload: dict[str, Any] = {"results": str(results), "prefix": prefix, "setups": report}
        if judge is not None:
            payload["judge"] = {"model": judge, "rubric": rubric_name}
        return json.dumps(payload, indent=1, ensure_ascii=False)
    return render_text(report, judge is not None)


def _grade(
    found: list[Result],
    judge: str,
    rubric_name: str,
    base_url: str | None,
    concurrency: int,
) -> dict[Path, Any]:
    """Judge grades of the free-form results that have references, keyed by result file.
    The judge's answers are cached (the LLM cache), so a second `stats` costs nothing."""
    import asyncio

    from lasagna_cli.commands._judge import load_rubric_option
    from lasagna_cli.commands._llm import build_llm
    from lasagna_cli.commands._progress import TaskProgress
    from lasagna_cli.engine._scoring import judge_references
    from lasagna_cli.engine.kag import needs_grading
    from lasagna_judge import grade_batch

    rubric = load_rubric_option(rubric_name)
    llm = build_llm(judge, base_url=base_url, concurrency=concurrency, flag="--judge")
    todo = [r for r in found if needs_grading(r)]
    items = [
        {
            "question": r.question.text,
            "references": judge_references(r.question),
            "prediction": r.text,
        }
        for r in todo
    ]
    progress = TaskProgress(len(items), "judge")

    def on_progress(done: int, total: int) -> None:
        while progress.done < done:
            progress.advance("done")

    async def run() -> list[Any]:
        if not items:
            await llm.aclose()
            return []
        try:
            return await grade_batch(
                llm, rubric, items, concurrency=concurrency, on_progress=on_progress
            )
        finally:
            await llm.aclose()

    try:
        with progress:
            grades = asyncio.run(run())
    except KeyboardInterrupt:
        typer.echo(
            "interrupted: the grades made so far are cached; run the same stats command again "
            "to go on from there",
            err=True,
        )
        raise typer.Exit(INTERRUPTED) from None
    return {r.path: g for r, g in zip(todo, grades, strict=True)}


@stats_app.command("find")
def find(
    regex: Annotated[str, typer.Argument(help="A Python regular expression.")],
    results: ResultsFolder = DEFAULT_RESULTS,
    prefix: Prefix = "",
    ignore_case: Annotated[
        bool, typer.Option("--ignore-case", "-i", help="Match ignoring case.")
    ] = False,
) -> None:
    """List the results whose text matches REGEX: dataset/question/setup and the text."""
    import re

    from lasagna_cli.engine.kag import dataset_of, find_results

    with user_errors():
        try:
            pattern = re.compile(regex, re.IGNORECASE if ignore_case else 0)
        except re.error as exc:
            raise CliError(f"REGEX: not a valid regular expression: {exc}", USAGE_ERROR) from None
        if not results.is_dir():
            raise CliError(f"results folder not found: {results} (see --results)", USAGE_ERROR)
        count = 0
        for result in find_results(results, prefix, pattern):
            count += 1
            text = " ".join((result.text or "").split())
            typer.echo(
                f"{dataset_of(result.question)}/{result.question.id}/{result.setup}: {text[:200]}"
            )
        typer.echo(f"{count} matching results", err=True)
        if count == 0:
            raise typer.Exit(1)
