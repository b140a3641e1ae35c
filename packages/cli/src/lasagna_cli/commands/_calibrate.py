"""`lasagna judge calibrate`: how well a judge agrees with human labels."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lasagna_cli.commands._errors import check_format, user_errors
from lasagna_cli.commands._groups import judge_app


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
    output_format: Annotated[
        str, typer.Option("--format", help="text or json (--json is --format json).")
    ] = "text",
) -> None:
    """How well the judge agrees with human labels: accuracy, Cohen's kappa, confusion.

    Grades are matched to labels by id. Unparsed and error grades are left out and
    counted; so are answers without a label. When only some answers are labelled, the
    share of correct answers is also estimated by prediction-powered inference (PPI++): the
    judge's verdicts on every answer corrected by the labels, with its 95% interval.
    """
    with user_errors():
        from lasagna_cli.engine import calibration_output
        from lasagna_judge import calibrate_files

        check_format(output_format)
        found = calibrate_files(
            graded_path, labels_path, id_field=id_field, label_field=label_field,
            correct_at=correct_at,
        )  # fmt: skip
        text, warning = calibration_output(found, as_json or output_format == "json")
        if warning is not None:  # for whoever reads the log
            typer.echo(warning, err=True)
        typer.echo(text)
