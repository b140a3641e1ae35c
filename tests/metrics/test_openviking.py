"""OpenViking's own figures (openviking_f1, openviking_recall, openviking_refusal) equal its
benchmark's MetricsCalculator: on the figures pinned from running it always
(data/openviking_cases.json), and on hypothesis's inputs against the upstream file itself
when its repository is fetched beside this one (OPENVIKING_MIRROR names another place;
then every pinned figure is checked against the file too)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lasagna_metrics import openviking_f1, openviking_recall, openviking_refusal

WORD = st.sampled_from(["the", "and", "AND", "a,b", "none", "D1:3", "[D1:30]", "x-y", "é"])
TEXT = st.lists(WORD | st.text(max_size=6), max_size=8).map(" ".join)
# Where the fetch tool puts the repository: beside this checkout, as /work/.mirror/.
BESIDE = Path(__file__).resolve().parents[3] / ".mirror" / "volcengine+OpenViking" / "repo"
MIRROR = Path(os.environ.get("OPENVIKING_MIRROR", BESIDE))
COMMIT = "6e944cc"


def test_f1_refusal_and_recall_equal_openvikings_pinned_figures(
    openviking_cases: dict[str, Any],
) -> None:
    assert openviking_cases["commit"] == [COMMIT]
    for prediction, reference, expected in openviking_cases["f1"]:
        assert openviking_f1(prediction, reference) == expected, (prediction, reference)
    for text, expected in openviking_cases["refusal"]:
        assert openviking_refusal(text) == expected, text
    for chunks, evidence, expected in openviking_cases["recall"]:
        assert openviking_recall(chunks, evidence) == expected, (chunks, evidence)


def test_the_differences_from_lasagnas_rules(openviking_cases: dict[str, Any]) -> None:
    functions = {"check_recall": openviking_recall, "check_refusal": openviking_refusal}
    for name, args, expected in openviking_cases["named"]:  # as OpenViking gives them
        assert functions.get(name, openviking_f1)(*args) == expected
    assert openviking_recall(["said hi [D1:30]"], ["D1:3"]) == 1.0  # no word boundary
    assert openviking_recall(["anything"], []) == 0.0  # nothing to recall scores 0
    assert openviking_refusal("Nonetheless, Paris.")  # "none" is a substring
    assert openviking_f1("salt and pepper", "salt, pepper") == 1.0  # "and", commas dropped


@pytest.fixture(scope="module")
def upstream() -> ModuleType:
    """benchmark/RAG/src/core/metrics.py at the commit lasagna matches, read from the fetched
    repository (it imports only the standard library)."""
    try:
        source = subprocess.run(
            ["git", "-C", str(MIRROR), "show", f"{COMMIT}:benchmark/RAG/src/core/metrics.py"],
            capture_output=True, check=True, text=True,
        ).stdout  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("OpenViking's repository is not fetched beside this one")
    module = ModuleType("openviking_metrics_upstream")
    exec(compile(source, "metrics.py", "exec"), module.__dict__)
    return module


@settings(max_examples=200)
@given(st.lists(TEXT, max_size=4), st.lists(TEXT, max_size=5), TEXT, TEXT)
def test_equals_the_upstream_file_itself(
    upstream: ModuleType, chunks: list[str], evidence: list[str], prediction: str, reference: str
) -> None:
    calculator = upstream.MetricsCalculator
    assert openviking_recall(chunks, evidence) == calculator.check_recall(chunks, evidence)
    assert openviking_f1(prediction, reference) == calculator.calculate_f1(prediction, reference)
    assert openviking_refusal(prediction) == calculator.check_refusal(prediction)


def test_every_pinned_figure_is_what_the_upstream_file_gives(
    upstream: ModuleType, openviking_cases: dict[str, Any]
) -> None:
    """The fixture the tests fall back to without the mirror (this file's pinned test and
    test_evidence.py's) holds upstream's figures, group by group."""
    calculator = upstream.MetricsCalculator
    groups = {
        "f1": lambda p, r: calculator.calculate_f1(p, r),
        "refusal": calculator.check_refusal,
        "recall": calculator.check_recall,
        "recall_no_cut": calculator.check_recall,
        "recall_any_text": calculator.check_recall,
        "normalize": calculator.normalize_answer,
    }
    for group, function in groups.items():
        assert len(openviking_cases[group]) >= 300, group
        for *args, expected in openviking_cases[group]:
            assert function(*args) == expected, (group, args)
    for name, args, expected in openviking_cases["named"]:
        assert getattr(calculator, name)(*args) == expected
