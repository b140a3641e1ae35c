"""What a plan will cost, before any call: LLM calls and cl100k_base tokens, counted exactly.

Input tokens are the exact cl100k_base count of every message the run will send, filled
with its passages, plus each call's JSON schema. What cannot be known before the run is
left out and said so: the question and answer a checking prompt will quote, and the
neighbours an unanswerable check will see (they depend on the question; the source
passage's own nearest passages stand in for them). Output tokens are bounded by each
call's max_tokens cap. Other models tokenize differently; cl100k_base is the yardstick.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from lasagna_synth._plan import Plan
from lasagna_synth._prompts import (
    CHECK_MAX_TOKENS,
    CHECKER_SYSTEM,
    PROMPTS,
    WRITE_MAX_TOKENS,
    WRITER_SYSTEM,
    check_messages,
    write_messages,
)
from lasagna_synth._tokens import ENCODING, count_tokens

Prices = Mapping[str, tuple[float, float]]


@dataclass(frozen=True)
class Estimate:
    """LLM calls, tokens and (with a price) the most the run can cost."""

    calls: int
    input_tokens: int
    max_output_tokens: int
    encoding: str
    model: str | None
    price: tuple[float, float] | None  # USD per 1M (input, output) tokens

    @property
    def max_cost_usd(self) -> float | None:
        if self.price is None:
            return None
        per_input, per_output = self.price
        return (self.input_tokens * per_input + self.max_output_tokens * per_output) / 1e6


def price_for(prices: Prices | None, model: str | None) -> tuple[float, float] | None:
    """The price of `provider/name`, looked up by the full id, then by the bare name."""
    if not prices or not model:
        return None
    if model in prices:
        return prices[model]
    return prices.get(model.split("/", 1)[-1])


def _user_messages(plan: Plan) -> Iterator[str]:
    for item in plan.items:
        yield write_messages(item.question_type, item.passages, item.use)[1]["content"]
        judged = item.passages
        if item.question_type == "unanswerable":
            judged = (item.passages[0], *plan.passage_neighbours(item.passages[0]))
        yield check_messages(item.question_type, judged, "", "")[1]["content"]


def estimate(plan: Plan, *, model: str | None = None, prices: Prices | None = None) -> Estimate:
    """Count the calls and tokens of `plan`; price them when `prices` has `model`."""
    per_type: dict[str, int] = {}
    for question_type, spec in PROMPTS.items():
        schemas = [
            json.dumps(spec.write_schema.model_json_schema()),
            json.dumps(spec.check_schema.model_json_schema()),
        ]
        per_type[question_type] = count_tokens([WRITER_SYSTEM, CHECKER_SYSTEM, *schemas])
    fixed = sum(per_type[item.question_type] for item in plan.items)
    return Estimate(
        calls=2 * len(plan.items),
        input_tokens=fixed + count_tokens(_user_messages(plan)),
        max_output_tokens=len(plan.items) * (WRITE_MAX_TOKENS + CHECK_MAX_TOKENS),
        encoding=ENCODING,
        model=model,
        price=price_for(prices, model),
    )
