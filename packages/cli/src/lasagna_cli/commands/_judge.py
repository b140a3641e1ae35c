"""`lasagna judge grade | calibrate`: grade answers with an LLM, then check it against people.

Heavy imports (the judge, and through it openai and instructor) happen inside the commands,
so `lasagna --help` stays instant.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from lasagna_cli.commands._errors import DATA_ERROR, INTERRUPTED, USAGE_ERROR, CliError, user_errors
from lasagna_cli.commands._groups import judge_app

if TYPE_CHECKING:
    from lasagna_judge import LLM, Calibration, Grade, GradeSummary


@judge_app.callback()
def _judge() -> None:
    """Grade answers with an LLM judge, and measure its agreement with human labels."""


# -- reading JSONL ------------------------------------------------------------------------


def _json_lines(path: Path, what: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line; a bad line is a one-line error."""
    if not path.is_file():
        raise CliError(f"{what} not found: {path}; give the path to a .jsonl file", USAGE_ERROR)
    try:
        # utf-8-sig: a byte-order mark some editors write is not part of the first row
        with path.open(encoding="utf-8-sig") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    value = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise CliError(
                        f"{path}:{number}: expected one JSON object per line, found text that "
                        f"is not JSON ({exc.msg} at column {exc.colno})"
                    ) from None
                if not isinstance(value, dict):
                    raise CliError(
                        f"{path}:{number}: expected a JSON object, found {type(value).__name__}"
                    )
                yield number, value
    except UnicodeDecodeError as exc:
        raise CliError(
            f"{path}: expected UTF-8 text, found undecodable bytes ({exc.reason})"
        ) from None


def _reference_text(value: object) -> str | None:
    """A reference as text: strings as they are, numbers (1577, 8.7) as written."""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return json.dumps(value)
    return None


def _did_you_mean(name: str, data: Mapping[str, Any]) -> str:
    """ " (found 'answer': a typo?)" when the row has a near miss of the field `name`."""
    import difflib

    close = difflib.get_close_matches(name, [str(k) for k in data], n=1, cutoff=0.6)
    return f" (found {close[0]!r}: a typo?)" if close else ""


@dataclass
class _Row:
    line: int
    data: dict[str, Any]
    question: str
    references: list[str]
    prediction: str


