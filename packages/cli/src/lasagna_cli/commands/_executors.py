"""The one place a command chooses the engine's executor (the engine is given one, never
builds its own): a cluster executor is added here, once, for every command."""

from __future__ import annotations

from lasagna_cli.engine._executor import Executor, LocalExecutor


def make_executor(concurrency: int) -> Executor:
    """The executor of a command's run: asyncio on this machine, `concurrency` in flight."""
    return LocalExecutor(concurrency)
