"""`--executor local|ray` and `--ray-address`, for every command that runs tasks: the flags,
and the environment read for them (LASAGNA_RAY_WORKERS, RAY_ADDRESS, the variables Ray's
workers get); the choice and the executor are the engine's (`engine.run.executor_choice`,
`make_executor`)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from lasagna_cli.engine.run import Executor, ExecutorChoice

__all__ = [
    "ExecutorChoice",
    "ExecutorOption",
    "RayAddressOption",
    "executor_choice",
    "make_executor",
]

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


def ray_variables() -> dict[str, str]:
    """The variables the engine's executor choice reads: LASAGNA_RAY_WORKERS (the actors)
    and RAY_ADDRESS (the cluster, when --ray-address is not given)."""
    return {
        "LASAGNA_RAY_WORKERS": os.environ.get("LASAGNA_RAY_WORKERS", ""),
        "RAY_ADDRESS": os.environ.get("RAY_ADDRESS", ""),
    }


def executor_choice(kind: str, ray_address: str | None) -> ExecutorChoice:
    """The flags checked, before any data is read, with `ray_variables`."""
    from lasagna_cli.engine.run import executor_choice as choose

    return choose(kind, ray_address, ray_variables())


def make_executor(
    concurrency: int, choice: ExecutorChoice | None = None, also: Iterable[str] = ()
) -> Executor:
    """The executor of a command's run (`choice` None: local), `concurrency` tasks in flight
    in all; `also` names variables its Ray workers need beside the model settings."""
    from lasagna_cli.engine.run import LOCAL
    from lasagna_cli.engine.run import make_executor as make

    return make(concurrency, choice or LOCAL, os.environ, also)
