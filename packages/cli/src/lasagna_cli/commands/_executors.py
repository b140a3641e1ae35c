"""The one place a command chooses the engine's executor (the engine is given one, never
builds its own): `--executor local|ray` and `--ray-address`, for every command that runs
tasks."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated

import typer

from lasagna_cli.commands._errors import USAGE_ERROR, CliError
from lasagna_cli.engine.run import Executor, LocalExecutor

ExecutorOption = Annotated[
    str,
    typer.Option(
        "--executor",
        help="local (asyncio in this process) or ray (tasks on a Ray cluster; "
        'pip install "lasagna-cli[ray]"). --concurrency is the calls in flight in all.',
    ),
]
RayAddressOption = Annotated[
    str | None,
    typer.Option(
        "--ray-address",
        help="--executor ray: auto (the cluster `ray start` runs here), ray://host:10001, or "
        "local (a Ray started for this run) [default: $RAY_ADDRESS, else local].",
        show_default=False,
    ),
]
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


def executor_choice(
    kind: str, ray_address: str | None, env: Mapping[str, str] | None = None
) -> ExecutorChoice:
    """The flags checked, before any data is read: Ray must be installed to be chosen."""
    if kind not in ("local", "ray"):
        raise CliError(f"--executor must be local or ray, got {kind!r}", USAGE_ERROR)
    if kind == "local":
        if ray_address is not None:
            raise CliError("--ray-address goes with --executor ray", USAGE_ERROR)
        return LOCAL
    from lasagna_cli.engine.run import ray_module

    ray_module()
    env = os.environ if env is None else env
    workers = env.get("LASAGNA_RAY_WORKERS") or None
    if workers is not None and (not workers.isdigit() or int(workers) < 1):
        raise CliError(
            f"LASAGNA_RAY_WORKERS must be a whole number of at least 1, got {workers!r}",
            USAGE_ERROR,
        )
    if ray_address:
        address = checked_address(ray_address, "--ray-address")
    else:
        address = checked_address(env.get("RAY_ADDRESS") or None, "RAY_ADDRESS")
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
    raise CliError(
        f"{source} must be auto, local, HOST:PORT (the head node's port, 6379 by default) "
        f"or ray://HOST:PORT (its client port, 10001 by default), got {value!r}",
        USAGE_ERROR,
    )


def worker_env(env: Mapping[str, str] | None = None, also: Iterable[str] = ()) -> dict[str, str]:
    """What the workers get of this environment: the model settings, and the variables
    named in `also` (a kag provider's `api_key_env`)."""
    env = os.environ if env is None else env
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
    concurrency: int, choice: ExecutorChoice = LOCAL, also: Iterable[str] = ()
) -> Executor:
    """The executor of a command's run, `concurrency` tasks in flight in all; `also` names
    variables its Ray workers need beside the model settings."""
    if choice.kind == "ray":
        from lasagna_cli.engine.run import RayExecutor

        uv = os.environ.get("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0").lower() in ("1", "true")
        return RayExecutor(
            concurrency,
            address=choice.ray_address,
            workers=choice.workers,
            env=worker_env(also=also),
            uv_runtime_env=uv,
        )
    return LocalExecutor(concurrency)
