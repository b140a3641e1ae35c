"""What `judge grade` writes: the graded rows (to --out or stdout) and the summary under
them, the mean over the answers that got a score, counts by status and path, tokens and
cost (one judge's, or each judge of a jury); and the one way it waits for its grades."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from lasagna_cli.commands._errors import DATA_ERROR, INTERRUPTED, CliError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from lasagna_cli.commands._progress import TaskProgress
    from lasagna_judge import LLM, BiasCheck, Grade, GradeSummary

T = TypeVar("T")

#: `benchmark run --max-chars` (`judge grade` has its own, which refuses the row).
JudgeMaxCharsOption = Annotated[
    int,
    typer.Option(
        "--max-chars",
        min=1,
        help="--judge: an answer whose question, references and answer hold more characters "
        "than this is not sent to the judge (an error grade says so, counted, never "
        "averaged), as `judge grade --max-chars` refuses the row.",
    ),
]

#: `benchmark run --diagnostics`: the judge's claim-level diagnosis (`engine.run._diagnostics`).
DiagnosticsOption = Annotated[
    bool,
    typer.Option(
        "--diagnostics",
        help="--judge: also diagnose each generated answer claim by claim (RAGChecker's "
        "metrics: retriever vs generator); 2 + 2 x (passages + 1) judge calls per question.",
    ),
]


def _counts(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{name} {count}" for name, count in counts.items())


def cost_line(llm: LLM, grades: Sequence[Grade], prices: Path | None, spent: float | None) -> str:
    """This run's cost (`spent`), and what every graded answer's tokens cost (cached ones
    too; those a batch answered at the batch price, as it billed them)."""
    from lasagna_judge import Usage

    if spent is None and prices is None:
        return "cost: n/a (give --prices FILE to price the tokens)"
    if spent is None:
        return f"cost: n/a (no price for {llm.model} in {prices})"

    def tokens(some: Sequence[Grade]) -> Usage:
        return Usage(sum(g.input_tokens for g in some), sum(g.output_tokens for g in some))

    total = llm.cost_of(tokens(grades), batch=tokens([g for g in grades if g.batch])) or 0.0
    return f"cost: ${spent:.4f} this run; ${total:.4f} for all the tokens above"


def summary_lines(
    summary: GradeSummary, *, spent: tuple[int, int], calls: int, cost: str
) -> list[str]:
    scored = summary.scored
    if summary.mean_score is None:
        mean = "mean score: n/a (no answer got a score)"
    else:
        spread = ", ".join(f"{score}: {n}" for score, n in summary.score_counts.items())
        mean = f"mean score: {summary.mean_score:.3f} over {scored} scored ({spread})"
    unscored = summary.n - scored
    if unscored:
        mean += f"; {unscored} without a score are counted below, not averaged"
    came = f"{summary.cached} answers from the cache"
    if summary.batch:  # read back from the cache, but answered (and paid for) this run
        came = f"{summary.batch} answers from the batch, {summary.cached} from the cache"
    from lasagna_judge import scripted_note

    note = scripted_note(summary.models)
    lines = [
        f"graded {summary.n} answers with {', '.join(summary.models) or 'no model call'}, "
        f"rubric {summary.rubric}",
        *([note] if note else []),
        mean,
        f"status: {_counts(summary.by_status)}",
        f"path: {_counts(summary.by_path)}",
        f"tokens: {summary.input_tokens:,} in, {summary.output_tokens:,} out "
        f"({came}; this run: {calls} calls, "
        f"{spent[0]:,} in, {spent[1]:,} out)",
        cost,
    ]
    return lines


_CHANGES = {
    "verbosity": "the answer padded with filler",
    "reference order": "the references reversed, on answers with two or more",
}


def bias_lines(checks: Sequence[BiasCheck], calls: int) -> list[str]:
    """`--bias-check`: how often each change moved the grade (none: no line)."""
    lines = []
    for check in checks:
        what = f"bias check, {check.name} ({_CHANGES[check.name]}): "
        if not check.compared:
            lines.append(what + f"n/a ({check.sampled} sampled, none with two parsed grades)")
            continue
        lines.append(
            what + f"the grade moved on {check.changed} of {check.compared} "
            f"({check.changed / check.compared:.0%}; up {check.higher}, down {check.lower}); "
            f"{check.sampled - check.compared} without two parsed grades left out"
        )
    if checks:
        lines.append(f"bias check: {calls} calls beside the grading's")
    return lines


def run_grading(progress: TaskProgress, run: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """`run()` under its progress bar; Ctrl-C says what was kept and exits 130."""
    try:
        with progress:
            return asyncio.run(run())
    except KeyboardInterrupt:
        typer.echo(
            "interrupted: no grade was written; finished calls are cached, so the same "
            "command resumes where this one stopped",
            err=True,
        )
        raise typer.Exit(INTERRUPTED) from None


def write_graded(graded: Sequence[Mapping[str, Any]], lines: list[str], out: Path | None) -> None:
    """The rows to `out` (atomically) with the summary on stdout, or the rows on stdout and
    the summary on stderr."""
    from lasagna_synth import write_bytes_atomic

    if out is not None:
        text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in graded)
        try:
            write_bytes_atomic(out, text.encode("utf-8"))
        except OSError as exc:  # a full disk: the paid grades go where they can
            typer.echo(text, nl=False)
            typer.echo("\n".join(lines), err=True)
            raise CliError(
                f"--out {out}: cannot write the {len(graded)} graded rows ({exc.strerror}); "
                "they went to standard output instead: keep them with `> FILE`, or free "
                "space and run the same command again (finished calls are cached)",
                DATA_ERROR,
            ) from None
        lines.append(f"wrote {len(graded)} graded rows to {out}")
        typer.echo("\n".join(lines))
    else:
        for row in graded:
            typer.echo(json.dumps(row, ensure_ascii=False))
        typer.echo("\n".join(lines), err=True)
