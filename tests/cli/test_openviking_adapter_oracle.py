"""lasagna's benchmark adapters against OpenViking's (volcengine/OpenViking @ 6e944cc,
benchmark/RAG/src/adapters/) on the real data in ../shared/data: the same questions, in
the same order, with the same ids, texts, gold answers, categories and evidence (as
generated_answers.json writes them, and as OpenViking's Recall tests them).

- pinned: tests/cli/fixtures/openviking/oracle/adapters.json was derived by running the
  upstream adapters (`uv run python tests/cli/openviking_adapter_oracle.py`); it holds ids
  and digests, never the data. These run wherever ../shared/data is.
- live: where the mirror of OpenViking is on the machine, the upstream adapters run beside
  lasagna's in the test (skipped otherwise).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest


def _load(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, Path(__file__).parent / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


sampling = _load("openviking_oracle")
oracle = _load("openviking_adapter_oracle")
CASES, SHARED = oracle.CASES, oracle.SHARED
PINNED: dict[str, Any] = json.loads(oracle.FIXTURE.read_text(encoding="utf-8"))

needs_data = pytest.mark.skipif(not SHARED.is_dir(), reason="needs ../shared/data/datasets")


@pytest.fixture(scope="module")
def layout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return oracle.build(tmp_path_factory.mktemp("adapters"))  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def rag(tmp_path_factory: pytest.TempPathFactory) -> Path:
    found = sampling.upstream(tmp_path_factory.mktemp("upstream"))
    if found is None:
        pytest.skip("no mirror of volcengine/OpenViking on this machine")
    return found  # type: ignore[no-any-return]


def test_the_pinned_cases_are_the_cases() -> None:
    assert sorted(PINNED) == sorted(CASES)


@needs_data
@pytest.mark.parametrize("case", sorted(CASES))
def test_each_adapter_reads_the_questions_openvikings_reads(layout: Path, case: str) -> None:
    found = oracle.pinned(oracle.lasagna_questions(layout, case))
    expected = PINNED[case]
    assert found["count"] == expected["count"]
    assert [q[0] for q in found["questions"]] == [q[0] for q in expected["questions"]]
    assert found == expected


@needs_data
@pytest.mark.parametrize("case", sorted(CASES))
def test_against_the_live_upstream_adapter(layout: Path, rag: Path, case: str) -> None:
    assert oracle.lasagna_questions(layout, case) == oracle.upstream_questions(rag, layout, case)


@needs_data
def test_the_folders_hold_what_the_issue_counted(layout: Path) -> None:
    """Qasper: every *.json of the folder (13 questions over two splits, where reading
    qasper-dev alone had 4); SyllabusQA: every CSV split (val and test), none of
    syllabi_meta_info.csv's rows."""
    assert PINNED["qasper-splits"]["count"] == 13
    assert PINNED["syllabusqa-splits"]["count"] == 1770
    shared = oracle.lasagna_questions(layout, "syllabusqa-shared")
    assert all(q["sample_id"] for q in shared)
    assert len(shared) == 957 - 135  # val.csv without its "no answer" questions
