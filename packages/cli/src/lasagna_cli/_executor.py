"""Running many independent tasks with bounded concurrency.

`Executor` is the interface the runner and the sweep use; `LocalExecutor` runs tasks on
this machine with asyncio. A cluster executor (Ray, say) can implement the same interface
later without the callers changing.

Tasks are pulled lazily by a fixed pool of workers, so a sweep of 100,000 tasks does not
create 100,000 coroutines up front, and results are reported as each task finishes.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class Outcome(Generic[T, R]):
    """What happened to one task: its result, or the exception it raised."""

    __slots__ = ("error", "result", "task")

    def __init__(self, task: T, result: R | None, error: BaseException | None) -> None:
        self.task = task
        self.result = result
        self.error = error

    @property
    def ok(self) -> bool:
        return self.error is None


class Executor(ABC):
    """Runs `fn` over tasks, calling `on_outcome` once per task as it finishes."""

    @abstractmethod
    async def run(
        self,
        tasks: Iterable[T],
        fn: Callable[[T], Awaitable[R]],
        on_outcome: Callable[[Outcome[T, R]], None],
    ) -> None: ...


class LocalExecutor(Executor):
    """asyncio on one machine, at most `concurrency` tasks in flight.

    An exception in one task is reported as its outcome and never stops the others.
    Cancellation (Ctrl-C) cancels the tasks in flight and starts no new ones.
    """

    def __init__(self, concurrency: int) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        self.concurrency = concurrency

    async def run(
        self,
        tasks: Iterable[T],
        fn: Callable[[T], Awaitable[R]],
        on_outcome: Callable[[Outcome[T, R]], None],
    ) -> None:
        pending = iter(tasks)

        async def worker() -> None:
            for task in pending:  # one shared iterator: each task is taken once
                try:
                    result = await fn(task)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    on_outcome(Outcome(task, None, exc))
                else:
                    on_outcome(Outcome(task, result, None))

        async with asyncio.TaskGroup() as group:
            for _ in range(self.concurrency):
                group.create_task(worker())
