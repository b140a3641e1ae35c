"""lasagna against OpenViking's own Python (volcengine/OpenViking @ 6e944cc, benchmark/RAG/)
as the oracle, on the real data in ../shared/data.

Two kinds of check:
- pinned: tests/cli/fixtures/openviking/oracle/*.json were derived by running the upstream
  code on that data (`uv run python tests/cli/openviking_oracle.py`, which says how); they
  hold digests, ids and figures, never the data. These run wherever ../shared/data is.
- live: where the mirror of OpenViking is on the machine, the upstream code itself runs
  beside lasagna in the test, and every pinned case is checked to be what it writes today
  (skipped otherwise).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from lasagna_cli.engine.benchmarks._ov_sampling import sample_openviking


def _oracle() -> Any:
    spec = importlib.util.spec_from_file_location(
        "openviking_oracle", Path(__file__).parent / "openviking_oracle.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["openviking_oracle"] = module
    spec.loader.exec_module(module)
    return module


oracle = _oracle()
CASES, FIXTURE, SHARED = oracle.CASES, oracle.FIXTURE, oracle.SHARED
build_raw, case_id, digests = oracle.build_raw, oracle.case_id, oracle.digests
run_upstream_sampler, upstream = oracle.run_upstream_sampler, oracle.upstream

needs_data = pytest.mark.skipif(not SHARED.is_dir(), reason="needs ../shared/data/datasets")
PINNED: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def raw(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_raw(tmp_path_factory.mktemp("openviking"))


@pytest.fixture(scope="module")
def rag(tmp_path_factory: pytest.TempPathFactory) -> Path:
    found = upstream(tmp_path_factory.mktemp("upstream"))
    if found is None:
        pytest.skip("no mirror of volcengine/OpenViking on this machine")
    return found


def lasagna_sample(raw: Path, out: Path, case: tuple[Any, ...]) -> None:
    name, size, docs, mode, seed = case
    sample_openviking(name, raw / name, out, sample_size=size, num_docs=docs, seed=seed, mode=mode)


def test_the_pinned_cases_are_the_cases() -> None:
    assert sorted(PINNED) == sorted(case_id(c) for c in CASES)


@needs_data
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_prepare_writes_the_files_sample_dataset_py_writes(
    raw: Path, tmp_path: Path, case: tuple[Any, ...]
) -> None:
    """The same documents, questions and bytes: every file's sha256 is upstream's, and so is
    sampling_metadata.json (its keys and counts)."""
    lasagna_sample(raw, tmp_path, case)
    expected = PINNED[case_id(case)]
    assert json.loads((tmp_path / "sampling_metadata.json").read_text()) == expected["metadata"]
    assert digests(tmp_path) == expected["files"]


@needs_data
@pytest.mark.parametrize("case", CASES[:4], ids=case_id)
def test_prepare_against_the_live_upstream_script(
    raw: Path, rag: Path, tmp_path: Path, case: tuple[Any, ...]
) -> None:
    run_upstream_sampler(rag, raw, tmp_path / "upstream", case)
    lasagna_sample(raw, tmp_path / "lasagna", case)
    assert digests(tmp_path / "lasagna") == digests(tmp_path / "upstream")


@needs_data
def test_every_pinned_case_is_what_sample_dataset_py_writes_today(
    raw: Path, rag: Path, tmp_path: Path
) -> None:
    """The fixture the pinned test falls back to without the mirror is upstream's, case by
    case (the live test above runs lasagna beside upstream on the first four only)."""
    for case in CASES:
        out = tmp_path / case_id(case)
        run_upstream_sampler(rag, raw, out, case)
        metadata = json.loads((out / "sampling_metadata.json").read_text(encoding="utf-8"))
        assert {"files": digests(out), "metadata": metadata} == PINNED[case_id(case)], case
