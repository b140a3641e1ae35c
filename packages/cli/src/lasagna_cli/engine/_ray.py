"""Tasks on a Ray cluster: the same tasks, outcomes and one writer as `LocalExecutor`.

The driver (this process) keeps `concurrency` slots, as the local executor does, so that
number is the run's calls in flight across the whole cluster. The slots are shared out
among a few Ray actors spread over the cluster's nodes (one per CPU, at most one per
slot); each actor makes the task function from the work's recipe once, in its own event
loop (a local model loads once per actor, not per task), and computes the tasks its slots
send it. The recipe (corpora, datasets) goes to Ray's object store once, and each task
goes as plain data: only the outcome comes back, and the driver writes it, so a cluster
needs no shared storage.

- A task that raises on a worker comes back as that task's exception (its message
  unchanged), so it is recorded and counted as locally.
- A worker process that dies (killed, out of memory) is restarted by Ray, and the tasks
  it had are sent again: each task still ends once, written by the driver.
- Cancellation (Ctrl-C) cancels the Ray tasks in flight; the actors are killed when the
  run ends, and a Ray started for the run is shut down.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import pickle
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from lasagna_cli.engine._errors import EngineError, EngineUsageError
from lasagna_cli.engine._executor import Executor, OnOutcome, Outcome, Recipe, Shippable

T = TypeVar("T")
R = TypeVar("R")

#: Times a task is sent again after the worker computing it died.
WORKER_DEATHS_PER_TASK = 3
INSTALL = 'pip install "lasagna-cli[ray]" (in this repository: uv run --group ray ...)'


def ray_module() -> Any:
    """Ray, or one line naming the extra that installs it."""
    try:
        import ray
    except ImportError:
        raise EngineUsageError(
            f"--executor ray needs Ray, which is not installed: {INSTALL}"
        ) from None
    return ray


class RemoteTaskError(Exception):
    """A worker's exception that could not travel back as itself: its type and message."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind

    def __str__(self) -> str:
        return super().__str__()


