"""Fixtures for the lasagna-metrics tests: the official-script oracles and the shared data.

Only pytest and the standard library here: these tests run with only lasagna-metrics (and
its dev group) installed.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
# CI has the shared data beside the repository: ../shared/data.
SHARED_DATA = HERE.parents[1].parent / "shared" / "data"


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"lasagna_test_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


OFFICIAL = _load(HERE / "official_squad.py")


@pytest.fixture(scope="session")
def official() -> ModuleType:
    """Faithful copies of the official SQuAD v1.1 and v2.0 evaluation functions."""
    return OFFICIAL


@pytest.fixture(scope="session")
def openviking_cases() -> dict[str, Any]:
    """Inputs and what OpenViking's own metrics.py gives for them, pinned from running it
    (data/make_openviking_cases.py)."""
    cases: dict[str, Any] = json.loads((HERE / "data" / "openviking_cases.json").read_text())
    return cases


@pytest.fixture(scope="session")
def squad_dir() -> Path:
    path = SHARED_DATA / "datasets" / "squad"
    if not path.is_dir():
        pytest.skip(f"shared SQuAD data not found at {path}")
    return path
