"""Tasks on a Ray cluster: the same tasks, outcomes and one writer as `LocalExecutor`.

The driver (this process) holds `concurrency` tasks in flight at most, as the local
executor does, so that number is the run's calls in flight across the whole cluster. They
are shared out among a few Ray actors spread over the cluster's nodes (one per CPU, at
most one per task in flight), sent in chunks of up to CHUNK tasks per Ray call (a Ray call
costs the driver more than a task's own bookkeeping); each actor makes the task function
from the work's recipe once, in its own event loop (a local model loads once per actor,
not per task), and computes the tasks of a chunk together. The recipe (corpora,
datasets) goes to Ray's object store once, and each task goes as plain data: only the
outcome comes back, and the driver writes it, so a cluster needs no shared storage.

- A task that raises on a worker comes back as that task's exception (its message
  unchanged), so it is recorded and counted as locally.
- A worker process that dies (killed, out of memory) is replaced by a new one, and the
  tasks it had are sent to it again: each task still ends once, written by the driver.
- Cancellation (Ctrl-C) cancels the Ray tasks in flight; the actors are killed when the
  run ends, and a Ray started for the run is shut down.

`executor_choice` checks `--executor local|ray` and `--ray-address` (with the environment the
command passes), and `make_executor` makes the chosen one: the one place an executor is chosen.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import logging
import pickle
import socket
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from lasagna_cli.engine._errors import EngineError, EngineUsageError, RemoteTaskError
from lasagna_cli.engine.run._executor import (
    Executor,
    LocalExecutor,
    OnOutcome,
    Outcome,
    Recipe,
    Shippable,
)
from lasagna_cli.engine.run._rate_share import set_rate_share

T = TypeVar("T")
R = TypeVar("R")

#: Times a task is sent again after the worker computing it died.
WORKER_DEATHS_PER_TASK = 3
#: Tasks sent to an actor in one call at most: a Ray call costs about a millisecond of the
#: driver's time, a task's own bookkeeping a tenth of that (benchmarks/ray_scaling.py).
CHUNK = 16
CONNECT_TIMEOUT_S = 5
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


# What the workers need of the driver's environment to make the same models: keys,
# servers, the cache folder, proxies (a cluster's nodes do not share this shell's).
_SHIPPED_PREFIXES = ("LASAGNA_", "OPENAI_", "ANTHROPIC_", "OLLAMA_")
_SHIPPED_NAMES = {"MODEL_NAME", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"}


@dataclass(frozen=True)
class ExecutorChoice:
    kind: str = "local"
    ray_address: str | None = None
    workers: int | None = None
    """LASAGNA_RAY_WORKERS: the Ray actors [default: one per CPU of the cluster]."""


LOCAL = ExecutorChoice()


def executor_choice(kind: str, ray_address: str | None, env: Mapping[str, str]) -> ExecutorChoice:
    """The flags checked, before any data is read: Ray must be installed to be chosen.
    `env`: the values of LASAGNA_RAY_WORKERS and RAY_ADDRESS the command read (missing or
    empty: not given)."""
    workers, env_address = env.get("LASAGNA_RAY_WORKERS") or None, env.get("RAY_ADDRESS") or None
    if kind not in ("local", "ray"):
        raise EngineUsageError(f"--executor must be local or ray, got {kind!r}")
    if kind == "local":
        if ray_address is not None:
            raise EngineUsageError("--ray-address goes with --executor ray")
        return LOCAL
    ray_module()
    if workers is not None and (not workers.isdigit() or int(workers) < 1):
        raise EngineUsageError(
            f"LASAGNA_RAY_WORKERS must be a whole number of at least 1, got {workers!r}"
        )
    if ray_address:
        address = checked_address(ray_address, "--ray-address")
    else:
        address = checked_address(env_address, "RAY_ADDRESS")
    return ExecutorChoice("ray", address, int(workers) if workers is not None else None)


def checked_address(value: str | None, source: str) -> str | None:
    """A Ray address as ray.init takes it, or one line saying which forms are (ray.init
    itself raises a traceback on a malformed one)."""
    if value is None or value in ("auto", "local"):
        return value
    rest = value.removeprefix("ray://")
    host, colon, port = rest.rpartition(":")
    if colon and host and port.isdigit() and "/" not in rest:
        return value
    raise EngineUsageError(
        f"{source} must be auto, local, HOST:PORT (the head node's port, 6379 by default) "
        f"or ray://HOST:PORT (its client port, 10001 by default), got {value!r}"
    )


def worker_env(env: Mapping[str, str], also: Iterable[str] = ()) -> dict[str, str]:
    """What the workers get of the driver's environment `env`: the model settings, and the
    variables named in `also` (a kag provider's `api_key_env`)."""
    named = set(also)
    return {
        name: value
        for name, value in env.items()
        if name.upper() in _SHIPPED_NAMES
        or name.startswith(_SHIPPED_PREFIXES)
        or name.endswith("_API_KEY")
        or name in named
    }


def make_executor(
    concurrency: int, choice: ExecutorChoice, env: Mapping[str, str], also: Iterable[str] = ()
) -> Executor:
    """The executor of a run, `concurrency` tasks in flight in all; a Ray one's workers get
    `worker_env(env, also)`, and rebuild a `uv run` driver's environment when
    RAY_ENABLE_UV_RUN_RUNTIME_ENV in `env` says so."""
    if choice.kind == "ray":
        uv = env.get("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0").lower() in ("1", "true")
        return RayExecutor(
            concurrency,
            address=choice.ray_address,
            workers=choice.workers,
            env=worker_env(env, also),
            uv_runtime_env=uv,
        )
    return LocalExecutor(concurrency)


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
        pool: _Pool | None = None
        try:
            try:
                recipe = ray.put(fn.recipe())
            except (TypeError, AttributeError, pickle.PicklingError) as exc:
                raise EngineUsageError(
                    f"this run cannot be sent to Ray workers ({exc}): every object its setups "
                    "use (an LLM or a system given from Python) must pickle; name a system as "
                    "package.module:attr instead of passing the object"
                ) from None
            cpus = int(ray.cluster_resources().get("CPU", 1)) or 1
            pool = _Pool(ray, recipe, max(1, min(self.workers or cpus, self.concurrency)))
            await self._dispatch(pool, iter(tasks), on_outcome)
            await pool.close()
        finally:
            if pool is not None:
                pool.kill()
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
        if self.address is None:  # on loopback only: nothing outside this machine reaches it
            options.update(
                include_dashboard=False, num_cpus=self.num_cpus, _node_ip_address="127.0.0.1"
            )
        else:
            self._check_reachable()
        try:
            ray.init(address=self.address or "local", **options)
        except ConnectionError as exc:
            raise self._unreachable(str(exc)) from None
        return True

    def _check_reachable(self) -> None:
        """A HOST:PORT (or ray://HOST:PORT) that nothing answers on is one line now: Ray
        itself retries such an address for minutes."""
        host, _, port = str(self.address).removeprefix("ray://").rpartition(":")
        if not host or not port.isdigit():
            return  # "auto": Ray finds the cluster this machine runs, or says it has none
        try:
            socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S).close()
        except OSError as exc:
            raise self._unreachable(exc.strerror or str(exc)) from None

    def _unreachable(self, reason: str) -> EngineError:
        return EngineError(
            f"cannot reach the Ray cluster at {self.address} ({reason}); start it (ray start "
            "--head) or give --ray-address local for a Ray of this run's own"
        )

    async def _dispatch(
        self, pool: _Pool, pending: Iterator[T], on_outcome: OnOutcome[T, R]
    ) -> None:
        async def slot(worker: int, size: int) -> None:
            # One shared iterator: each task is taken once, `size` at a time.
            while chunk := list(itertools.islice(pending, size)):
                for outcome in await self._compute(pool, worker, chunk):
                    handled = on_outcome(outcome)
                    if inspect.isawaitable(handled):
                        await handled

        try:
            async with asyncio.TaskGroup() as group:
                for i, size in enumerate(slot_sizes(self.concurrency, len(pool.actors))):
                    group.create_task(slot(i % len(pool.actors), size))
        except BaseExceptionGroup as group:
            raise group.exceptions[0] from None

    async def _compute(self, pool: _Pool, worker: int, chunk: list[T]) -> list[Outcome[T, Any]]:
        from ray.exceptions import ActorUnavailableError, RayActorError

        for _ in range(WORKER_DEATHS_PER_TASK + 1):
            actor = pool.actors[worker]
            ref = actor.run.remote(chunk)
            try:
                found = await ref
            except asyncio.CancelledError:
                pool.ray.cancel(ref)
                raise
            except (RayActorError, ActorUnavailableError):
                if pool.replace(worker, actor):  # the first of its slots to see it
                    self.deaths += 1
                continue  # the chunk goes again, to the new worker
            return [
                Outcome(task, value, None) if ok else Outcome(task, None, value)
                for task, (ok, value) in zip(chunk, found, strict=True)
            ]
        error = EngineError(
            f"the Ray worker computing this task died {WORKER_DEATHS_PER_TASK + 1} times"
        )
        return [Outcome(task, None, error) for task in chunk]


