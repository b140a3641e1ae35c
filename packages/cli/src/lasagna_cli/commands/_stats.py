"""`lasagna benchmark stats`: kag's report per setup (OK/WRONG/ERR/TOT, ACC/PREC/COVER,
GEN/CTX_LEN/RET), lasagna's option extraction, EM/F1 and judge grades beside it; `find`."""

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
from lasagna_cli.commands._grade_summary import JudgeMaxCharsOption, nothing_graded
from lasagna_cli.commands._groups import benchmark_app
from lasagna_cli.commands._llm import auto_concurrency, concurrency_option
from lasagna_cli.commands._rates import RpmOption, TpmOption, rate_limits
from lasagna_cli.engine.config import JUDGE_MAX_CHARS

if TYPE_CHECKING:
    from lasagna_cli.engine.kag import Damaged, Result

RESULTS_HELP = (
    "Root of the result files (kag's -r/--results; the sweep's --output), or a run folder "
    "of `benchmark run`."
)
PREFIX_HELP = "The prefix the sweep put before each result file's name (its --prefix)."
FORMAT_HELP = "text or json."

# A group whose callback is the report itself, so that both `stats --datasets D.json` and
# `stats find REGEX` work: the callback returns early when a subcommand was named.
stats_app = typer.Typer(
    help="kag's stats of a sweep's results per setup (ACC/PREC/COVER), lasagna's figures "
    "beside them; `stats find REGEX` searches the answers.",
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
    results: Annotated[Path, typer.Option("-r", "--results", help=RESULTS_HELP)] = Path("."),
    prefix: Annotated[str, typer.Option("--prefix", help=PREFIX_HELP)] = "",
    output_format: Annotated[str, typer.Option("--format", help=FORMAT_HELP)] = "text",
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
    concurrency: Annotated[int | None, concurrency_option("Judge calls in flight", min=1)] = None,
    rpm: RpmOption = None,
    tpm: TpmOption = None,
    max_chars: JudgeMaxCharsOption = JUDGE_MAX_CHARS,
) -> None:
    """kag's report of a sweep's results per setup, overall and per dataset, ranked by ACC,
    then lasagna's own figures (option extraction, EM/F1, judge grades, missing results)."""
    if ctx.invoked_subcommand is not None:
        return
    with user_errors():
        limits = rate_limits(rpm, tpm)  # before anything is read
        from lasagna_cli.engine.kag import is_run_folder

        if datasets is None and not is_run_folder(results):
            raise CliError(
                "stats needs --datasets DATASETS.json (the file the sweep ran), or --results "
                "naming a run folder of `benchmark run` (it holds manifest.json); or use "
                "`lasagna benchmark stats find REGEX`",
                USAGE_ERROR,
            )
        check_format(output_format)
        damaged: list[Damaged] = []
        grades: dict[Path, Any] = {}
        report = _report(
            datasets, results, prefix, output_format, judge, rubric, base_url,
            concurrency, damaged, limits, max_chars, grades,
        )  # fmt: skip
        typer.echo(report)
        _refuse_damaged(damaged, is_run_folder(results) and datasets is None)
        _refuse_ungraded(list(grades.values()))


REDO = "run the same stats command again"
"""How an answer over --max-chars is graded once it is raised (finished grades are cached)."""


def _refuse_ungraded(grades: list[Any]) -> None:
    """--judge that graded none of the answers fails the command (exit 1) after the report,
    as `judge grade` does: its judge figures are not figures."""
    if grades and not any(g.status == "ok" for g in grades):
        by_status: dict[str, int] = {}
        for g in grades:
            by_status[g.status] = by_status.get(g.status, 0) + 1
        first = next((g.error for g in grades if g.status == "error"), None)
        raise nothing_graded(len(grades), by_status, first)


def _refuse_damaged(damaged: list[Damaged], run_folder: bool) -> None:
    """A damaged result file fails the command (exit 1) after the report, which leaves it
    out: the figures are not those of the whole run, and the file's task is to be redone."""
    if not damaged:
        return
    named = "; ".join(f"{path} is {problem}" for path, problem in damaged[:3])
    more = f" (and {len(damaged) - 3} more damaged file(s))" if len(damaged) > 3 else ""
    redo = (
        "run the same `benchmark run` with --resume"
        if run_folder
        else "run the same sweep with --continue"
    )
    raise CliError(
        f"{named}{more}: left out of every figure above; delete each and {redo} to redo its task"
    )


