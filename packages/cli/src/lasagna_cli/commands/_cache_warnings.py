"""The LLM cache's one warning: a cache whose disk refused a write turns itself off and the
run goes on (lasagna-judge's `ResponseCache`); the command says so once, when it ends."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from lasagna_judge import LLM

# Held until the command ends (a command's LLM is gone by then); a few per command.
_watched: list[LLM] = []


def watch(llm: LLM) -> None:
    """Warn, when the command ends, if `llm`'s cache was turned off."""
    _watched.append(llm)


def warn_cache_failures() -> None:
    failures = dict.fromkeys(f for llm in _watched if (f := llm.cache_failure) is not None)
    _watched.clear()
    for failure in failures:  # one line per cache file, however many LLMs shared it
        typer.echo(f"warning: {failure}", err=True)
