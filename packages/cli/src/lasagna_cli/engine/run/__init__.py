"""Tasks in, records out: the runner, its executors (local and Ray), each task's steps (the
user's systems, retrieval, the model, scoring, diagnostics) and the run's limits.

The names below load on first use (no import cycle through the package)."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lasagna_cli.engine.run._batched import (
        BatchingExecutor,
        Prefill,
        batch_prefill,
        batch_state_path,
        check_batch,
        check_batchable,
        prefill,
    )
    from lasagna_cli.engine.run._executor import Executor, LocalExecutor, Outcome, Recipe
    from lasagna_cli.engine.run._first_calls import ModelsUnreachable
    from lasagna_cli.engine.run._options import RunOptions
    from lasagna_cli.engine.run._rate_share import check_rate, shared
    from lasagna_cli.engine.run._ray import (
        LOCAL,
        ExecutorChoice,
        RayExecutor,
        executor_choice,
        make_executor,
        ray_module,
    )
    from lasagna_cli.engine.run._recipe import grade_remotely
    from lasagna_cli.engine.run._runner import Models, execute, prepare
    from lasagna_cli.engine.run._scoring import (
        judge_references,
        load_judge_rubric,
        too_long_to_grade,
    )
    from lasagna_cli.engine.run._system_tasks import SystemState

_NAMES = {
    "BatchingExecutor": "_batched",
    "batch_prefill": "_batched",
    "batch_state_path": "_batched",
    "check_batch": "_batched",
    "check_batchable": "_batched",
    "prefill": "_batched",
    "Prefill": "_batched",
    "Executor": "_executor",
    "LocalExecutor": "_executor",
    "Outcome": "_executor",
    "Recipe": "_executor",
    "ModelsUnreachable": "_first_calls",
    "RunOptions": "_options",
    "check_rate": "_rate_share",
    "shared": "_rate_share",
    "grade_remotely": "_recipe",
    "RayExecutor": "_ray",
    "LOCAL": "_ray",
    "ExecutorChoice": "_ray",
    "executor_choice": "_ray",
    "make_executor": "_ray",
    "ray_module": "_ray",
    "Models": "_runner",
    "execute": "_runner",
    "prepare": "_runner",
    "judge_references": "_scoring",
    "load_judge_rubric": "_scoring",
    "too_long_to_grade": "_scoring",
    "SystemState": "_system_tasks",
}

__all__ = [
    "LOCAL",
    "BatchingExecutor",
    "Executor",
    "ExecutorChoice",
    "LocalExecutor",
    "Models",
    "ModelsUnreachable",
    "Outcome",
    "Prefill",
    "RayExecutor",
    "Recipe",
    "RunOptions",
    "SystemState",
    "batch_prefill",
    "batch_state_path",
    "check_batch",
    "check_batchable",
    "check_rate",
    "execute",
    "executor_choice",
    "grade_remotely",
    "judge_references",
    "load_judge_rubric",
    "make_executor",
    "prefill",
    "prepare",
    "ray_module",
    "shared",
    "too_long_to_grade",
]


def __getattr__(name: str) -> Any:
    module = _NAMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
