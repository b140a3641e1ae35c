"""The `lasagna` console script: the commands live in `lasagna_cli.commands`."""

from lasagna_cli.commands._app import main
from lasagna_cli.commands._groups import app

__all__ = ["app", "main"]
