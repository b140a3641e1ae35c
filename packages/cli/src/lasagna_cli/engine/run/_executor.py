"""Running many independent tasks with bounded concurrency.

`Executor` is the interface the runner is given (it never builds one); `LocalExecutor`
runs tasks on this machine with asyncio. A cluster executor implements the same interface:
the tasks it gets are plain data and `work` a function of one task, so both can be shipped
to workers, and each outcome comes back to the driver's `on_outcome`, the one writer of
the task records. An `on_outcome` that returns an awaitable (a write on a thread) is awaited
before the slot takes its next task, so no more than `concurrency` tasks are ever in flight
or unwritten: a run killed at any moment loses at most those.

Tasks are pulled lazily by a fixed pool of workers, so a sweep of 100,000 tasks does not
create 100,000 coroutines up front, and results are reported as each task finishes.

A `work` function that can run in another process says how to make it there: its
`recipe()` is picklable data (corpora, model names, rubric) whose `open()`, called once per
worker process inside that process's event loop, makes the function (models load there,
once), and whose `close()` ends it. `RayExecutor` (`_ray`) needs one; `LocalExecutor`
calls the function as given.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable
from typing import Generic, Protocol, TypeVar, runtime_checkable

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


OnOutcome = Callable[[Outcome[T, R]], Awaitable[None] | None]
Work = Callable[[T], Awaitable[R]]


class Recipe(ABC, Generic[T, R]):
    """How a worker process makes a task function (see the module docstring)."""

    @abstractmethod
    async def open(self) -> Work[T, R]: ...

    async def close(self) -> None:
        """Close what `open` made (model clients); called once per worker process."""


@runtime_checkable
class Shippable(Protocol[T, R]):
    """A task function with a recipe another process can make it from."""

    def __call__(self, task: T, /) -> Awaitable[R]: ...

    def recipe(self) -> Recipe[T, R]: ...


class Executor(ABC):
    """Runs `fn` over tasks, calling `on_outcome` once per task as it finishes."""

    concurrency: int

    @abstractmethod
    async def run(
        self,
        tasks: Iterable[T],
        fn: Callable[[T], Awaitable[R]],
        on_outcome: OnOutcome[T, R],
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
        on_outcome: OnOutcome[T, R],
    ) -> None:
        import asyncio  # here: `lasagna --help` and the dry runs never start a loop

        pending = iter(tasks)

        async def worker() -> None:
            for task in pending:  # one shared iterator: each task is taken once
                try:
                    result = await fn(task)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    handled = on_outcome(Outcome(task, None, exc))
                else:
                    handled = on_outcome(Outcome(task, result, None))
                if inspect.isawaitable(handled):
                    await handled

        try:
            async with asyncio.TaskGroup() as group:
                for _ in range(self.concurrency):
                    group.create_task(worker())
                    # One turn of the loop per worker started: the first requests go out
                    # as the others are made, not after all of them (300 workers held the
                    # first request back 0.1 s).
                    await asyncio.sleep(0)
        except BaseExceptionGroup as group:
            # An `on_outcome` that raised (a record that cannot be written) stops the run:
            # the caller sees that error itself, not a group of one.
            raise group.exceptions[0] from None
