"""`lasagna benchmark validate-data PATH`: is this data runnable, and how?"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from lasagna_cli.commands._errors import DATA_ERROR, USAGE_ERROR, CliError, user_errors
from lasagna_cli.commands._groups import benchmark_app
from lasagna_cli.commands._run_options import CorpusOption

if TYPE_CHECKING:
    pass


DATA_ACCEPTS = "a .jsonl, .csv or SQuAD .json file, or a BEIR folder"


#: How a data file is read: `lasagna_synth.load_data`'s `format=` (kept here so that
#: `--help` does not import lasagna-synth; a test checks it is the same tuple).
DATA_FORMATS = ("lasagna", "ragas", "deepeval", "hf")
_DATA_FORMAT_HELP = (
    "How the data is read: lasagna, ragas (v0.1 or v0.2+ rows), deepeval (goldens, test "
    "cases) or hf (a Hugging Face dataset) [default: told by the fields]."
)
# `benchmark run`'s --format is its output's (text or json): the data's is --data-format.
DataFormat = Annotated[
    str | None,
    typer.Option("--data-format", help=_DATA_FORMAT_HELP, show_default=False),
]


def check_data_format(value: str | None, *, output_format: str | None = None) -> None:
    """--data-format names one of DATA_FORMATS; a data format given to run's --format (the
    output's) is pointed to --data-format."""
    from lasagna_cli.engine import did_you_mean

    if output_format in DATA_FORMATS:
        raise CliError(
            f"--format: is the output's (text or json); to read the data as {output_format}, "
            f"give --data-format {output_format}",
            USAGE_ERROR,
        )
    if value is not None and value not in DATA_FORMATS:
        raise CliError(
            f"--data-format: expected one of {', '.join(DATA_FORMATS)}, found {value!r}"
            f"{did_you_mean(value, DATA_FORMATS)}",
            USAGE_ERROR,
        )


# Shared with `benchmark run`, which reads the same data.
DropUnknownJudgments = Annotated[
    bool,
    typer.Option(
        "--drop-unknown-judgments",
        help="BEIR: drop qrels naming documents or queries the folder lacks (counted).",
    ),
]


@benchmark_app.command("validate-data")
def validate_data(
    path: Annotated[
        str,
        typer.Argument(
            help="A .jsonl, .csv or SQuAD .json file, or a BEIR folder (corpus.jsonl, "
            "queries.jsonl, qrels/<split>.tsv).",
            show_default=False,
        ),
    ],
    drop_unknown_judgments: DropUnknownJudgments = False,
    data_format: Annotated[
        str | None,
        typer.Option("--data-format", "--format", help=_DATA_FORMAT_HELP, show_default=False),
    ] = None,
    corpus: CorpusOption = None,
) -> None:
    """Check your benchmark data: counts, the name it runs under, the tracks it supports,
    and what each field of another tool's rows (RAGAS, DeepEval) was read as.

    Exit 0 when it can be run; exit 1 with every problem listed (each naming its row and
    field) when it cannot; exit 2 when PATH does not exist or a flag is wrong.
    """
    with user_errors():
        check_data_format(data_format)
        from lasagna_cli.engine.config import SWEEP_SUFFIXES
        from lasagna_synth import DataError, load_data_and_outputs

        if Path(path).suffix.lower() in SWEEP_SUFFIXES and not Path(path).is_dir():
            raise CliError(
                f"{path}: validate-data checks one data file or BEIR folder, and this is a sweep "
                "file; validate each `path:` it lists, or run it: `lasagna benchmark run "
                f"{shlex.quote(path)}` checks every benchmark before anything loads",
                USAGE_ERROR,
            )
        from lasagna_cli.engine.config import check_data_path

        check_data_path(path, DATA_ACCEPTS)
        try:
            data, outputs = load_data_and_outputs(
                path, drop_unknown_judgments=drop_unknown_judgments, format=data_format
            )
        except DataError as exc:
            typer.echo(str(exc))
            raise typer.Exit(DATA_ERROR) from None
        from lasagna_cli.engine.datasets import validation_lines

        lines, runnable = validation_lines(
            data, path, data_format=data_format, has_outputs=bool(outputs), corpus=corpus
        )
        typer.echo("\n".join(lines))
        if not runnable:
            raise typer.Exit(DATA_ERROR)
