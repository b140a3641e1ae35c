"""A system spec made live: the predictions file read, the callable imported, the HTTP
client opened; and what results and fingerprints record about it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lasagna_cli.engine.systems._adapter import SystemAdapter
from lasagna_cli.engine.systems._predictions import Predictions, load_predictions
from lasagna_cli.engine.systems._spec import SystemSpec


@dataclass
class LoadedSystem:
    spec: SystemSpec
    adapter: SystemAdapter | None = None
    """FunctionSystem, RetrieverSystem, RunnableSystem or HttpSystem; None for predictions."""
    predictions: Predictions | None = None

    def describe(self) -> dict[str, Any]:
        """What results record: the spec (no secrets), how it was called, the file's digest."""
        described = self.spec.describe()
        if self.adapter is not None:
            described.update(self.adapter.describe())
        if self.predictions is not None:
            described.update(self.predictions.describe())
        return described

    def identity(self) -> dict[str, Any]:
        """What decides the outputs, for task fingerprints: a changed file is a new system."""
        described = self.spec.describe()
        keep = {"kind", "file", "target", "url"}
        found = {k: v for k, v in described.items() if k in keep}
        if self.predictions is not None:
            found["sha256"] = self.predictions.sha256
        return found

    async def aclose(self) -> None:
        if self.adapter is not None:
            await self.adapter.aclose()


async def load_system(spec: SystemSpec, concurrency: int) -> LoadedSystem:
    if spec.kind == "predictions":
        return LoadedSystem(spec, predictions=load_predictions(spec))
    if spec.kind == "http":
        from lasagna_cli.engine.systems._http import HttpSystem

        return LoadedSystem(spec, adapter=HttpSystem(spec, concurrency))
    from lasagna_cli.engine.systems._callable import build_callable

    return LoadedSystem(spec, adapter=await build_callable(spec.target, spec.label, spec.timeout))