class _Pool:
    """The run's actors. A dead one is replaced by a new actor made from the same recipe
    (which the driver keeps in the object store for the whole run), by the driver rather
    than by Ray's restarts, so nothing depends on Ray keeping constructor arguments."""

    def __init__(self, ray: Any, recipe: Any, count: int) -> None:
        self.ray = ray
        self.recipe = recipe
        self.share = 1.0 / count  # of the run's rate limits, for each actor's models
        self.actors = [self._new() for _ in range(count)]

    def _new(self) -> Any:
        return (
            self.ray.remote(TaskActor)
            .options(num_cpus=0, max_concurrency=1000, scheduling_strategy="SPREAD")
            .remote(self.recipe, self.share)
        )

    def replace(self, worker: int, dead: Any) -> bool:
        if self.actors[worker] is not dead:
            return False
        self.actors[worker] = self._new()
        return True

    async def close(self) -> None:
        """Model clients closed cleanly; a worker that does not answer is killed after."""
        closing = [asyncio.ensure_future(actor.close.remote()) for actor in self.actors]
        await asyncio.wait(closing, timeout=10)

    def kill(self) -> None:
        for actor in self.actors:
            self.ray.kill(actor, no_restart=True)


def slot_sizes(concurrency: int, actors: int) -> list[int]:
    """The driver's slots, each sending this many tasks per call: they add up to
    `concurrency`, and each actor gets at least two calls in flight (so it computes one
    chunk while the next is on its way), at most CHUNK tasks in each."""
    size = max(1, min(CHUNK, concurrency // (2 * actors)))
    sizes = [size] * (concurrency // size)
    if concurrency % size:
        sizes.append(concurrency % size)
    return sizes


class TaskActor:
    """A Ray actor: makes the task function from its recipe on first use, and computes
    tasks with it; an exception is returned (as itself when it pickles), never raised."""

    def __init__(self, recipe: Recipe[Any, Any], share: float = 1.0) -> None:
        # Its process's models take `share` of the run's rate limits (--rpm, --tpm): the
        # workers together stay under them.
        set_rate_share(share)
        self._recipe = recipe
        self._fn: Any = None
        self._opening: asyncio.Lock | None = None

    async def run(self, chunk: list[Any]) -> list[tuple[bool, Any]]:
        """Each task's (True, result) or (False, exception), computed together."""
        try:
            fn = self._fn or await self._open()
        except Exception as exc:  # its models could not be made here: each task's error
            return [(False, _portable(exc))] * len(chunk)
        return list(await asyncio.gather(*(self._one(fn, task) for task in chunk)))

    async def _one(self, fn: Any, task: Any) -> tuple[bool, Any]:
        try:
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
                self._fn = await self._recipe.open()
        return self._fn

    async def close(self) -> None:
        if self._fn is not None:
            self._fn = None
            await self._recipe.close()


def _portable(exc: Exception) -> Exception:
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return RemoteTaskError(type(exc).__name__, str(exc))
    return exc
