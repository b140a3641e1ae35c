"""`lasagna judge grade | calibrate`: grade answers with an LLM, then check it against people.

Heavy imports (the judge, and through it openai and instructor) happen inside the commands,
so `lasagna --help` stays instant.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from lasagna_cli.commands._batch import BatchOption
from lasagna_cli.commands._errors import user_errors
from lasagna_cli.commands._executors import ExecutorOption, RayAddressOption
from lasagna_cli.commands._groups import judge_app
from lasagna_cli.commands._llm import auto_concurrency, concurrency_option
from lasagna_cli.commands._rates import RpmOption, TpmOption, rate_limits
from lasagna_cli.engine import check_grading, read_grading
from lasagna_cli.engine.config import JUDGE_MAX_CHARS

if TYPE_CHECKING:
    from lasagna_cli.commands._executors import ExecutorChoice


# -- grade --------------------------------------------------------------------------------


@judge_app.command("grade")
def grade_command(
    input_path: Annotated[
        Path,
        typer.Argument(
            metavar="INPUT.jsonl",
            help="Rows of id, question, answers (a string or a list) and prediction.",
        ),
    ],
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model",
            help="provider/model, e.g. openai/gpt-4o-mini or local/smollm2 (default: "
            "$MODEL_NAME). Given more than once: a jury; each judge grades every answer.",
        ),
    ] = None,
    rubric: Annotated[
        str,
        typer.Option(
            "--rubric", help="binary (0 or 4), scale (0-4), or a .toml/.yaml rubric file."
        ),
    ] = "binary",
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url", help="An OpenAI-compatible server (vLLM, Ollama, llama.cpp, ...)."
        ),
    ] = None,
    concurrency: Annotated[int | None, concurrency_option("Answers graded at once", min=1)] = None,
    rpm: RpmOption = None,
    tpm: TpmOption = None,
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "-o", "--output", "--out", help="Write graded rows here (default: standard output)."
        ),
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Do not read or write the response cache.")
    ] = False,
    prices: Annotated[
        Path | None,
        typer.Option(
            "--prices",
            metavar="FILE",
            help='A JSON or TOML price table for the summary\'s cost: {"openai/gpt-4o-mini": '
            "[0.15, 0.6]} in USD per 1M input and output tokens.",
            show_default=False,
        ),
    ] = None,
    max_chars: Annotated[
        int,
        typer.Option(
            "--max-chars",
            min=1,
            help="Refuse a row whose question, answers and prediction hold more characters "
            "than this (a judge would be sent all of it, and billed for it).",
        ),
    ] = JUDGE_MAX_CHARS,
    bias_check: Annotated[
        int,
        typer.Option(
            "--bias-check",
            metavar="N",
            min=0,
            help="Grade N sampled answers twice more, padded with filler and with their "
            "references reversed, and say how often the grade moved (up to 2N more calls).",
        ),
    ] = 0,
    batch: BatchOption = False,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Print the judge calls (and --bias-check's), tokens estimated and, with "
            "--prices, the most they cost (with --batch too); call nothing, write nothing.",
        ),
    ] = False,
) -> None:
    """Grade each prediction against its answers with an LLM judge.

    Output rows are the input rows plus the grade fields (score, status, path, reasoning,
    rubric, prompt sha256, model, raw output, tokens, latency). A summary follows: unparsed
    and error grades are counted, never averaged as 0; tokens, and their cost with
    --prices. Successful calls are cached, so running the same command again after an
    interruption or errors only pays for the rest.
    """
    with user_errors():
        from lasagna_cli.commands._executors import executor_choice

        chosen = executor_choice(executor, ray_address)
        limits = rate_limits(rpm, tpm)
        models = model or []
        given: list[str | None] = [*models] or [None]  # None: MODEL_NAME
        if dry_run:  # no key, no server needed
            from lasagna_cli.commands._llm import load_prices, resolve_model
            from lasagna_cli.engine import grade_dry_run_lines

            checked = read_grading(input_path, rubric, None, max_chars)
            table = load_prices(prices) if prices is not None else None
            names = [resolve_model(m) for m in given]
            typer.echo("\n".join(grade_dry_run_lines(*checked, names, bias_check, table)))
            return
        if concurrency is None:
            concurrency = auto_concurrency(given, base_url)
        check_grading(models, chosen.kind, batch=batch, bias_check=bias_check)
        settings: dict[str, Any] = {
            "base_url": base_url,
            "concurrency": concurrency,
            "no_cache": no_cache,
            "requests_per_minute": limits[0],
            "tokens_per_minute": limits[1],
        }
        _grade(
            input_path, given, rubric, out, prices, max_chars, chosen, bias_check, batch, settings
        )


def _grade(
    input_path: Path,
    models: list[str | None],
    rubric_name: str,
    out: Path | None,
    prices: Path | None,
    max_chars: int,
    chosen: ExecutorChoice,
    bias_check: int,
    batch: bool,
    settings: dict[str, Any],
) -> None:
    """One judge (MODEL_NAME's when `models` is [None]), or a jury: every answer graded by
    each judge; each output row then holds the jury's grade (`lasagna_judge.Verdict.to_dict`),
    the summary each judge's figures and the jury's."""
    from functools import partial

    from lasagna_cli.commands import _batch
    from lasagna_cli.commands._executors import make_executor
    from lasagna_cli.commands._grade_summary import run_grading, write_graded
    from lasagna_cli.commands._llm import build_llm, load_prices
    from lasagna_cli.commands._progress import TaskProgress
    from lasagna_cli.engine import file_grading_lines, jury_grading_lines
    from lasagna_cli.engine.run import batch_state_path, check_batch, grade_remotely
    from lasagna_judge import (
        BatchReport,
        FileGrading,
        grade_answers,
        grade_answers_by_jury,
        grade_requests,
    )

    price_table = load_prices(prices) if prices is not None else None
    rubric, rows = read_grading(input_path, rubric_name, out, max_chars)
    llm_settings = {"prices": price_table, **settings}
    llms = [build_llm(m, **llm_settings) for m in models]
    what = f"a jury of {len(llms)}" if len(llms) > 1 else llms[0].model
    progress = TaskProgress(len(rows) * len(llms), f"grading with {what}")

    def on_grade(*found: Any) -> None:  # (judge,) index, grade
        progress.advance("failed" if found[-1].status == "error" else "done")

    if len(llms) > 1:
        jury = run_grading(
            progress,
            lambda: grade_answers_by_jury(
                llms, rubric, rows, concurrency=settings["concurrency"], on_grade=on_grade
            ),
        )
        lines = jury_grading_lines(jury.verdicts, llms, prices)
        return write_graded(jury.rows, lines, out, jury.failure)
    llm = llms[0]
    if batch:
        check_batch(llm, settings["no_cache"])
    batches: list[BatchReport] = []
    remote = None
    if chosen.kind != "local":  # each answer graded on a worker by the judge it builds
        make = partial(build_llm, models[0], **llm_settings)
        executor = partial(make_executor, settings["concurrency"], chosen)
        remote = grade_remotely(executor, rubric, make)

    async def run() -> FileGrading:
        if batch:  # the answers into the cache; the grading then reads them there
            try:
                requests = grade_requests(rubric, [row.item() for row in rows])
                state = batch_state_path(out or input_path)
                batches.append(await _batch.prefill(llm, requests, state))
            except BaseException:
                await llm.aclose()
                raise
        return await grade_answers(
            llm,
            rubric,
            rows,
            concurrency=settings["concurrency"],
            on_grade=on_grade,
            bias_check=bias_check,
            remote=remote,
        )

    found = run_grading(progress, run)
    lines = file_grading_lines(found, llm, prices, price_table, batches)
    write_graded(found.rows, lines, out, found.failure)