def _report(
    datasets_path: Path | None,
    results: Path,
    prefix: str,
    output_format: str,
    judge: str | None,
    rubric_name: str,
    base_url: str | None,
    concurrency: int | None,
    damaged: list[Damaged],
    limits: tuple[float | None, float | None] = (None, None),
    max_chars: int = JUDGE_MAX_CHARS,
    graded: dict[Path, Any] | None = None,
) -> str:
    """The report's text (or JSON); `damaged` and `graded` (the judge's grades) are filled
    for the checks that follow it."""
    import json

    from lasagna_cli.engine.kag import (
        damaged_records,
        dataset_folders,
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
        damaged += damaged_records(results)
        count = len(datasets)
        if not found and not damaged:
            raise CliError(
                f"no answer in the task records of {results}: run it with a generator "
                "(--generator MODEL) to have answers to summarise"
            )
    else:
        datasets = load_datasets(datasets_path)
        found = list(iter_results(datasets, results, prefix, damaged))
        count = dataset_folders(results)
        if not found and not damaged:
            raise CliError(
                f"no result of {datasets_path} in {results}"
                + (f" with prefix {prefix!r}" if prefix else "")
                + "; run `lasagna benchmark sweep` first, or check --results and --prefix"
            )
    grades = None
    if judge is not None:
        if concurrency is None:
            concurrency = auto_concurrency([judge], base_url)
        grades = _grade(found, judge, rubric_name, base_url, concurrency, limits, max_chars)
        if graded is not None:
            graded.update(grades)
        from lasagna_cli.engine.run import constant_judge

        warning = constant_judge([g.score for g in grades.values() if g.status == "ok"])
        if warning:
            typer.echo(f"warning: {warning}", err=True)
    report = summarize(datasets, found, grades, count)
    if output_format == "json":
        payload: dict[str, Any] = report.as_json()
        extra = payload["lasagna"]
        extra.update(results=str(results), prefix=prefix)
        extra["damaged"] = [{"path": str(p), "problem": why} for p, why in damaged]
        if judge is not None:
            extra["judge"] = {"model": judge, "rubric": rubric_name}
        return json.dumps(payload, indent=2, ensure_ascii=False)
    return render_text(report)


def _grade(
    found: list[Result],
    judge: str,
    rubric_name: str,
    base_url: str | None,
    concurrency: int,
    limits: tuple[float | None, float | None] = (None, None),
    max_chars: int = JUDGE_MAX_CHARS,
) -> dict[Path, Any]:
    """Judge grades of the free-form results that have references, keyed by result file.
    The judge's answers are cached (the LLM cache), so a second `stats` costs nothing."""
    import asyncio

    from lasagna_cli.commands._judge import load_rubric_option
    from lasagna_cli.commands._llm import build_llm
    from lasagna_cli.commands._progress import TaskProgress
    from lasagna_cli.engine.kag import needs_grading
    from lasagna_cli.engine.run import judge_references, too_long_to_grade
    from lasagna_judge import grade_batch

    rubric = load_rubric_option(rubric_name)
    llm = build_llm(
        judge, base_url=base_url, concurrency=concurrency, flag="--judge",
        requests_per_minute=limits[0], tokens_per_minute=limits[1],
    )  # fmt: skip
    graded = [r for r in found if needs_grading(r)]
    unsent = {
        r.path: g
        for r in graded
        if (g := too_long_to_grade(r.text or "", r.question, llm, rubric, max_chars, REDO))
    }
    todo = [r for r in graded if r.path not in unsent]
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
    return unsent | {r.path: g for r, g in zip(todo, grades, strict=True)}


@stats_app.command("find")
def find(
    ctx: typer.Context,
    regex: Annotated[str, typer.Argument(help="A regular expression (Python's re).")],
    results: Annotated[
        Path | None, typer.Option("-r", "--results", help=RESULTS_HELP + " [default: .]")
    ] = None,
    prefix: Annotated[str | None, typer.Option("--prefix", help=PREFIX_HELP)] = None,
    output_format: Annotated[
        str | None, typer.Option("--format", help=FORMAT_HELP + " [default: text]")
    ] = None,
    ignore_case: Annotated[
        bool, typer.Option("--ignore-case", "-i", help="Match ignoring case.")
    ] = False,
) -> None:
    """The results whose trimmed answer REGEX matches (anywhere in it), as kag's `stats
    find`: each as dataset/question/setup and its answer on one line (kag opens fzf), then
    the count; JSON: {matches, total, paths}. No datasets file needed."""
    import json
    import re

    from lasagna_cli.engine.kag import dataset_of, find_in, is_run_folder, run_folder_results
    from lasagna_cli.engine.kag import find as find_results

    # -r, --prefix and --format may come before `find`, as kag's are global.
    parent = ctx.parent.params if ctx.parent is not None else {}
    root = results if results is not None else Path(parent.get("results") or ".")
    prefix = prefix if prefix is not None else str(parent.get("prefix") or "")
    output_format = output_format or str(parent.get("output_format") or "text")
    with user_errors():
        check_format(output_format)
        try:
            pattern = re.compile(regex, re.IGNORECASE if ignore_case else 0)
        except re.error as exc:
            raise CliError(f"REGEX: not a valid regular expression: {exc}", USAGE_ERROR) from None
        if not root.is_dir():
            raise CliError(f"results folder not found: {root} (see --results)", USAGE_ERROR)
        run_folder = is_run_folder(root)
        if run_folder:
            found = find_in(run_folder_results(root)[1], pattern)
        else:
            found = find_results(root, prefix, pattern)
        if output_format == "json":
            typer.echo(json.dumps(found.as_json(), indent=2, ensure_ascii=False))
        elif not found.matches:
            typer.echo("No result matched the pattern.", err=True)
        else:
            for result in found.matches:
                text = " ".join((result.text or "").split())
                typer.echo(
                    f"{dataset_of(result.question)}/{result.question.id}/{result.setup}: "
                    f"{text[:200]}"
                )
            typer.echo(
                f"{len(found.matches)} occurrence(s) out of {found.total} result file(s) "
                "matched the pattern.",
                err=True,
            )
        _refuse_damaged(found.damaged, run_folder)
