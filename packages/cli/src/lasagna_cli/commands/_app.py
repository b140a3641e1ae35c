"""The `lasagna` entry point: assembles the command groups and maps errors to exit codes."""

from __future__ import annotations

import gc
import sys
from collections.abc import Sequence
from importlib import import_module

import typer

from lasagna_cli.commands._errors import INTERRUPTED, USAGE_ERROR, user_errors
from lasagna_cli.commands._groups import app

_MEMBERS = ("lasagna-cli", "lasagna-metrics", "lasagna-judge", "lasagna-synth")

COMMAND_MODULES = {
    ("benchmark", "compare"): "_compare",
    ("benchmark", "export"): "_export",
    ("benchmark", "info"): "_datasets",
    ("benchmark", "list"): "_datasets",
    ("benchmark", "openviking"): "_openviking",
    ("benchmark", "prepare"): "_prepare",
    ("benchmark", "report"): "_report",
    ("benchmark", "run"): "_run",
    ("benchmark", "sample"): "_datasets",
    ("benchmark", "stats"): "_stats",
    ("benchmark", "sweep"): "_sweep",
    ("benchmark", "synthesize"): "_synthesize",
    ("benchmark", "validate-data"): "_validate",
    ("judge", "calibrate"): "_calibrate",
    ("judge", "cancel-batch"): "_batch_cancel",
    ("judge", "grade"): "_judge",
    ("metrics", "squad"): "_metrics",
}
"""The module of `lasagna_cli.commands` that registers each `lasagna GROUP COMMAND`.

The console script loads only the one it runs: typer builds every command it knows at
start (their options, from their signatures), and each module imports its part of the
engine, 0.1 s of a sweep's start for the twenty commands it does not run."""


def load_commands(argv: Sequence[str] | None = None) -> None:
    """Register the command `argv` (the arguments after `lasagna`) names, or every command
    when it names none (`lasagna --help`, `lasagna benchmark --help`, a typo)."""
    module = COMMAND_MODULES.get((argv[0], argv[1])) if argv and len(argv) > 1 else None
    for name in [module] if module is not None else sorted(set(COMMAND_MODULES.values())):
        import_module(f"lasagna_cli.commands.{name}")


def _version_callback(value: bool) -> None:
    if not value:
        return
    # imported here: importlib.metadata is slow to import, and every other command would pay
    from importlib.metadata import PackageNotFoundError, version

    parts = []
    for dist in _MEMBERS:
        try:
            parts.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            parts.append(f"{dist} (not installed)")
    typer.echo(f"lasagna {version('lasagna-cli')} ({', '.join(parts)})")
    raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    version_: bool = typer.Option(
        False,
        "--version",
        help="Show the version of lasagna and its packages, then exit.",
        callback=_version_callback,
        is_eager=True,
    ),
) -> None:
    """Build and run evaluation benchmarks for RAG systems and LLM applications."""
    from lasagna_cli.commands._read_limits import document_limits

    # Documents are read within LASAGNA_MAX_DOCUMENT_MB's bounds until the command ends.
    with user_errors():
        ctx.with_resource(document_limits())


def _silent_interrupt(exc: SystemExit) -> bool:
    # typer catches every KeyboardInterrupt itself, raises `Exit(130) from` it and exits
    # without a word, so no `except KeyboardInterrupt` here would ever run. A command that
    # handles Ctrl-C says what was kept and raises its own Exit(130) (from None).
    converted = exc.__context__
    return (
        exc.code == INTERRUPTED
        and converted is not None
        and isinstance(converted.__cause__, KeyboardInterrupt)
    )


def main() -> None:
    """Console-script entry point."""
    load_commands(sys.argv[1:3])
    try:
        with user_errors():
            app()
    except SystemExit as exc:
        if _silent_interrupt(exc):  # a Ctrl-C no command reported: one line all the same
            typer.echo("interrupted", err=True)
        raise
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except FileNotFoundError as exc:
        typer.echo(f"error: file not found: {exc.filename}", err=True)
        sys.exit(USAGE_ERROR)
    finally:
        # The process is about to exit: the interpreter's last garbage collections would
        # walk every object still alive (0.07 s after a synthesize run) only to free memory
        # the exit frees anyway. Frozen objects are skipped. Every file the commands write
        # is closed (and synced) by then.
        gc.freeze()
