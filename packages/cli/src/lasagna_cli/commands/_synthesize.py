"""`lasagna benchmark synthesize CORPUS`: question sets from the user's own documents.

Parses, plans (refusing bad input before any call), then either prints the dry run or
runs the calls with a progress bar and writes the rows atomically at the end. The heavy
work lives in lasagna_synth, imported inside the command.
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from lasagna_cli.commands import _batch
from lasagna_cli.commands._batch import BatchOption
from lasagna_cli.commands._errors import INTERRUPTED, user_errors
from lasagna_cli.commands._groups import benchmark_app
from lasagna_cli.commands._llm import auto_concurrency, concurrency_option, load_prices
from lasagna_cli.commands._rates import RpmOption, TpmOption, rate_limits
from lasagna_cli.commands._terminal import shown
from lasagna_cli.engine import (
    batch_lines,
    check_synthesis,
    spent_line,
    synthesis_lines,
    synthesis_plan_lines,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from lasagna_judge import LLM, BatchReport, BatchRequest
    from lasagna_synth import Plan, Synthesis

DEFAULT_OUT = "synthetic_qa.jsonl"
#: --format: `lasagna_synth.write_rows`'s formats (here so --help imports no lasagna-synth).
WRITE_FORMATS = ("lasagna", "ragas", "deepeval")


@benchmark_app.command("synthesize")
def synthesize_command(
    corpus: Annotated[
        str,
        typer.Argument(
            help="A folder of documents (.md, .txt, .pdf, .docx, .html, ...) or one file.",
            show_default=False,
        ),
    ],
    n: Annotated[
        str, typer.Option("--n", metavar="N", help="Questions to plan (at most 1,000,000).")
    ] = "100",
    out: Annotated[
        Path, typer.Option("-o", "--output", "--out", help="The JSONL file to write.")
    ] = Path(DEFAULT_OUT),
    mix: Annotated[
        str,
        typer.Option("--mix", help="Share of each question type, type=share pairs summing to 1."),
    ] = "factoid=0.6,multihop=0.3,unanswerable=0.1",
    seed: Annotated[str, typer.Option("--seed", metavar="SEED", help="Seed of the plan.")] = "42",
    model: Annotated[
        str | None,
        typer.Option(
            "--model", help="provider/name of the LLM (default: MODEL_NAME).", show_default=False
        ),
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option("--base-url", help="An OpenAI-compatible server.", show_default=False),
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Print the plan, calls, tokens and cost; call nothing."),
    ] = False,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace --out if it exists.")
    ] = False,
    concurrency: Annotated[
        str | None, concurrency_option("Questions in flight at once", metavar="N")
    ] = None,
    chunker: Annotated[
        str,
        typer.Option(
            "--chunker", help="fixed (word windows; also: words), sentences, markdown or tokens."
        ),
    ] = "fixed",
    chunk_words: Annotated[
        str, typer.Option("--chunk-words", metavar="WORDS", help="Words per passage.")
    ] = "200",
    prices: Annotated[
        Path | None,
        typer.Option(
            "--prices",
            help="A JSON or TOML price table, to price the dry run and the run: "
            '{"openai/gpt-4o-mini": [0.15, 0.6]} in USD per 1M input and output tokens.',
            show_default=False,
        ),
    ] = None,
    no_cache: Annotated[
        bool,
        typer.Option(
            "--no-cache", help="Do not use the LLM cache (a rerun then repeats every call)."
        ),
    ] = False,
    include_license: Annotated[
        bool,
        typer.Option(
            "--include-license",
            help="Read LICENSE, COPYING and NOTICE files of the folder as documents too.",
        ),
    ] = False,
    out_format: Annotated[
        str,
        typer.Option(
            "--format",
            help="How the rows are written: lasagna (its JSONL rows), ragas (RAGAS v0.2+ "
            "samples: user_input, reference, reference_contexts) or deepeval (DeepEval goldens: "
            "input, expected_output, context); each reads back as the same rows.",
        ),
    ] = "lasagna",
    rpm: RpmOption = None,
    tpm: TpmOption = None,
    batch: BatchOption = False,
) -> None:
    """Write a question set from your documents: factoid, multihop and unanswerable
    questions, each checked by a second LLM call. Use --dry-run first."""
    with user_errors():
        limits = rate_limits(rpm, tpm)
        options = check_synthesis(
            corpus, out, n=n, seed=seed, concurrency=concurrency, out_format=out_format,
            formats=WRITE_FORMATS, mix=mix, chunker=chunker, chunk_words=chunk_words,
            dry_run=dry_run, overwrite=overwrite,
        )  # fmt: skip
        bound = options.concurrency or auto_concurrency([model], base_url)
        price_table = load_prices(prices) if prices is not None else None

        def planned() -> Plan:
            from lasagna_cli.commands._progress import StageProgress
            from lasagna_synth import plan

            with StageProgress() as steps:
                found = plan(
                    corpus, n=options.questions, mix=options.mix, seed=options.seed,
                    chunker=options.chunker, chunk_words=options.chunk_words,
                    on_step=steps.step, include_license=include_license,
                )  # fmt: skip
            for warning in found.warnings:
                typer.echo(f"warning: {warning}", err=True)
            return found

        if dry_run:
            from lasagna_synth import cl100k_base

            cl100k_base()  # first: its loading peak then does not add up with the corpus's
            lines = synthesis_plan_lines(planned(), out, overwrite, model, price_table)
            typer.echo("\n".join(shown(line) for line in lines))
            return

        from lasagna_cli.commands._llm import build_llm
        from lasagna_cli.engine.records import check_output_file
        from lasagna_cli.engine.run import check_batch
        from lasagna_synth import write_rows

        # Before any (paid) call: the questions must have somewhere to go.
        check_output_file(out, f"--out {out}", "its folder")
        llm = build_llm(
            model, base_url, bound, no_cache=no_cache, prices=price_table,
            requests_per_minute=limits[0], tokens_per_minute=limits[1],
        )  # fmt: skip
        reports: list[BatchReport] = []
        if batch:
            check_batch(llm, no_cache)
        result = _run(llm, planned, bound, out, reports if batch else None)
        write_rows(result.rows, out, format=out_format, corpus=Path(corpus))
        spent = spent_line(llm, prices)
        lines = [shown(line) for line in synthesis_lines(result, out, spent, out_format)]
        for report in reports:
            lines[-1:-1] = batch_lines(report, llm.model, price_table, prices)
        typer.echo("\n".join(lines))


def _run(
    llm: LLM,
    planned: Callable[[], Plan],
    concurrency: int,
    out: Path,
    batches: list[BatchReport] | None = None,
) -> Synthesis:
    """Plan and generate; with `batches` (--batch), the writes and then the checks go
    through the batch API first, each round's report appended there."""
    import asyncio

    from lasagna_cli.commands._progress import SynthesisBar
    from lasagna_cli.engine import check_synthesized
    from lasagna_cli.engine.run import batch_state_path
    from lasagna_synth import generate

    async def batch_round(requests: Sequence[BatchRequest], name: str) -> None:
        assert batches is not None
        batches.append(await _batch.prefill(llm, requests, batch_state_path(out, name)))

    batch = batch_round if batches is not None else None

    async def go() -> Synthesis:
        async with llm:
            the_plan = planned()
            # The plan (ten objects a passage) lives to the end: frozen, the collections the
            # calls trigger skip it (one over it delays the first call).
            gc.freeze()
            with SynthesisBar(len(the_plan.items)) as bar:
                return await generate(
                    the_plan, llm, concurrency=concurrency, on_progress=bar, batch=batch
                )

    try:
        result = asyncio.run(go())
    except KeyboardInterrupt:
        typer.echo(
            f"interrupted: {out} was not written; finished calls are cached, so the same "
            "command (with --overwrite if the file exists) resumes where this one stopped",
            err=True,
        )
        raise typer.Exit(INTERRUPTED) from None
    check_synthesized(result, out)
    return result
