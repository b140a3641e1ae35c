"""What `judge grade` writes: the graded rows (to --out or stdout) and the summary under
them, the mean over the answers that got a score, counts by status and path, tokens and
cost (one judge's, or each judge of a jury); and the one way a command waits for a judge's
grades (`judge grade`, `benchmark stats --judge`)."""

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


def run_grading(
    progress: TaskProgress,
    run: Callable[[], Coroutine[Any, Any, T]],
    interrupted: str = "no grade was written; finished calls are cached, so the same "
    "command resumes where this one stopped",
) -> T:
    """`run()` under its progress bar; Ctrl-C says what was kept (`interrupted`) and exits
    130."""
    try:
        with progress:
            return asyncio.run(run())
    except KeyboardInterrupt:
        typer.echo(f"interrupted: {interrupted}", err=True)
        raise typer.Exit(INTERRUPTED) from None


def write_graded(
    graded: Sequence[Mapping[str, Any]],
    lines: list[str],
    out: Path | None,
    failure: str | None = None,
) -> None:
    """The rows to `out` (atomically) with the summary on stdout, or the rows on stdout and
    the summary on stderr; then the grading's `failure`, if any (exit 1)."""
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
    if failure is not None:
        raise CliError(failure, DATA_ERROR)
