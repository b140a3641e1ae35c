"""`lasagna benchmark list | info | sample`: the registered public benchmarks."""

from __future__ import annotations

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

        check_format(output_format)
        specs = list_benchmarks()
        if output_format == "json":
            import json

            from lasagna_cli.engine.datasets import list_json

            typer.echo(json.dumps(list_json(specs), indent=1, ensure_ascii=False))
            return
        from lasagna_cli.engine.datasets import list_lines

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
        from lasagna_cli.engine.benchmarks import (
            get_benchmark_spec,
            load_benchmark,
        )
        from lasagna_cli.engine.datasets import data_lines, info_lines

        spec = get_benchmark_spec(name)
        lines = info_lines(spec)
        if data_dir is not None:
            bench = load_benchmark(name, data_dir, split, with_text=False)
            lines += data_lines(bench)
        typer.echo("\n".join(lines))


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
        from lasagna_cli.engine.benchmarks import (
            check_sample_output,
            get_benchmark_spec,
            load_benchmark,
            sample_benchmark,
            write_sample,
        )
        from lasagna_cli.engine.datasets import sample_lines
        from lasagna_cli.engine.records import check_writable

        spec = get_benchmark_spec(name)
        chosen = check_sample_output(mode, output, overwrite)
        bench = load_benchmark(name, data_dir, split, with_text=False)
        sample = sample_benchmark(
            bench,
            num_docs=num_docs,
            sample_size=sample_size,
            full=full,
            seed=seed,
            mode=chosen,
            unit=spec.sampling_unit,
        )
        check_writable(output, f"-o {output}", "the sample folder")
        written = write_sample(sample, bench, data_dir, output)
        lines = sample_lines(
            name, spec, bench, sample, files=len(written), output=output, seed=seed
        )
        for line, err in lines:
            typer.echo(line, err=err)
