"""`lasagna benchmark prepare`: OpenViking's dataset sampling (its scripts/run_sampling.py,
and scripts/sample_dataset.py with that script's flags), from raw files already on disk."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lasagna_cli.commands._errors import user_errors
from lasagna_cli.commands._groups import benchmark_app


@benchmark_app.command("prepare")
def prepare(
    raw: Annotated[
        Path,
        typer.Option(
            "--raw-dir",
            "-i",
            "--input-dir",
            help="The raw files: one folder per dataset, raw_data/Locomo as OpenViking's "
            "download_dataset.py leaves them (or raw_data/locomo); nothing is downloaded.",
        ),
    ] = Path("raw_data"),
    output: Annotated[
        Path,
        typer.Option(
            "-o", "--output", "--output-dir", help="Where the samples go: <output>/<dataset_name>/."
        ),
    ] = Path("datasets"),
    datasets: Annotated[
        list[str] | None,
        typer.Option(
            "--dataset",
            "-d",
            help="Locomo, SyllabusQA, Qasper, FinanceBench (or lowercase) or all; repeat it "
            "for several [default: all].",
        ),
    ] = None,
    sample_size: Annotated[
        int | None,
        typer.Option("--sample-size", "-n", help="Questions to sample (sample_dataset.py's)."),
    ] = None,
    num_docs: Annotated[
        int | None, typer.Option("--num-docs", help="Documents to sample (sample_dataset.py's).")
    ] = None,
    full: Annotated[
        bool, typer.Option("--full", help="The whole dataset (overrides the sizes).")
    ] = False,
    seed: Annotated[int, typer.Option("--seed", "-s", help="The random seed.")] = 42,
    sample_mode: Annotated[
        str, typer.Option("--sample-mode", help="stratified or random.")
    ] = "stratified",
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Write over samples already there.")
    ] = False,
) -> None:
    """Sample OpenViking's datasets as its scripts do, draw for draw: without sizes as
    run_sampling.py (stratified, seed 42; LoCoMo 3 documents / 80 questions, SyllabusQA
    7 / 90, Qasper 8 / 60, FinanceBench 3 / 12); with --sample-size, --num-docs or --full
    as sample_dataset.py with those flags. Each sample is written in the dataset's own
    format with sampling_metadata.json, as the scripts write them. Exit 1 when a dataset's
    raw files are missing (the others are written)."""
    with user_errors():
        from lasagna_cli.engine.benchmarks import (
            check_prepare,
            check_prepared,
            prepare_benchmarks,
            prepared_line,
        )
        from lasagna_cli.engine.records import check_writable

        names = check_prepare(raw, output, datasets or (), overwrite)
        check_writable(output, f"-o {output}")
        prepared = prepare_benchmarks(
            raw, output, names, seed=seed, sample_size=sample_size, num_docs=num_docs,
            full=full, mode=sample_mode,
        )  # fmt: skip
        for done in prepared:
            typer.echo(prepared_line(done, raw), err=done.missing or done.metadata is None)
        check_prepared(prepared)
