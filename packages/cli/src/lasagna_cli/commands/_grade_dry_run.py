"""`judge grade --dry-run`: the judge calls a grading would make, and `--bias-check`'s,
with tokens and the most they cost, before any call (no key, no server needed).

The calls are the grading's own (`lasagna_judge.grade_requests`: none where the refusal
rule grades); their input tokens are cl100k_base counts of the very prompts sent
(`lasagna_synth.count_tokens`, every dry run's yardstick), each reply assumed at the
`benchmark run` dry run's GRADE_REPLY_TOKENS. `--bias-check N` adds at most 2N calls:
N answers padded with the check's filler and N with their references reversed, priced at
the mean prompt.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from lasagna_cli.engine import counted

if TYPE_CHECKING:
    from lasagna_judge import Rubric

GradeDryRunOption = typer.Option(
    "--dry-run",
    help="Print the judge calls (and --bias-check's), tokens estimated and, with --prices, "
    "the most they cost (with --batch too); call nothing, write nothing.",
)


def grade_dry_run(
    rubric: Rubric,
    rows: Sequence[Any],
    models: Sequence[str],
    bias_check: int,
    prices: Path | None,
) -> None:
    """Print the dry run of grading `rows` (checked, as a grading checks them) with
    `models`; `bias_check` is --bias-check's N."""
    from lasagna_cli.commands._llm import load_prices, resolve_model
    from lasagna_cli.engine import GRADE_REPLY_TOKENS, RoleCalls, batch_price_line, role_lines
    from lasagna_judge import BIAS_FILLER, grade_requests, price_for
    from lasagna_synth import count_tokens

    price_table = load_prices(prices) if prices is not None else None
    given: Sequence[str | None] = models or [None]  # None: MODEL_NAME
    names = [resolve_model(m, os.environ) for m in given]
    items = [
        {"question": r.question, "references": r.references, "prediction": r.prediction}
        for r in rows
    ]
    requests = grade_requests(rubric, items)
    prompts = [count_tokens(m["content"] for m in r.messages) for r in requests]
    calls = len(prompts)
    roles = [
        RoleCalls("judge", name, calls, sum(prompts), calls * GRADE_REPLY_TOKENS) for name in names
    ]
    if bias_check and calls:
        sampled = min(bias_check, calls)
        mean = sum(prompts) // calls
        padded = sampled * count_tokens([BIAS_FILLER])
        roles.append(
            RoleCalls(
                "bias check", names[0], 2 * sampled, 2 * sampled * mean + padded,
                2 * sampled * GRADE_REPLY_TOKENS,
            )
        )  # fmt: skip
    price_of = (lambda model: price_for(price_table, model)) if price_table is not None else None
    typer.echo("dry run: no model called, nothing written")
    typer.echo(
        f"{counted(len(rows), 'row')}: {calls:,} for the judge, {len(rows) - calls:,} graded "
        "by the refusal rule (no call)"
    )
    for line in role_lines(roles, price_of):
        typer.echo(line)
    batch = batch_price_line(roles, price_of) if price_of is not None else None
    if batch is not None:
        typer.echo(batch)
