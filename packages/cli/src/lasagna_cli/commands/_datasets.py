"""`lasagna benchmark list | info | sample`: the registered public benchmarks."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from lasagna_cli.commands._errors import USAGE_ERROR, CliError, check_format, user_errors
from lasagna_cli.commands._groups import benchmark_app
from lasagna_cli.engine import counted

if TYPE_CHECKING:
    pass


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

            listed = [
                {
                    "name": spec.name,
                    "title": spec.title,
                    "splits": list(spec.splits),
                    "default_split": spec.default_split,
                    "categories": dict(spec.categories),
                    "licence": spec.licence,
                    "homepage": spec.homepage,
                }
                for spec in specs
            ]
            typer.echo(json.dumps(listed, indent=1, ensure_ascii=False))
            return
        rows = [
            (
                spec.name,
                spec.title,
                ", ".join(spec.splits),
                str(len(spec.categories)),
                spec.licence.split(" (")[0].split(";")[0],
            )
            for spec in specs
        ]
        header = ("name", "benchmark", "splits", "categories", "licence")
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
        for row in [header, *rows]:
            cells = (cell.ljust(w) for cell, w in zip(row, widths, strict=True))
            typer.echo("  ".join(cells).rstrip())
        typer.echo(
            "\nDetails: lasagna benchmark info NAME [--data-dir DIR]. Nothing is downloaded: "
            "point --data-dir at the benchmark's files."
        )


@benchmark_app.command("info")
def info_command(
    name: Annotated[str, typer.Argument(help="A benchmark name from `lasagna benchmark list`.")],
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


def _check_out(out: Path, overwrite: bool) -> None:
    if out.exists() and not out.is_dir():
        raise CliError(f"-o {out}: expected a folder, found a file; choose a folder", USAGE_ERROR)
    if out.is_dir() and any(out.iterdir()) and not overwrite:
        raise CliError(
            f"-o {out} is not empty; choose a new folder, or pass --overwrite to write the "
            "sample over it",
            USAGE_ERROR,
        )


@benchmark_app.command("sample")
def sample_command(
    name: Annotated[str, typer.Argument(help="A benchmark name from `lasagna benchmark list`.")],
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
            SAMPLE_MODES,
            get_benchmark_spec,
            load_benchmark,
            sample_benchmark,
            write_sample,
        )

        spec = get_benchmark_spec(name)
        if mode not in SAMPLE_MODES:
            raise CliError(f"--mode: expected stratified or random, found {mode!r}", USAGE_ERROR)
        _check_out(output, overwrite)
        bench = load_benchmark(name, data_dir, split, with_text=False)
        sample = sample_benchmark(
            bench,
            num_docs=num_docs,
            sample_size=sample_size,
            full=full,
            seed=seed,
            mode=mode,
            unit=spec.sampling_unit,
        )
        from lasagna_cli.engine.records import check_writable

        check_writable(output, f"-o {output}", "the sample folder")
        written = write_sample(sample, bench, data_dir, output)
        meta = sample.metadata
        typer.echo(
            f"{name} ({bench.split}): {meta['sampled']['documents']} of "
            f"{meta['original']['documents']} documents, {meta['sampled']['questions']} of "
            f"{meta['original']['questions']} questions (seed {seed}"
            + (f", {meta['mode']}" if meta["mode"] else "")
            + ")"
        )
        for category, n in meta["sampled"]["categories"].items():
            target = meta.get("category_quotas", {}).get(category)
            typer.echo(f"  {category}: {n}" + (f" (quota {target})" if target is not None else ""))
        if meta.get("shortfall"):
            typer.echo(
                f"  {meta['shortfall']} fewer questions than asked: the benchmark has no more",
                err=True,
            )
        typer.echo(
            f"wrote {counted(len(written), 'file')} to {output} (sampling_metadata.json included)"
        )
        split_flag = f" --split {bench.split}" if bench.split != spec.default_split else ""
        typer.echo(
            f"run it: lasagna benchmark run {name} --data-dir {output}{split_flag} --step gen "
            "(retrieval; add --generator MODEL and drop --step for answers and grades)"
        )
