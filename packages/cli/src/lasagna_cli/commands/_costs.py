"""The cost line of `run --prices`: `engine.reports.cost_line`, each result's cost."""

from lasagna_cli.engine.reports import cost_line

__all__ = ["cost_line"]
