"""The `lasagna` console script (`main`), and `app`, the typer application with every
command registered (for tests, the documentation and typer's test runner; `main` registers
only the command it runs)."""

from typing import TYPE_CHECKING, Any

from lasagna_cli.commands._app import main

if TYPE_CHECKING:
    from typer import Typer

    app: Typer

__all__ = ["app", "main"]


def __getattr__(name: str) -> Any:
    if name != "app":
        raise AttributeError(f"module 'lasagna_cli._app' has no attribute {name!r}")
    from lasagna_cli.commands._app import load_commands
    from lasagna_cli.commands._groups import app

    load_commands()
    globals()["app"] = app
    return app
