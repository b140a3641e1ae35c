"""Printing what the engine or a library said: escaped for the terminal (`engine.shown`)."""

from __future__ import annotations

from lasagna_cli.engine import shown

__all__ = ["echo", "echo_err", "shown"]


def echo(line: str, *, err: bool = False) -> None:
    """Print a line the engine or a library said (it may quote a file's name or a
    document's text), escaped as `shown` escapes it; newlines kept."""
    import typer

    typer.echo(shown(line, keep_newlines=True), err=err)


def echo_err(line: str) -> None:
    """`echo` to stderr: how a command passes the engine's `say`."""
    echo(line, err=True)
