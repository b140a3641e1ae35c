"""The `lasagna` command and its benchmark engine, and the engine's Python API.

    from lasagna_cli import run_benchmark, load_results
    results = run_benchmark("examples/data/pasta.jsonl", "runs/notebook")
    for r in load_results("runs/notebook"):
        print(r.dataset, r.setup, r.metric("retrieval", "ndcg@10").mean)

The names below load on first use, so `import lasagna_cli` (and `lasagna --help`) stays
light.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lasagna_cli.engine import EngineError, EngineUsageError, arun_benchmark, run_benchmark
    from lasagna_cli.engine.benchmarks import BenchmarkAdapter, register_benchmark
    from lasagna_cli.engine.config import (
        BenchmarkEntry,
        DatabaseSpec,
        ModelSpec,
        PromptSpec,
        ProviderSpec,
        RetrieverSpec,
        RunConfig,
        Setup,
    )
    from lasagna_cli.engine.reports import (
        BenchmarkResult,
        MetricSummary,
        QueryResult,
        Results,
        load_results,
    )
    from lasagna_cli.engine.run import Executor, LocalExecutor, Outcome, RayExecutor
    from lasagna_cli.engine.systems import (
        RetrievedItem,
        Row,
        System,
        SystemReply,
        SystemResult,
        SystemSpec,
    )

_LAZY = {
    "run_benchmark": "lasagna_cli.engine",
    "arun_benchmark": "lasagna_cli.engine",
    "load_results": "lasagna_cli.engine.reports",
    "Results": "lasagna_cli.engine.reports",
    "BenchmarkResult": "lasagna_cli.engine.reports",
    "MetricSummary": "lasagna_cli.engine.reports",
    "QueryResult": "lasagna_cli.engine.reports",
    "RunConfig": "lasagna_cli.engine.config",
    "BenchmarkEntry": "lasagna_cli.engine.config",
    "Setup": "lasagna_cli.engine.config",
    "RetrieverSpec": "lasagna_cli.engine.config",
    "ModelSpec": "lasagna_cli.engine.config",
    "ProviderSpec": "lasagna_cli.engine.config",
    "PromptSpec": "lasagna_cli.engine.config",
    "DatabaseSpec": "lasagna_cli.engine.config",
    "Executor": "lasagna_cli.engine.run",
    "LocalExecutor": "lasagna_cli.engine.run",
    "Outcome": "lasagna_cli.engine.run",
    "RayExecutor": "lasagna_cli.engine.run",
    "EngineError": "lasagna_cli.engine",
    "EngineUsageError": "lasagna_cli.engine",
    "System": "lasagna_cli.engine.systems",
    "SystemReply": "lasagna_cli.engine.systems",
    "SystemResult": "lasagna_cli.engine.systems",
    "SystemSpec": "lasagna_cli.engine.systems",
    "Row": "lasagna_cli.engine.systems",
    "RetrievedItem": "lasagna_cli.engine.systems",
    "BenchmarkAdapter": "lasagna_cli.engine.benchmarks",
    "register_benchmark": "lasagna_cli.engine.benchmarks",
}

__all__ = [
    "BenchmarkAdapter",
    "BenchmarkEntry",
    "BenchmarkResult",
    "DatabaseSpec",
    "EngineError",
    "EngineUsageError",
    "Executor",
    "LocalExecutor",
    "MetricSummary",
    "ModelSpec",
    "Outcome",
    "PromptSpec",
    "ProviderSpec",
    "QueryResult",
    "RayExecutor",
    "Results",
    "RetrievedItem",
    "RetrieverSpec",
    "Row",
    "RunConfig",
    "Setup",
    "System",
    "SystemReply",
    "SystemResult",
    "SystemSpec",
    "__version__",
    "arun_benchmark",
    "load_results",
    "register_benchmark",
    "run_benchmark",
]


def __getattr__(name: str) -> Any:
    if name == "__version__":
        # On first use: importlib.metadata is a cost a command that never asks would pay.
        from importlib.metadata import version

        globals()[name] = value = version("lasagna-cli")
        return value
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'lasagna_cli' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
