"""What a plan will cost, before any call: LLM calls and cl100k_base tokens, counted exactly.

Input tokens are the exact cl100k_base count of every message the run will send, filled
with its passages, plus each call's JSON schema. What cannot be known before the run is
left out and said so: the question and answer a checking prompt will quote, and the
neighbours an unanswerable check will see (they depend on the question; the source
passage's own nearest passages stand in for them). Output tokens are bounded by each
call's max_tokens cap. Other models tokenize differently; cl100k_base is the yardstick.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from lasagna_synth._corpus import Passage
from lasagna_synth._plan import Plan, PlanItem
from lasagna_synth._prompts import (
    CHECK_MAX_TOKENS,
    CHECKER_SYSTEM,
    PROMPTS,
    SCHEMA_JSON,
    WRITE_MAX_TOKENS,
    WRITER_SYSTEM,
    check_messages,
    passage_block,
    write_messages,
)
from lasagna_synth._tokens import ENCODING, count_tokens, token_counts

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


def _block(passage: Passage) -> str:
    """A passage's block as `_pieces` cuts it out: without its closing ">"."""
    return passage_block(passage.text)[:-1]


def _pieces(content: str, passages: Sequence[Passage]) -> Iterator[str]:
    """`content` cut before each passage block and before its closing ">".

    Both cuts fall between two of cl100k_base's pre-tokens (a block follows a line break,
    which the pre-token before it ends on; "passage" is a run of letters, which ends at
    ">"), and BPE never merges across pre-tokens: so the pieces' counts add up to the
    count of the whole, exactly, while a passage's block is counted once however many
    prompts show it. (A test checks the sum against whole-prompt counts.)
    """
    at = 0
    for passage in passages:
        block = _block(passage)
        start = content.find(block, at)
        if start <= 0 or content[start - 1] != "\n":
            yield content[at:]  # not the expected layout: count the rest whole
            return
        yield content[at:start]
        yield block
        at = start + len(block)
    yield content[at:]


def _item_pieces(plan: Plan, item: PlanItem) -> Iterator[str]:
    write = write_messages(item.question_type, item.passages, item.use)
    yield from _pieces(write[1]["content"], item.passages)
    judged = item.passages
    if item.question_type == "unanswerable":
        judged = (item.passages[0], *plan.passage_neighbours(item.passages[0]))
    check = check_messages(item.question_type, judged, "", "")
    yield from _pieces(check[1]["content"], judged)


def estimate(plan: Plan, *, model: str | None = None, prices: Prices | None = None) -> Estimate:
    """Count the calls and tokens of `plan`; price them when `prices` has `model`."""
    per_type: dict[str, int] = {}
    for question_type, spec in PROMPTS.items():
        schemas = [SCHEMA_JSON[spec.write_schema_name], SCHEMA_JSON[spec.check_schema_name]]
        per_type[question_type] = count_tokens([WRITER_SYSTEM, CHECKER_SYSTEM, *schemas])
    fixed = sum(per_type[item.question_type] for item in plan.items)
    # What needs no word overlaps (the prompts of items without partners or neighbours, and
    # every item's own passage) is counted on a thread while this one finds the overlaps:
    # encoding calls there, which hold no GIL, beside pure Python here.
    direct = (item for item in plan.items if not item.needs_index)
    uses = Counter(piece for item in direct for piece in _item_pieces(plan, item))
    early = list(uses.keys() | {_block(item.source) for item in plan.items if item.needs_index})
    with ThreadPoolExecutor(1) as pool:
        counting = pool.submit(token_counts, early, 1)
        for item in plan.items:
            if item.needs_index:
                uses.update(_item_pieces(plan, item))
        counts = dict(zip(early, counting.result(), strict=True))
    rest = [piece for piece in uses if piece not in counts]
    counts.update(zip(rest, token_counts(rest), strict=True))
    return Estimate(
        calls=2 * len(plan.items),
        input_tokens=fixed + sum(counts[piece] * n for piece, n in uses.items()),
        max_output_tokens=len(plan.items) * (WRITE_MAX_TOKENS + CHECK_MAX_TOKENS),
        encoding=ENCODING,
        model=model,
        price=_price(prices, model),
    )


def _price(prices: Prices | None, model: str | None) -> tuple[float, float] | None:
    if not prices:
        return None  # the judge (and what it imports) is not needed to say so
    from lasagna_judge import price_for  # the one lookup rule: full id, then bare name

    return price_for(prices, model)
