"""The judge's bias checks at the wire: a scripted judge that rewards length, and one that
reads only the first reference, are caught; a judge that reads the content is not."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest

from lasagna_judge import BiasCheck, JudgeError, check_bias, grade_batch, load_rubric, make_llm
from lasagna_judge.testing import FakeLLMServer

SCALE = load_rubric("scale")
ITEMS = [
    {"question": f"Q{i}?", "references": ["alpha", "beta"] if i % 2 else ["alpha"],
     "prediction": "alpha" if i % 3 else "gamma"}
    for i in range(12)
]  # fmt: skip
ITEMS.append({"question": "Q?", "references": ["I don't know"], "prediction": "I don't know."})


def prompt_of(request: dict[str, Any]) -> str:
    return next(
        str(m["content"]) for m in request["messages"] if "Answer to grade: " in str(m["content"])
    )


def field(prompt: str, name: str) -> str:
    return prompt.split(name, 1)[1].split("\n", 1)[0]


def fair(request: dict[str, Any]) -> str:
    prompt = prompt_of(request)
    hit = field(prompt, "Answer to grade: ").startswith("alpha")
    return json.dumps({"reasoning": "r", "score": 4 if hit else 0})


def likes_length(request: dict[str, Any]) -> str:
    prompt = prompt_of(request)
    answer = field(prompt, "Answer to grade: ")
    score = (4 if answer.startswith("alpha") else 0) if len(answer) < 40 else 4
    return json.dumps({"reasoning": "r", "score": score})


def first_reference_only(request: dict[str, Any]) -> str:
    prompt = prompt_of(request)
    first = field(prompt, "Reference answer(s): ").split(" | ")[0]
    return json.dumps(
        {"reasoning": "r", "score": 4 if field(prompt, "Answer to grade: ") == first else 1}
    )


def run_checks(script: Callable[[dict[str, Any]], str], sample: int = 50) -> list[BiasCheck]:
    async def go(server: FakeLLMServer) -> list[BiasCheck]:
        llm = make_llm(
            "openai/j", base_url=server.base_url, api_key="t", cache=False, max_retries=0
        )
        try:
            grades = await grade_batch(llm, SCALE, ITEMS)
            return await check_bias(llm, SCALE, ITEMS, grades, sample=sample, seed=1)
        finally:
            await llm.aclose()

    with FakeLLMServer(script) as server:
        return asyncio.run(go(server))


def test_a_fair_judge_is_not_moved() -> None:
    verbosity, order = run_checks(fair)
    assert (verbosity.name, order.name) == ("verbosity", "reference order")
    assert verbosity.sampled == 12  # the refusal pair had no judge to sway
    assert order.sampled == 6  # the items with two references
    assert (verbosity.changed, order.changed) == (0, 0)
    assert verbosity.share_changed == 0.0


def test_a_judge_that_rewards_length_is_caught() -> None:
    verbosity, _ = run_checks(likes_length)
    wrong = sum(1 for item in ITEMS[:12] if item["prediction"] == "gamma")
    assert (verbosity.compared, verbosity.changed, verbosity.higher) == (12, wrong, wrong)
    assert verbosity.lower == 0


def test_a_judge_that_reads_the_first_reference_only_is_caught() -> None:
    _, order = run_checks(first_reference_only)
    moved = sum(1 for i, item in enumerate(ITEMS[:12]) if i % 2 and item["prediction"] == "alpha")
    assert (order.compared, order.changed, order.lower) == (6, moved, moved)


def test_the_sample_is_seeded_and_bounded() -> None:
    verbosity, _ = run_checks(fair, sample=5)
    assert verbosity.sampled == 5
    with pytest.raises(JudgeError, match="at least 1"):
        run_checks(fair, sample=0)
