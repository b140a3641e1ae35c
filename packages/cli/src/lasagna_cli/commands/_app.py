"""The `lasagna` entry point: assembles the command groups and maps errors to exit codes."""

from __future__ import annotations

import gc
import sys

import typer

from lasagna_cli.commands import (
    _calibrate,  # noqa: F401  (registers its commands)
    _compare,  # noqa: F401  (registers its commands)
    _datasets,  # noqa: F401  (registers its commands)
    _export,  # noqa: F401  (registers its commands)
    _judge,  # noqa: F401  (registers its commands)
    _metrics,  # noqa: F401  (registers its commands)
    _openviking,  # noqa: F401  (registers its commands)
    _prepare,  # noqa: F401  (registers its commands)
    _report,  # noqa: F401  (registers its commands)
    _run,  # noqa: F401  (registers its commands)
    _stats,  # noqa: F401  (registers its commands)
    _sweep,  # noqa: F401  (registers its commands)
    _synthesize,  # noqa: F401  (registers its commands)
    _validate,  # noqa: F401  (registers its commands)
)
from lasagna_cli.commands._errors import INTERRUPTED, USAGE_ERROR, user_errors
from lasagna_cli.commands._groups import app

_MEMBERS = ("lasagna-cli", "lasagna-metrics", "lasagna-judge", "lasagna-synth")


def _versions() -> str:
    # imported here: importlib.metadata costs every other command 25 ms and 5 MB
    from importlib.metadata import PackageNotFoundError, version

    parts = []
    for dist in _MEMBERS:
        try:
            parts.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            parts.append(f"{dist} (not installed)")
    return ", ".join(parts)


def _version_callback(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"lasagna {version('lasagna-cli')} ({_versions()})")
        raise typer.Exit()


@app.callback()
def _root(
    version_: bool = typer.Option(
        False,
        "--version",
        help="Show the version of lasagna and its packages, then exit.",
        callback=_version_callback,
        is_eager=True,
    ),
) -> None:
    """Build and run evaluation benchmarks for RAG systems and LLM applications."""


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
