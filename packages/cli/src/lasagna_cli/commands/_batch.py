"""`--batch`: a command's model calls through the provider's batch API at half the
per-token price (`lasagna_judge.run_batch`), its answers put in the response cache, so the
command then runs as usual on cache hits and calls directly only what the batch could not
answer. The batch id is kept in a state file beside the output (written atomically), so
a command killed while it waits resumes the same batch when run again.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from lasagna_cli.commands._errors import USAGE_ERROR, CliError

if TYPE_CHECKING:
    from lasagna_cli.engine.config import Setup
    from lasagna_cli.engine.run import Executor
    from lasagna_judge import LLM, BatchReport, BatchRequest, BatchStatus

BatchOption = Annotated[
    bool,
    typer.Option(
        "--batch",
        help="Send the model calls through the provider's batch API (OpenAI's Batch API, "
        "Anthropic's Message Batches) at 50% of the per-token price; a batch may take up "
        "to 24 h. Killed while it waits, the same command resumes the same batch; items "
        "the batch could not answer are called directly.",
    ),
]

POLL_VARIABLE = "LASAGNA_BATCH_POLL"
"""Seconds between two polls of a batch's status (default 30)."""


def poll_seconds(env: Mapping[str, str] | None = None) -> float:
    text = (os.environ if env is None else env).get(POLL_VARIABLE) or "30"
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise CliError(f"{POLL_VARIABLE}: expected seconds > 0, found {text!r}", USAGE_ERROR)
    return seconds


def status_teller(seconds: float) -> Callable[[LLM, BatchStatus, Path], None]:
    """Says on stderr, once per batch, which batch a command follows and how to resume it."""
    told: set[str] = set()

    def on_status(llm: LLM, status: BatchStatus, state: Path) -> None:
        if status.id not in told:
            told.add(status.id)
            typer.echo(
                f"batch {status.id} of {llm.model} ({status.state}): polling every {seconds:g} "
                f"s; if stopped, the same command resumes it (its id is in {state})",
                err=True,
            )

    return on_status


async def prefill(llm: LLM, requests: Sequence[BatchRequest], state: Path) -> BatchReport:
    """Answer `requests` through the batch into `llm`'s cache (`engine.run.prefill`), saying
    on stderr which batch it follows and how to resume it."""
    from lasagna_cli.engine.run import prefill as batch_prefill

    seconds = poll_seconds()
    return await batch_prefill(
        llm, requests, state, poll_interval=seconds, on_status=status_teller(seconds)
    )


def refuse_named_batch(batch: bool, path: str) -> None:
    """`benchmark run NAME --batch`: the staged pipeline has no batch pass; one line."""
    if batch and not Path(path).exists():
        raise CliError(f"--batch runs data files and sweep files, not {path}", USAGE_ERROR)


def batching(
    setups: Sequence[Setup],
    runner: Executor,
    kind: str,
    out: Path,
    lines: list[str],
    prices: Mapping[str, tuple[float, float]] | None,
    source: Path | None,
    judges: Sequence[str] = (),
) -> Executor:
    """`benchmark run | sweep --batch`: `runner` with the run's calls sent through the batch
    APIs first, refused in one line (`check_batchable`) when a setup's model or system has
    none."""
    from lasagna_cli.engine import batch_lines
    from lasagna_cli.engine.run import BatchingExecutor, batch_prefill, check_batchable

    models = [s.generator.name for s in setups if s.generator is not None]
    check_batchable([*models, *judges], sum(1 for s in setups if s.system is not None), kind)
    seconds = poll_seconds()
    prefill = batch_prefill(
        out,
        poll_interval=seconds,
        on_status=status_teller(seconds),
        on_report=lambda llm, report: lines.extend(batch_lines(report, llm.model, prices, source)),
    )
    return BatchingExecutor(runner, prefill)
