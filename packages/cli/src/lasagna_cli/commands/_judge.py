"""`lasagna judge grade | calibrate`: grade answers with an LLM, then check it against people.

Heavy imports (the judge, and through it openai and instructor) happen inside the commands,
so `lasagna --help` stays instant.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from lasagna_cli.commands._batch import BatchOption
from lasagna_cli.commands._errors import DATA_ERROR, USAGE_ERROR, CliError, user_errors
from lasagna_cli.commands._executors import ExecutorOption, RayAddressOption
from lasagna_cli.commands._grade_dry_run import GradeDryRunOption, grade_dry_run
from lasagna_cli.commands._grade_summary import cost_line, summary_lines
from lasagna_cli.commands._groups import judge_app
from lasagna_cli.commands._jsonl import did_you_mean_field, json_lines, reference_text
from lasagna_cli.commands._llm import auto_concurrency, concurrency_option
from lasagna_cli.commands._rates import RpmOption, TpmOption, rate_limits
from lasagna_cli.engine.config import JUDGE_MAX_CHARS

if TYPE_CHECKING:
    from collections.abc import Callable

    from lasagna_cli.commands._executors import ExecutorChoice
    from lasagna_judge import BatchReport, Grade, Rubric


def load_rubric_option(name: str, flag: str = "--rubric") -> Rubric:
    """The rubric --rubric names: a name that is neither built in nor a file is a usage
    error (exit 2), a rubric file that cannot be used is bad content (exit 1)."""
    from lasagna_judge import JudgeError, load_rubric

    try:
        return load_rubric(name)
    except JudgeError as exc:
        code = DATA_ERROR if Path(name).is_file() else USAGE_ERROR
        raise CliError(f"{flag}: {exc}", code) from None


@dataclass
class _Row:
    line: int
    data: dict[str, Any]
    question: str
    references: list[str]
    prediction: str


#: The judge's limit, the same as `benchmark run --max-chars`'s.
MAX_ROW_CHARS = JUDGE_MAX_CHARS


def _check_sizes(path: Path, rows: list[_Row], limit: int) -> None:
    for row in rows:
        size = len(row.question) + len(row.prediction) + sum(len(r) for r in row.references)
        if size > limit:
            raise CliError(
                f"{path}:{row.line} (id {row.data['id']!r}): {size:,} characters in question, "
                f"answers and prediction, over the limit of {limit:,} (about {size // 4:,} "
                "tokens would go to the judge); shorten the row, or raise --max-chars",
                DATA_ERROR,
            )


def _read_grade_input(path: Path) -> list[_Row]:
    rows: list[_Row] = []
    first_line: dict[str, int] = {}
    for number, data in json_lines(path, "input file"):
        where = f"{path}:{number}"
        for name in ("id", "question", "answers", "prediction"):
            if name not in data:
                raise CliError(
                    f"{where}: missing field {name!r}{did_you_mean_field(name, data)}; each row "
                    "needs id, question, answers (a string or a list of strings) and prediction"
                )
        row_id = data["id"]
        if isinstance(row_id, bool) or not isinstance(row_id, str | int) or row_id == "":
            raise CliError(
                f"{where}: field 'id' must be a non-empty string or an integer, found {row_id!r}"
            )
        key = str(row_id)
        if key in first_line:
            raise CliError(
                f"{where}: duplicate id {row_id!r} (first on line {first_line[key]}); ids "
                "must be unique so that grades can be matched to labels"
            )
        first_line[key] = number
        for name in ("question", "prediction"):
            if not isinstance(data[name], str):
                raise CliError(
                    f"{where}: field {name!r} must be a string, found "
                    f"{type(data[name]).__name__} ({data[name]!r:.60})"
                )
        answers = data["answers"]
        raw = answers if isinstance(answers, list) else [answers]
        references = [reference_text(a) for a in raw]
        texts = [r for r in references if r is not None]
        if len(texts) != len(references) or not any(t.strip() for t in texts):
            raise CliError(
                f"{where}: field 'answers' must be a non-empty string or a list of them, "
                f"found {answers!r:.80}"
            )
        rows.append(_Row(number, data, data["question"], texts, data["prediction"]))
    if not rows:
        raise CliError(f"{path}: no rows; expected one JSON object per line")
    return rows


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
    ] = MAX_ROW_CHARS,
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
    dry_run: Annotated[bool, GradeDryRunOption] = False,
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
        if dry_run:
            checked = _checked_input(input_path, rubric, None, max_chars)
            return grade_dry_run(*checked, models, bias_check, prices)
        if concurrency is None:
            concurrency = auto_concurrency(models or [None], base_url)
        if batch and (len(models) > 1 or chosen.kind != "local"):
            what = f"--executor {chosen.kind}" if len(models) < 2 else "a jury"
            raise CliError(f"--batch grades with one judge here, not {what}", USAGE_ERROR)
        if len(models) > 1:
            if bias_check:
                raise CliError(
                    "--bias-check checks one judge; give one --model (a jury's judges can "
                    "be checked one by one)",
                    USAGE_ERROR,
                )
            _grade_jury(input_path, models, rubric, base_url, concurrency, out, no_cache,
                        prices, max_chars, chosen, limits)  # fmt: skip
            return
        _grade(
            input_path, models[0] if models else None, rubric, base_url, concurrency, out,
            no_cache, prices, max_chars, chosen, bias_check, limits, batch,
        )  # fmt: skip


def _checked_input(
    input_path: Path, rubric_name: str, out: Path | None, max_chars: int
) -> tuple[Rubric, list[_Row]]:
    """The rubric and the rows, checked before any call, and --out checked writable (the
    grades must have somewhere to go)."""
    rubric = load_rubric_option(rubric_name)
    if out is not None and out.is_dir():
        raise CliError(f"--out {out} is a folder: give the path of a .jsonl file", USAGE_ERROR)
    rows = _read_grade_input(input_path)
    _check_sizes(input_path, rows, max_chars or MAX_ROW_CHARS)
    if out is not None:
        from lasagna_cli.engine.records import check_output_file

        check_output_file(out, f"--out {out}", "its folder")
    return rubric, rows


def _grade_jury(
    input_path: Path,
    models: list[str],
    rubric_name: str,
    base_url: str | None,
    concurrency: int,
    out: Path | None,
    no_cache: bool,
    prices: Path | None,
    max_chars: int,
    chosen: ExecutorChoice,
    limits: tuple[float | None, float | None] = (None, None),
) -> None:
    from lasagna_cli.commands._jury import grade_with_jury

    if chosen.kind != "local":
        raise CliError(
            f"--executor {chosen.kind} grades with one judge; a jury ({len(models)} --model) "
            "runs here: leave out --executor",
            USAGE_ERROR,
        )
    rubric, rows = _checked_input(input_path, rubric_name, out, max_chars)
    grade_with_jury(
        models, rubric, rows, base_url=base_url, concurrency=concurrency, no_cache=no_cache,
        prices=prices, out=out, limits=limits,
    )  # fmt: skip


async def _grade_remotely(
    chosen: ExecutorChoice,
    llm_settings: dict[str, Any],
    rubric: Rubric,
    items: list[dict[str, Any]],
    on_grade: Callable[[int, Grade], None],
) -> list[Grade]:
    from lasagna_cli.commands._executors import make_executor
    from lasagna_cli.commands._grade_remote import GradeRecipe, grade_on
    from lasagna_judge import check_items

    check_items(items)  # bad input fails before any worker starts, as locally
    executor = make_executor(int(llm_settings["concurrency"]), chosen)
    return await grade_on(executor, GradeRecipe(items, rubric, llm_settings), on_grade)


def _grade(
    input_path: Path,
    model: str | None,
    rubric_name: str,
    base_url: str | None,
    concurrency: int,
    out: Path | None,
    no_cache: bool,
    prices: Path | None,
    max_chars: int = 0,
    chosen: ExecutorChoice | None = None,
    bias_check: int = 0,
    limits: tuple[float | None, float | None] = (None, None),
    batch: bool = False,
) -> None:
    from lasagna_cli.commands import _batch
    from lasagna_cli.commands._grade_summary import (
        bias_lines,
        nothing_graded,
        run_grading,
        write_graded,
    )
    from lasagna_cli.commands._llm import build_llm, load_prices
    from lasagna_cli.commands._progress import TaskProgress
    from lasagna_judge import BiasCheck, Usage, check_bias, grade_batch, summarize_grades

    price_table = load_prices(prices) if prices is not None else None
    rubric, rows = _checked_input(input_path, rubric_name, out, max_chars)
    llm_settings: dict[str, Any] = {
        "model": model,
        "base_url": base_url,
        "concurrency": concurrency,
        "no_cache": no_cache,
        "prices": price_table,
        "requests_per_minute": limits[0],
        "tokens_per_minute": limits[1],
    }
    llm = build_llm(**llm_settings)
    if batch:
        _batch.check_batch(llm, no_cache)
    items = [
        {"question": r.question, "references": r.references, "prediction": r.prediction}
        for r in rows
    ]
    progress = TaskProgress(len(items), f"grading with {llm.model}")

    def on_grade(index: int, grade: Grade) -> None:
        progress.advance("failed" if grade.status == "error" else "done")

    checks: list[BiasCheck] = []
    graded_usage: list[tuple[Usage, int]] = []  # before the bias check's calls
    batches: list[BatchReport] = []

    async def run() -> list[Grade]:
        try:
            if batch:  # the answers into the cache; grade_batch then reads them there
                batches.append(await _batch.grading(llm, rubric, items, out or input_path))
            if chosen is not None and chosen.kind != "local":
                found = await _grade_remotely(chosen, llm_settings, rubric, items, on_grade)
            else:
                found = await grade_batch(
                    llm, rubric, items, concurrency=concurrency, on_grade=on_grade
                )
            graded_usage.append((llm.usage, llm.calls_made))
            if bias_check:
                checks.extend(
                    await check_bias(
                        llm, rubric, items, found, sample=bias_check, concurrency=concurrency
                    )
                )
            return found
        finally:
            await llm.aclose()

    grades = run_grading(progress, run)

    graded = [{**row.data, **g.to_dict()} for row, g in zip(rows, grades, strict=True)]
    summary = summarize_grades(grades)
    spent, calls = graded_usage[0]
    if chosen is not None and chosen.kind != "local":  # the workers' calls, from their grades
        fresh = [g for g in grades if not g.cached and g.prompt_sha256 is not None]
        spent = Usage(sum(g.input_tokens for g in fresh), sum(g.output_tokens for g in fresh))
        calls = len(fresh)
    lines = summary_lines(
        summary,
        spent=(spent.input_tokens, spent.output_tokens),
        calls=calls,
        cost=cost_line(llm, grades, prices, llm.cost_of(spent, batch=llm.batch_usage)),
    )
    for report in batches:
        lines += _batch.batch_lines(report, llm.model, price_table, prices)
    from lasagna_cli.engine.run import constant_judge

    warning = constant_judge([g.score for g in grades if g.status == "ok"])
    if warning:
        lines.append(f"warning: {warning}")
    lines += bias_lines(checks, llm.calls_made - graded_usage[0][1])
    write_graded(graded, lines, out)
    errors = summary.by_status.get("error", 0)
    first = next((g.error for g in grades if g.status == "error"), None)
    if summary.n and not summary.scored:
        raise nothing_graded(summary.n, summary.by_status, first)
    if errors:
        raise CliError(
            f"{errors} of {summary.n} answers could not be graded (status error; first: "
            f"{first}); run the same command again to retry them, finished calls are cached",
            DATA_ERROR,
        )
