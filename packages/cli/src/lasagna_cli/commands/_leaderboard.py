"""The leaderboard drawn: one rich table per comparability group and track
(`engine.reports.leaderboard_tables`), then the jury lines and the scripted-model note."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def print_leaderboard(results: Sequence[Mapping[str, Any]]) -> None:
    """The tables, each with its title and key as lines of their own: as a table's title
    and caption rich would wrap them to the table's width, which is narrow."""
    import sys

    from rich.console import Console, Group
    from rich.table import Table
    from rich.text import Text

    from lasagna_cli.commands._terminal import shown
    from lasagna_cli.engine.reports import (
        leaderboard_jury_lines,
        leaderboard_tables,
        scripted_note_of,
    )

    # Off a terminal (a log, a pipe) rich would squeeze the tables into 80 columns.
    console = Console() if sys.stdout.isatty() else Console(width=200)
    for i, found in enumerate(leaderboard_tables(results)):
        table = Table()
        table.add_column("setup", style="bold", no_wrap=True)
        for heading in found.headings:
            table.add_column(heading, justify="right")
        for name, *cells in found.rows:
            table.add_row(Text(shown(name)), *cells)
        if i:
            console.print()
        title = Text(shown(found.title), style="bold")
        console.print(Group(title, table, Text(shown(found.caption), style="dim")))
    for line in leaderboard_jury_lines(results):
        console.print(line, markup=False, highlight=False)
    note = scripted_note_of(results)
    if note:
        console.print(note, style="bold yellow", markup=False, highlight=False)
