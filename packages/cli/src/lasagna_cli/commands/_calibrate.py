"""`lasagna judge calibrate`: how well a judge agrees with human labels."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from lasagna_cli.commands._errors import USAGE_ERROR, CliError, check_format, user_errors
from lasagna_cli.commands._groups import judge_app

if TYPE_CHECKING:
    pass


def _read_labels(path: Path, id_field: str, label_field: str) -> dict[str, tuple[int, object]]:
    from lasagna_judge import did_you_mean_field, read_jsonl

    labels: dict[str, tuple[int, object]] = {}
    for number, data in read_jsonl(path, "labels file"):
        for name in (id_field, label_field):
            if name not in data:
                raise CliError(
                    f"{path}:{number}: missing field {name!r}{did_you_mean_field(name, data)}; "
                    f"each labels row needs {id_field!r} and {label_field!r} (see --id-field and "
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
    from lasagna_judge import read_jsonl

    rows = list(read_jsonl(path, "graded file"))
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
        check_format(output_format)
        as_json = as_json or output_format == "json"
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
        if path.is_dir():
            raise CliError(
                f"{what} {path} is a folder; give the path to a .jsonl file", USAGE_ERROR
            )
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
    others = [(row, str(row["prediction"])) for _, row in graded if str(row["id"]) not in labels]
    result = calibrate(
        matched,
        human,
        [str(row["prediction"]) for row in matched],
        correct_at=correct_at,
        unlabelled=others,
    )
    from lasagna_cli.engine import calibration_lines
    from lasagna_judge import constant_judge

    warning = constant_judge(
        [
            row["score"]
            for row in matched
            if row.get("status") == "ok" and row.get("score") is not None
        ],
        against_labels=True,
    )
    unlabelled = len(graded) - len(matched)
    graded_ids = {str(row["id"]) for _, row in graded}
    ungraded = sum(1 for key in labels if key not in graded_ids)
    if as_json:
        data = result.to_dict() | {"unlabelled": unlabelled, "labels_without_grade": ungraded}
        if warning:  # in the figures it is about, and on stderr for whoever reads the log
            data["warning"] = warning
            typer.echo(f"warning: {warning}", err=True)
        typer.echo(json.dumps(data, indent=2))
    else:
        # Above the table it speaks of, in the same stream: on stderr it could come out
        # after the table (stdout and stderr read apart, or one of them redirected).
        warned = [f"warning: {warning}"] if warning else []
        typer.echo("\n".join(warned + calibration_lines(result, unlabelled, ungraded)))