def _read_grade_input(path: Path) -> list[_Row]:
    rows: list[_Row] = []
    first_line: dict[str, int] = {}
    for number, data in _json_lines(path, "input file"):
        where = f"{path}:{number}"
        for name in ("id", "question", "answers", "prediction"):
            if name not in data:
                raise CliError(
                    f"{where}: missing field {name!r}{_did_you_mean(name, data)}; each row "
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
        references = [_reference_text(a) for a in raw]
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


# -- writing ------------------------------------------------------------------------------


def _counts(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{name} {count}" for name, count in counts.items())


def _cost_line(llm: LLM, summary: GradeSummary, prices: Path | None) -> str:
    """This run's cost, and what every graded answer's tokens cost (cached ones too)."""
    from lasagna_judge import Usage

    if prices is None:
        return "cost: n/a (give --prices FILE to price the tokens)"
    spent = llm.cost_usd
    if spent is None:
        return f"cost: n/a (no price for {llm.model} in {prices})"
    total = llm.cost_of(Usage(summary.input_tokens, summary.output_tokens))
    return f"cost: ${spent:.4f} this run; ${total:.4f} for all the tokens above"


def _summary_lines(
    summary: GradeSummary, *, spent: tuple[int, int], calls: int, cost: str
) -> list[str]:
    scored = summary.scored
    if summary.mean_score is None:
        mean = "mean score: n/a (no answer got a score)"
    else:
        spread = ", ".join(f"{score}: {n}" for score, n in summary.score_counts.items())
        mean = f"mean score: {summary.mean_score:.3f} over {scored} scored ({spread})"
    unscored = summary.n - scored
    if unscored:
        mean += f"; {unscored} without a score are counted below, not averaged"
    lines = [
        f"graded {summary.n} answers with {', '.join(summary.models) or 'no model call'}, "
        f"rubric {summary.rubric}",
        mean,
        f"status: {_counts(summary.by_status)}",
        f"path: {_counts(summary.by_path)}",
        f"tokens: {summary.input_tokens:,} in, {summary.output_tokens:,} out "
        f"({summary.cached} answers from the cache; this run: {calls} calls, "
        f"{spent[0]:,} in, {spent[1]:,} out)",
        cost,
    ]
    return lines


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
        str | None,
        typer.Option(
            "--model",
            help="provider/model, e.g. openai/gpt-4o-mini or local/smollm2 (default: $MODEL_NAME).",
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
    concurrency: Annotated[
        int, typer.Option("--concurrency", min=1, help="Answers graded at once.")
    ] = 8,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Write graded rows here (default: standard output)."),
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
) -> None:
    """Grade each prediction against its answers with an LLM judge.

    Output rows are the input rows plus the grade fields (score, status, path, reasoning,
    rubric, prompt sha256, model, raw output, tokens, latency). A summary follows: unparsed
    and error grades are counted, never averaged as 0; tokens, and their cost with
    --prices. Successful calls are cached, so running the same command again after an
    interruption or errors only pays for the rest.
    """
    with user_errors():
        _grade(input_path, model, rubric, base_url, concurrency, out, no_cache, prices)


def _grade(
    input_path: Path,
    model: str | None,
    rubric_name: str,
    base_url: str | None,
    concurrency: int,
    out: Path | None,
    no_cache: bool,
    prices: Path | None,
) -> None:
    import asyncio

    from lasagna_cli.commands._llm import build_llm, load_prices
    from lasagna_cli.commands._progress import TaskProgress
    from lasagna_judge import JudgeError, grade_batch, load_rubric, summarize_grades
    from lasagna_synth import write_bytes_atomic

    try:
        rubric = load_rubric(rubric_name)
    except JudgeError as exc:
        raise CliError(f"--rubric: {exc}", USAGE_ERROR) from None
    if out is not None and out.is_dir():
        raise CliError(f"--out {out} is a folder: give the path of a .jsonl file", USAGE_ERROR)
    price_table = load_prices(prices) if prices is not None else None
    rows = _read_grade_input(input_path)
    llm = build_llm(
        model=model,
        base_url=base_url,
        concurrency=concurrency,
        no_cache=no_cache,
        prices=price_table,
    )
    items = [
        {"question": r.question, "references": r.references, "prediction": r.prediction}
        for r in rows
    ]
    progress = TaskProgress(len(items), f"grading with {llm.model}")

    def on_grade(index: int, grade: Grade) -> None:
        progress.advance("failed" if grade.status == "error" else "done")

    async def run() -> list[Grade]:
        try:
            return await grade_batch(llm, rubric, items, concurrency=concurrency, on_grade=on_grade)
        finally:
            await llm.aclose()

    try:
        with progress:
            grades = asyncio.run(run())
    except KeyboardInterrupt:
        typer.echo(
            "interrupted: no grade was written; finished calls are cached, so the same "
            "command resumes where this one stopped",
            err=True,
        )
        raise typer.Exit(INTERRUPTED) from None

    graded = [{**row.data, **g.to_dict()} for row, g in zip(rows, grades, strict=True)]
    summary = summarize_grades(grades)
    lines = _summary_lines(
        summary,
        spent=(llm.usage.input_tokens, llm.usage.output_tokens),
        calls=llm.calls_made,
        cost=_cost_line(llm, summary, prices),
    )
    if out is not None:
        text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in graded)
        write_bytes_atomic(out, text.encode("utf-8"))
        lines.append(f"wrote {len(graded)} graded rows to {out}")
        typer.echo("\n".join(lines))
    else:
        for row in graded:
            typer.echo(json.dumps(row, ensure_ascii=False))
        typer.echo("\n".join(lines), err=True)
    errors = summary.by_status.get("error", 0)
    if errors:
        first = next(g.error for g in grades if g.status == "error")
        raise CliError(
            f"{errors} of {summary.n} answers could not be graded (status error; first: "
            f"{first}); run the same command again to retry them, finished calls are cached",
            DATA_ERROR,
        )


# -- calibrate ----------------------------------------------------------------------------


def _read_labels(path: Path, id_field: str, label_field: str) -> dict[str, tuple[int, object]]:
    labels: dict[str, tuple[int, object]] = {}
    for number, data in _json_lines(path, "labels file"):
        for name in (id_field, label_field):
            if name not in data:
                raise CliError(
                    f"{path}:{number}: missing field {name!r}{_did_you_mean(name, data)}; each "
                    f"labels row needs {id_field!r} and {label_field!r} (see --id-field and "
                    "--label-field)"
                )
        key = str(data[id_field])
        if key in labels:
            raise CliError(
                f"{path}:{number}: duplicate id {data[id_field]!r} (first on line "
                f"{labels[key][0]}); each answer needs one label"
            )
        labels[key] = (number, data[label_field])
    return labels


def _read_graded(path: Path) -> list[tuple[int, dict[str, Any]]]:
    rows = list(_json_lines(path, "graded file"))
    for number, data in rows:
        for name in ("id", "prediction", "score", "status"):
            if name not in data:
                raise CliError(
                    f"{path}:{number}: missing field {name!r}; give the output of "
                    "`lasagna judge grade` (rows with id, prediction, score and status)"
                )
    if not rows:
        raise CliError(f"{path}: no rows; expected the output of `lasagna judge grade`")
    return rows


def _calibration_lines(result: Calibration, unlabelled: int, ungraded: int) -> list[str]:
    skipped = sum(result.skipped.values())
    total = result.compared + skipped + unlabelled
    notes = [f"{n} {why}" for why, n in result.skipped.items()]
    if unlabelled:
        notes.append(f"{unlabelled} without a label")
    lines = [
        f"compared {result.compared} of {total} graded answers"
        + (f" (left out: {', '.join(notes)})" if notes else "")
        + (f"; {ungraded} labels have no graded answer" if ungraded else ""),
        f"a score >= {result.correct_at} counts as correct; a lower one as refusal when "
        "the prediction declines to answer, else incorrect",
        "",
        "human \\ judge  " + "".join(f"{label:>11}" for label in result.three_class.labels),
    ]
    for label, counts in zip(result.three_class.labels, result.three_class.confusion, strict=True):
        lines.append(f"{label:<15}" + "".join(f"{c:>11}" for c in counts))
    lines.append("")
    for name, agreement in (
        ("three classes", result.three_class),
        ("correct vs not", result.binary),
    ):
        accuracy = "n/a" if agreement.accuracy is None else f"{agreement.accuracy:.3f}"
        kappa = "n/a" if agreement.kappa is None else f"{agreement.kappa:.3f}"
        lines.append(f"{name:<15} accuracy {accuracy}  Cohen's kappa {kappa}")
    return lines


@judge_app.command("calibrate")
def calibrate_command(
    graded_path: Annotated[
        Path,
        typer.Argument(metavar="GRADED.jsonl", help="The output of `lasagna judge grade`."),
    ],
    labels_path: Annotated[
        Path,
        typer.Option(
            "--labels",
            metavar="LABELS.jsonl",
            help="Human labels: rows of id and label (Correct / Incorrect / Refusal, ...).",
        ),
    ],
    id_field: Annotated[
        str, typer.Option("--id-field", help="The id field of the labels rows.")
    ] = "id",
    label_field: Annotated[
        str, typer.Option("--label-field", help="The label field of the labels rows.")
    ] = "label",
    correct_at: Annotated[
        int,
        typer.Option(
            "--correct-at",
            help="The lowest score that counts as correct (3: binary's 4, scale's 3 and 4).",
        ),
    ] = 3,
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures as JSON.")] = False,
) -> None:
    """How well the judge agrees with human labels: accuracy, Cohen's kappa, confusion.

    Grades are matched to labels by id. Unparsed and error grades are left out and
    counted; so are answers without a label.
    """
    with user_errors():
        _calibrate(graded_path, labels_path, id_field, label_field, correct_at, as_json)


def _calibrate(
    graded_path: Path,
    labels_path: Path,
    id_field: str,
    label_field: str,
    correct_at: int,
    as_json: bool,
) -> None:
    from lasagna_judge import JudgeError, calibrate, normalize_label

    for path, what in ((graded_path, "graded file"), (labels_path, "labels file")):
        if not path.is_file():
            raise CliError(f"{what} not found: {path}; give the path to a .jsonl file", USAGE_ERROR)
    graded = _read_graded(graded_path)
    labels = _read_labels(labels_path, id_field, label_field)
    matched = [row for _, row in graded if str(row["id"]) in labels]
    if not matched:
        raise CliError(
            f"no id of {graded_path} appears in {labels_path} (field {id_field!r}); check "
            "that both files describe the same answers, or set --id-field"
        )
    human = []
    for row in matched:
        line, value = labels[str(row["id"])]
        try:
            human.append(normalize_label(value))
        except JudgeError as exc:
            raise CliError(f"{labels_path}:{line}: field {label_field!r}: {exc}") from None
    result = calibrate(
        matched, human, [str(row["prediction"]) for row in matched], correct_at=correct_at
    )
    unlabelled = len(graded) - len(matched)
    graded_ids = {str(row["id"]) for _, row in graded}
    ungraded = sum(1 for key in labels if key not in graded_ids)
    if as_json:
        data = result.to_dict() | {"unlabelled": unlabelled, "labels_without_grade": ungraded}
        typer.echo(json.dumps(data, indent=2))
    else:
        typer.echo("\n".join(_calibration_lines(result, unlabelled, ungraded)))
