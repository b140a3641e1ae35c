"""`lasagna benchmark list | info | sample`: the registered public benchmarks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from lasagna_cli.commands._errors import check_format, user_errors
from lasagna_cli.commands._groups import benchmark_app

NameArgument = Annotated[
    str, typer.Argument(help="A benchmark name from `lasagna benchmark list`.")
]


@benchmark_app.command("list")
def list_command(
    output_format: Annotated[
        str, typer.Option("--format", help="text (a table) or json.")
    ] = "text",
) -> None:
    """List the public benchmarks lasagna reads, with licence, splits and categories."""
    with user_errors():
        from lasagna_cli.engine.benchmarks import list_benchmarks
        from lasagna_cli.engine.datasets import list_json, list_lines

        check_format(output_format)
        specs = list_benchmarks()
        if output_format == "json":
            typer.echo(json.dumps(list_json(specs), indent=1, ensure_ascii=False))
        else:
            for line in list_lines(specs):
                typer.echo(line)


@benchmark_app.command("info")
def info_command(
    name: NameArgument,
    data_dir: Annotated[
        Path | None,
        typer.Option("--data-dir", help="The benchmark's files: also count what is there."),
    ] = None,
    split: Annotated[
        str | None, typer.Option("--split", help="Split to count [default: the benchmark's].")
    ] = None,
) -> None:
    """Show a benchmark's licence, citation, splits, categories and answer instructions."""
    with user_errors():
        from lasagna_cli.engine.datasets import benchmark_info

        typer.echo("\n".join(benchmark_info(name, data_dir, split)))


@benchmark_app.command("sample")
def sample_command(
    name: NameArgument,
    data_dir: Annotated[
        Path, typer.Option("--data-dir", help="The benchmark's raw files (a folder or the file).")
    ],
    output: Annotated[Path, typer.Option("-o", "--output", help="Folder to write the sample to.")],
    num_docs: Annotated[
        int | None,
        typer.Option("--num-docs", help="Documents to draw; each keeps all its questions."),
    ] = None,
    sample_size: Annotated[
        int | None,
        typer.Option("--sample-size", help="Questions to draw (documents added until N)."),
    ] = None,
    full: Annotated[bool, typer.Option("--full", help="Take the whole benchmark.")] = False,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the draw.")] = 42,
    mode: Annotated[
        str,
        typer.Option(
            "--mode", help="stratified: even quotas across categories; random: no quotas."
        ),
    ] = "stratified",
    split: Annotated[
        str | None, typer.Option("--split", help="Split to sample [default: the benchmark's].")
    ] = None,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Write into a folder that is not empty.")
    ] = False,
) -> None:
    """Draw a reproducible sample and write it in the benchmark's own format.

    The same seed picks the same documents and questions on any machine. The folder gets
    the sampled raw files and sampling_metadata.json; run it with
    `lasagna benchmark run NAME --data-dir OUT --step gen` (add --generator MODEL and drop
    --step for answers and grades).
    """
    with user_errors():
        from lasagna_cli.engine.datasets import write_benchmark_sample

        lines = write_benchmark_sample(
            name,
            data_dir,
            output,
            num_docs=num_docs,
            sample_size=sample_size,
            full=full,
            seed=seed,
            mode=mode,
            split=split,
            overwrite=overwrite,
        )
        for line, err in lines:
            typer.echo(line, err=err)
