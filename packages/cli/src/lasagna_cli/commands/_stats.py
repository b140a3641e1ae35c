"""`lasagna benchmark stats`: kag's report per setup (OK/WRONG/ERR/TOT, ACC/PREC/COVER,
GEN/CTX_LEN/RET), lasagna's option extraction, EM/F1 and judge grades beside it; `find`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lasagna_cli.commands._errors import (
    CliError,
    check_format,
    user_errors,
)
from lasagna_cli.commands._grade_summary import JudgeMaxCharsOption, run_grading
from lasagna_cli.commands._groups import benchmark_app
from lasagna_cli.commands._llm import auto_concurrency, concurrency_option
from lasagna_cli.commands._rates import RpmOption, TpmOption, rate_limits
from lasagna_cli.engine.config import JUDGE_MAX_CHARS

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
        import asyncio

        from lasagna_cli.commands._llm import build_llm
        from lasagna_cli.commands._progress import TaskProgress
        from lasagna_cli.engine.kag import StatsJudge, check_stats_source, run_stats

        check_stats_source(results, datasets)
        check_format(output_format)
        if judge is None:
            report = asyncio.run(run_stats(results, datasets, prefix=prefix))
        else:  # the judge built from the flags and the environment, a bar while it grades
            bound = concurrency or auto_concurrency([judge], base_url)
            chosen = StatsJudge(
                judge, lambda: build_llm(
                    judge, base_url=base_url, concurrency=bound, flag="--judge",
                    requests_per_minute=limits[0], tokens_per_minute=limits[1],
                ), rubric, bound, max_chars,
            )  # fmt: skip
            progress = TaskProgress(0, "judge")
            report = run_grading(
                progress,
                lambda: run_stats(
                    results, datasets, prefix=prefix, judge=chosen, on_start=progress.start,
                    on_grade=lambda: progress.advance("done"),
                ),
                "the grades made so far are cached; run the same stats command again to go on "
                "from there",
            )  # fmt: skip
            if report.warning:
                typer.echo(f"warning: {report.warning}", err=True)
        typer.echo(report.render(output_format))
        if report.failure is not None:
            raise CliError(report.failure)


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

    from lasagna_cli.engine.kag import find as find_results

    # -r, --prefix and --format may come before `find`, as kag's are global.
    parent = ctx.parent.params if ctx.parent is not None else {}
    root = results if results is not None else Path(parent.get("results") or ".")
    prefix = prefix if prefix is not None else str(parent.get("prefix") or "")
    output_format = output_format or str(parent.get("output_format") or "text")
    with user_errors():
        check_format(output_format)
        found = find_results(root, prefix, regex, ignore_case=ignore_case)
        if output_format == "json":
            typer.echo(json.dumps(found.as_json(), indent=2, ensure_ascii=False))
        else:
            for line in found.lines():
                typer.echo(line)
            typer.echo(found.tally(), err=True)
        if found.failure is not None:
            raise CliError(found.failure)
