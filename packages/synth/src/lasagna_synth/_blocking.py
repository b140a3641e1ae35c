"""Running a coroutine from code that is not async, even where an event loop is running."""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

T = TypeVar("T")


def run_blocking(work: Callable[[], Awaitable[T]], name: str = "lasagna") -> T:
    """`asyncio.run(work())`, on a thread of its own (named `name`) when this thread's loop
    is running, as in Jupyter, where asyncio.run refuses ("cannot be called from a running
    event loop"); the result, or the exception `work` raised, comes back to the caller."""
    import asyncio  # here: asyncio and ssl, which a dry run does not need

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_awaited(work)).value
    found: list[T] = []
    failed: list[BaseException] = []

    def thread() -> None:
        try:
            found.append(asyncio.run(_awaited(work)).value)
        except BaseException as exc:  # handed back to the caller's thread
            failed.append(exc)

    worker = threading.Thread(target=thread, name=name)
    worker.start()
    worker.join()
    if failed:
        raise failed[0]
    return found[0]


class _Box(Generic[T]):
    """The result, out of sight of repr: asyncio.run's Runner, ending, looks up SIGINT's
    handler, a partial holding the finished main task, and Python 3.11's
    `signal.getsignal` formats that partial's repr, and so the task's result, in full, which
    takes seconds for a large run's result."""

    __slots__ = ("value",)

    def __init__(self, value: T) -> None:
        self.value = value


async def _awaited(work: Callable[[], Awaitable[T]]) -> _Box[T]:
    return _Box(await work())
