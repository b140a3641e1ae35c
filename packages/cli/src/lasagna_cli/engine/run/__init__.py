"""Tasks in, records out: the runner, its executors (local and Ray), each task's steps (the
user's systems, retrieval, the model, scoring, diagnostics) and the run's limits.

The names below load on first use (no import cycle through the package)."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lasagna_cli.engine.run._batched import (
        BatchingExecutor as BatchingExecutor,
    )
    from lasagna_cli.engine.run._batched import (
        Prefill as Prefill,
    )
    from lasagna_cli.engine.run._executor import (
        Executor as Executor,
    )
    from lasagna_cli.engine.run._executor import (
        LocalExecutor as LocalExecutor,
    )
    from lasagna_cli.engine.run._executor import (
        Outcome as Outcome,
    )
    from lasagna_cli.engine.run._executor import (
        Recipe as Recipe,
    )
    from lasagna_cli.engine.run._first_calls import ModelsUnreachable as ModelsUnreachable
    from lasagna_cli.engine.run._options import RunOptions as RunOptions
    from lasagna_cli.engine.run._rate_share import check_rate as check_rate
    from lasagna_cli.engine.run._rate_share import shared as shared
    from lasagna_cli.engine.run._ray import RayExecutor as RayExecutor
    from lasagna_cli.engine.run._ray import ray_module as ray_module
    from lasagna_cli.engine.run._runner import (
        Models as Models,
    )
    from lasagna_cli.engine.run._runner import (
        execute as execute,
    )
    from lasagna_cli.engine.run._runner import (
        prepare as prepare,
    )
    from lasagna_cli.engine.run._scoring import (
        constant_judge as constant_judge,
    )
    from lasagna_cli.engine.run._scoring import (
        judge_references as judge_references,
    )
    from lasagna_cli.engine.run._scoring import (
        too_long_to_grade as too_long_to_grade,
    )
    from lasagna_cli.engine.run._system_tasks import SystemState as SystemState

_NAMES = {
    "BatchingExecutor": "_batched",
    "Prefill": "_batched",
    "Executor": "_executor",
    "LocalExecutor": "_executor",
    "Outcome": "_executor",
    "Recipe": "_executor",
    "ModelsUnreachable": "_first_calls",
    "RunOptions": "_options",
    "check_rate": "_rate_share",
    "shared": "_rate_share",
    "RayExecutor": "_ray",
    "ray_module": "_ray",
    "Models": "_runner",
    "execute": "_runner",
    "prepare": "_runner",
    "constant_judge": "_scoring",
    "judge_references": "_scoring",
    "too_long_to_grade": "_scoring",
    "SystemState": "_system_tasks",
}

__all__ = sorted(_NAMES)


def __getattr__(name: str) -> Any:
    module = _NAMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
