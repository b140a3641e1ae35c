"""`lasagna benchmark validate-data PATH`: is this data runnable, and how? With the data's
options `benchmark run` shares (--data-format, --drop-unknown-judgments)."""

from __future__ import annotations

from typing import Annotated

import typer

from lasagna_cli.commands._errors import DATA_ERROR, user_errors
from lasagna_cli.commands._groups import benchmark_app
from lasagna_cli.commands._run_options import CorpusOption

_DATA_FORMAT_HELP = (
    "How the data is read: lasagna, ragas (v0.1 or v0.2+ rows), deepeval (goldens, test "
    "cases) or hf (a Hugging Face dataset) [default: told by the fields]."
)
# `benchmark run`'s --format is its output's (text or json): the data's is --data-format.
DataFormat = Annotated[
    str | None,
    typer.Option("--data-format", help=_DATA_FORMAT_HELP, show_default=False),
]


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
        from lasagna_cli.engine.datasets import validate_data

        lines, runnable = validate_data(
            path,
            drop_unknown_judgments=drop_unknown_judgments,
            data_format=data_format,
            corpus=corpus,
        )
        typer.echo("\n".join(lines))
        if not runnable:
            raise typer.Exit(DATA_ERROR)
