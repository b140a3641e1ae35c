"""`lasagna judge cancel-batch STATE`: cancel the batches a `--batch` job left running (its
state file: `OUT.batch.json` beside a command's output, `.lasagna-batch-ROLE.json` in a run
folder). What they answered before the cancel is paid for and kept: the same command run
again collects it and calls the rest directly."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

from lasagna_cli.commands._errors import user_errors
from lasagna_cli.commands._groups import judge_app


@judge_app.command("cancel-batch")
def cancel_batch_command(
    state: Annotated[
        Path,
        typer.Argument(
            help="The state file of the job (OUT.batch.json beside a command's output, or "
            ".lasagna-batch-ROLE.json in a run folder)."
        ),
    ],
) -> None:
    """Cancel the batches a --batch job left running; its state file stays, so the same
    command run again collects what they answered (paid for) and calls the rest directly."""
    with user_errors():
        from lasagna_cli.commands._llm import build_llm
        from lasagna_judge import BatchState, cancel_batch
        from lasagna_synth import write_bytes_atomic

        job = BatchState(state, write_bytes_atomic)
        model, endpoint = job.job()
        llm = build_llm(model, base_url=endpoint, flag=None, base_url_flag=None)

        async def go() -> list[str]:
            async with llm:
                statuses = await cancel_batch(llm, job)
            return [f"batch {s.id} of {model}: {s.state}" for s in statuses]

        lines = asyncio.run(go()) or [f"{state}: no batch of {model} is running"]
        for line in lines:
            typer.echo(line)
        typer.echo(
            "what the batch answered is paid for: run the same command again to collect it "
            f"and call the rest directly (it follows {state})",
            err=True,
        )