class RayExecutor(Executor):
    """Runs tasks on Ray (see the module docstring).

    `address` is where the cluster is: "auto" (the one `ray start` runs on this machine),
    "ray://host:10001" (a remote cluster's client port), or None / "local" (a Ray started
    for this run, and shut down after it). `workers` is the number of actors (default: one
    per CPU of the cluster, at most `concurrency`); `env` is set in every worker process
    (the driver's model settings: keys, servers, the cache folder). Workers run this
    process's Python; `uv_runtime_env` lets Ray rebuild a `uv run` driver's environment for
    them instead (Ray's own default, which copies the working folder and builds every
    dependency again, minutes on a local Ray).
    """

    def __init__(
        self,
        concurrency: int,
        *,
        address: str | None = None,
        workers: int | None = None,
        env: Mapping[str, str] | None = None,
        num_cpus: int | None = None,
        uv_runtime_env: bool = False,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.concurrency = concurrency
        self.address = None if address in (None, "", "local") else address
        self.workers = workers
        self.env = dict(env or {})
        self.num_cpus = num_cpus
        self.uv_runtime_env = uv_runtime_env
        self.deaths = 0
        """Worker deaths seen by the last run (each one's tasks were sent again)."""

    async def run(
        self,
        tasks: Iterable[T],
        fn: Callable[[T], Any],
        on_outcome: OnOutcome[T, R],
    ) -> None:
        if not isinstance(fn, Shippable):
            raise EngineUsageError(
                "this work cannot run on Ray: its task function has no recipe for a worker"
            )
        ray = ray_module()
        started = self._connect(ray)
        actors: list[Any] = []
        try:
            try:
                recipe = ray.put(fn.recipe())
            except (TypeError, AttributeError, pickle.PicklingError) as exc:
                raise EngineUsageError(
                    f"this run cannot be sent to Ray workers ({exc}); the Python API's LLM "
                    "and Embedder objects stay in their process: name the models instead"
                ) from None
            actors = self._actors(ray, recipe)
            await self._dispatch(ray, actors, iter(tasks), on_outcome)
            # Model clients closed cleanly; a worker that does not answer is killed below.
            await asyncio.wait(
                [asyncio.ensure_future(a.close.remote()) for a in actors], timeout=10
            )
        finally:
            for actor in actors:
                ray.kill(actor, no_restart=True)
            if started:
                ray.shutdown()

    def _connect(self, ray: Any) -> bool:
        """Join the cluster (or start a local Ray); True when this run started it."""
        if ray.is_initialized():
            return False
        from ray._private import ray_constants

        ray_constants.RAY_ENABLE_UV_RUN_RUNTIME_ENV = self.uv_runtime_env
        options: dict[str, Any] = {
            "logging_level": logging.ERROR,
            "log_to_driver": False,
            "runtime_env": {"env_vars": self.env} if self.env else None,
        }
        if self.address is None:
            options.update(include_dashboard=False, num_cpus=self.num_cpus)
        try:
            ray.init(address=self.address or "local", **options)
        except ConnectionError as exc:
            raise EngineError(
                f"cannot reach the Ray cluster at {self.address} ({exc}); start it (ray start "
                "--head) or give --ray-address local for a Ray of this run's own"
            ) from None
        return True

    def _actors(self, ray: Any, recipe: Any) -> list[Any]:
        cpus = int(ray.cluster_resources().get("CPU", 1)) or 1
        count = max(1, min(self.workers or cpus, self.concurrency))
        actor = ray.remote(TaskActor).options(
            num_cpus=0,
            max_restarts=-1,
            max_task_retries=0,
            max_concurrency=self.concurrency,
            scheduling_strategy="SPREAD",
        )
        # Inside a list, the reference is not resolved by Ray at each (re)start of an actor:
        # the actor fetches it once, and the driver keeps it alive for the whole run.
        return [actor.remote([recipe]) for _ in range(count)]

    async def _dispatch(
        self, ray: Any, actors: list[Any], pending: Any, on_outcome: OnOutcome[T, R]
    ) -> None:
        async def slot(actor: Any) -> None:
            for task in pending:  # one shared iterator: each task is taken once
                handled = on_outcome(await self._compute(ray, actor, task))
                if inspect.isawaitable(handled):
                    await handled

        try:
            async with asyncio.TaskGroup() as group:
                for i in range(self.concurrency):
                    group.create_task(slot(actors[i % len(actors)]))
        except BaseExceptionGroup as group:
            raise group.exceptions[0] from None

    async def _compute(self, ray: Any, actor: Any, task: T) -> Outcome[T, Any]:
        from ray.exceptions import ActorUnavailableError, RayActorError

        for _ in range(WORKER_DEATHS_PER_TASK + 1):
            ref = actor.run.remote(task)
            try:
                ok, value = await ref
            except asyncio.CancelledError:
                ray.cancel(ref)
                raise
            except (RayActorError, ActorUnavailableError):
                self.deaths += 1  # Ray restarts the actor; the task goes again
                continue
            return Outcome(task, value, None) if ok else Outcome(task, None, value)
        error = EngineError(
            f"the Ray worker computing this task died {WORKER_DEATHS_PER_TASK + 1} times"
        )
        return Outcome(task, None, error)


class TaskActor:
    """A Ray actor: makes the task function from its recipe on first use, and computes
    tasks with it; an exception is returned (as itself when it pickles), never raised."""

    def __init__(self, recipe: list[Any]) -> None:
        self._ref = recipe[0]
        self._recipe: Recipe[Any, Any] | None = None
        self._fn: Any = None
        self._opening: asyncio.Lock | None = None

    async def run(self, task: Any) -> tuple[bool, Any]:
        try:
            fn = self._fn or await self._open()
            return True, await fn(task)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            return False, _portable(exc)

    async def _open(self) -> Any:
        if self._opening is None:
            self._opening = asyncio.Lock()
        async with self._opening:
            if self._fn is None:
                self._recipe = await self._ref
                self._fn = await self._recipe.open()
        return self._fn

    async def close(self) -> None:
        if self._recipe is not None and self._fn is not None:
            self._fn = None
            await self._recipe.close()


def _portable(exc: Exception) -> Exception:
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return RemoteTaskError(type(exc).__name__, str(exc))
    return exc
