"""`lasagna benchmark prepare`: OpenViking's one-shot dataset sampling (its
scripts/run_sampling.py), from raw files already on disk."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lasagna_cli.commands._errors import DATA_ERROR, USAGE_ERROR, CliError, user_errors
from lasagna_cli.commands._groups import benchmark_app


@benchmark_app.command("prepare")
def prepare(
    raw: Annotated[
        Path,
        typer.Option(
            "--raw-dir",
            help="The raw files: one folder per dataset, raw_data/Locomo as OpenViking's "
            "download_dataset.py leaves them (or raw_data/locomo); nothing is downloaded.",
        ),
    ] = Path("raw_data"),
    output: Annotated[
        Path,
        typer.Option("-o", "--output", help="Where the samples go: <output>/<dataset_name>/."),
    ] = Path("datasets"),
    datasets: Annotated[
        list[str] | None,
        typer.Option(
            "--dataset", help="locomo, syllabusqa, qasper or financebench [default: all four]."
        ),
    ] = None,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Write over samples already there.")
    ] = False,
) -> None:
    """Sample every dataset as OpenViking's run_sampling.py does: stratified, seed 42;
    LoCoMo 3 documents / 100 questions, SyllabusQA 7 / 90, Qasper 8 / 60, FinanceBench 3
    documents with all their questions. Each sample is written in the dataset's own format
    with sampling_metadata.json. Exit 1 when a dataset's raw files are missing (the others
    are written)."""
    with user_errors():
        from lasagna_cli.engine._store import check_writable
        from lasagna_cli.engine.benchmarks._prepare import OFFICIAL, prepare_benchmarks

        if not raw.is_dir():
            raise CliError(
                f"--raw-dir {raw}: no such folder; give the folder holding one folder of raw "
                "files per dataset (raw_data/Locomo, ...)",
                USAGE_ERROR,
            )
        names = [name.lower() for name in datasets or ()]
        for name in names or OFFICIAL:
            target = output / OFFICIAL[name][0] if name in OFFICIAL else None
            if target is not None and target.is_dir() and any(target.iterdir()) and not overwrite:
                raise CliError(
                    f"{target} is not empty; pass --overwrite to write the sample over it, or "
                    "choose another -o",
                    USAGE_ERROR,
                )
        check_writable(output, f"-o {output}")
        prepared = prepare_benchmarks(raw, output, names)
        for done in prepared:
            if done.missing or done.metadata is None:
                typer.echo(
                    f"{done.name}: no raw files in {raw / OFFICIAL[done.name][0]} (or "
                    f"{raw / done.name}); see `lasagna benchmark info {done.name}` for the "
                    "files and where to get them",
                    err=True,
                )
                continue
            meta = done.metadata
            typer.echo(
                f"{done.name}: {meta['sampled']['documents']} of {meta['original']['documents']}"
                f" documents, {meta['sampled']['questions']} of "
                f"{meta['original']['questions']} questions -> {done.out}"
            )
        missing = [d.name for d in prepared if d.missing]
        if missing:
            raise CliError(
                f"{len(missing)} of {len(prepared)} datasets not prepared: {', '.join(missing)}",
                DATA_ERROR,
            )
