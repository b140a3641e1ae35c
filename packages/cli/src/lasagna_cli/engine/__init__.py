"""The benchmark engine: a library layer (no typer, no rich, no environment variables, no exit
codes).

Its subpackages show the pipeline (`config`, `plan`, `run`, `records`, `reports`) and the
doors beside it (`kag`, `staged`, `benchmarks`, `datasets`, `systems`, `retrieval`). Each lists
its public names in `__all__`; the commands import only those (an import-linter contract).
The names below load on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lasagna_cli.engine._api import arun_benchmark, run_benchmark
    from lasagna_cli.engine._counts import counted
    from lasagna_cli.engine._dry_run import (
        GRADE_REPLY_TOKENS,
        RoleCalls,
        batch_price_line,
        dry_run,
        dry_run_lines,
        priced,
        role_lines,
    )
    from lasagna_cli.engine._errors import EngineError, EngineUsageError, did_you_mean
    from lasagna_cli.engine._gc import collector_paused, fewer_collections
    from lasagna_cli.engine._grade_lines import (
        batch_cost_line,
        batch_lines,
        bias_lines,
        calibration_output,
        check_grading,
        file_grading_lines,
        grade_dry_run_lines,
        grading_cost_line,
        grading_lines,
        jury_grading_lines,
        jury_lines,
        read_grading,
    )
    from lasagna_cli.engine._pipeline import (
        BenchmarkRun,
        Door,
        check_run_flags,
        door_of,
        gap_lines,
        run_benchmarks,
        run_config,
    )
    from lasagna_cli.engine._shown import shown
    from lasagna_cli.engine._synthesis_lines import (
        check_synthesis,
        check_synthesized,
        spent_line,
        synthesis_lines,
        synthesis_plan_lines,
    )

_NAMES = {
    "arun_benchmark": "_api",
    "run_benchmark": "_api",
    "BenchmarkRun": "_pipeline",
    "Door": "_pipeline",
    "check_run_flags": "_pipeline",
    "door_of": "_pipeline",
    "gap_lines": "_pipeline",
    "run_benchmarks": "_pipeline",
    "run_config": "_pipeline",
    "counted": "_counts",
    "GRADE_REPLY_TOKENS": "_dry_run",
    "RoleCalls": "_dry_run",
    "dry_run": "_dry_run",
    "dry_run_lines": "_dry_run",
    "priced": "_dry_run",
    "role_lines": "_dry_run",
    "EngineError": "_errors",
    "collector_paused": "_gc",
    "fewer_collections": "_gc",
    "EngineUsageError": "_errors",
    "did_you_mean": "_errors",
    "batch_cost_line": "_grade_lines",
    "batch_lines": "_grade_lines",
    "batch_price_line": "_dry_run",
    "bias_lines": "_grade_lines",
    "calibration_output": "_grade_lines",
    "check_grading": "_grade_lines",
    "read_grading": "_grade_lines",
    "file_grading_lines": "_grade_lines",
    "jury_grading_lines": "_grade_lines",
    "grade_dry_run_lines": "_grade_lines",
    "grading_cost_line": "_grade_lines",
    "grading_lines": "_grade_lines",
    "jury_lines": "_grade_lines",
    "shown": "_shown",
    "check_synthesis": "_synthesis_lines",
    "check_synthesized": "_synthesis_lines",
    "spent_line": "_synthesis_lines",
    "synthesis_lines": "_synthesis_lines",
    "synthesis_plan_lines": "_synthesis_lines",
}

__all__ = [
    "GRADE_REPLY_TOKENS",
    "BenchmarkRun",
    "Door",
    "EngineError",
    "EngineUsageError",
    "RoleCalls",
    "arun_benchmark",
    "batch_cost_line",
    "batch_lines",
    "batch_price_line",
    "bias_lines",
    "calibration_output",
    "check_grading",
    "check_run_flags",
    "check_synthesis",
    "check_synthesized",
    "collector_paused",
    "counted",
    "did_you_mean",
    "door_of",
    "dry_run",
    "dry_run_lines",
    "fewer_collections",
    "file_grading_lines",
    "gap_lines",
    "grade_dry_run_lines",
    "grading_cost_line",
    "grading_lines",
    "jury_grading_lines",
    "jury_lines",
    "priced",
    "read_grading",
    "role_lines",
    "run_benchmark",
    "run_benchmarks",
    "run_config",
    "shown",
    "spent_line",
    "synthesis_lines",
    "synthesis_plan_lines",
]


def __getattr__(name: str) -> Any:
    module = _NAMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
