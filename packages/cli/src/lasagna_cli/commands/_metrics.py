"""`lasagna metrics ...`: deterministic scoring of prediction files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lasagna_cli.commands._errors import USAGE_ERROR, CliError, check_format, user_errors
from lasagna_cli.commands._groups import metrics_app


def _existing_file(path: Path, what: str) -> Path:
    if not path.exists():
        raise CliError(f"{what} {path}: no such file; check the path", USAGE_ERROR)
    if path.is_dir():
        raise CliError(f"{what} {path}: is a folder, expected a JSON file", USAGE_ERROR)
    return path


@metrics_app.command("squad")
def squad(
    predictions: Annotated[
        Path,
        typer.Argument(
            metavar="PREDICTIONS.json",
            help='The predictions: {"question id": "answer", ...}; "" answers "no answer".',
            show_default=False,
        ),
    ],
    dataset: Annotated[
        Path,
        typer.Argument(
            metavar="DATASET.json",
            help="The official SQuAD v1.1 or v2.0 dataset file the predictions answer.",
            show_default=False,
        ),
    ],
    v1: Annotated[
        bool | None,
        typer.Option(
            "--v1/--v2",
            help="Score with the SQuAD v1.1 or v2.0 rules. Default: the dataset's version "
            "field; without one, v2.0.",
            show_default=False,
        ),
    ] = None,
    na_prob: Annotated[
        Path | None,
        typer.Option(
            "--na-prob",
            metavar="NA_PROB.json",
            help='v2.0: {"question id": probability of no answer}, as the official '
            "script's --na-prob-file; adds the best thresholds.",
            show_default=False,
        ),
    ] = None,
    na_prob_thresh: Annotated[
        float | None,
        typer.Option(
            "--na-prob-thresh",
            help='With --na-prob: answer "" when the probability exceeds this [default: 1.0].',
            show_default=False,
        ),
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print exactly what the official evaluation script prints."),
    ] = False,
    output_format: Annotated[
        str, typer.Option("--format", help="text (a table) or json (as --json).")
    ] = "text",
) -> None:
    """Exact match and F1 of SQuAD predictions, overall and for answerable (HasAns) and
    unanswerable (NoAns) questions, equal to the official evaluation scripts.

    A question without a prediction scores 0 (with a warning); a prediction for a question
    the dataset does not have is an error.
    """
    with user_errors():
        from lasagna_metrics import evaluate_squad_files

        check_format(output_format)
        as_json = as_json or output_format == "json"
        if na_prob_thresh is not None and na_prob is None:
            raise CliError("--na-prob-thresh needs --na-prob NA_PROB.json", USAGE_ERROR)
        if v1 and na_prob is not None:
            raise CliError(
                "--na-prob applies to the SQuAD v2.0 rules only; drop --v1 or --na-prob",
                USAGE_ERROR,
            )
        result = evaluate_squad_files(
            _existing_file(predictions, "predictions"),
            _existing_file(dataset, "dataset"),
            version=None if v1 is None else ("1.1" if v1 else "2.0"),
            na_probs=None if na_prob is None else _existing_file(na_prob, "--na-prob"),
            na_prob_thresh=1.0 if na_prob_thresh is None else na_prob_thresh,
        )
        if result.missing:
            first = ", ".join(result.missing[:3])
            typer.echo(
                f"warning: {len(result.missing)} question(s) have no prediction and score 0 "
                f"(first: {first})",
                err=True,
            )
        typer.echo(result.official_json() if as_json else result.table())
