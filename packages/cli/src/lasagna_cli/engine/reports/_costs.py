"""What a run's model calls cost, from a price table (`--prices FILE`: {"provider/model" or
"model": [USD per 1M input tokens, per 1M output tokens]}, read by the commands).

Every answer and every grade records its model and its tokens; each is priced by
lasagna-judge's `price_for` (the full id first, then the bare name). Cached calls are
priced too: this is what the results cost to compute, as `judge grade` prices "all the
graded answers". A call answered through a batch API (`"batch": true` on its answer or
grade: `--batch`) costs lasagna-judge's `BATCH_PRICE` of the price, as its provider bills
it; a record without the mark (every record before it) is a direct call's. A model without
a price leaves the cost unknown (None), and is named in `unpriced`, never counted as free.
`cost_line` says each result's cost in one line (`run --prices`, `sweep --prices`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from lasagna_cli.engine.records._records import ANSWER_SECTIONS

Prices = Mapping[str, tuple[float, float]]


def _price(
    prices: Prices, model: Any, input_tokens: Any, output_tokens: Any, batch: bool = False
) -> float | None:
    from lasagna_judge import BATCH_PRICE, price_for

    price = price_for(prices, str(model)) if model else None
    if price is None:
        return None
    cost = (int(input_tokens or 0) * price[0] + int(output_tokens or 0) * price[1]) / 1_000_000
    return cost * BATCH_PRICE if batch else cost


class _Tally:
    def __init__(self) -> None:
        self.total = 0.0
        self.unpriced: set[str] = set()

    def add(
        self, prices: Prices, model: Any, tokens_in: Any, tokens_out: Any, batch: bool = False
    ) -> float | None:
        if not tokens_in and not tokens_out:
            return 0.0
        cost = _price(prices, model, tokens_in, tokens_out, batch)
        if cost is None:
            self.unpriced.add(str(model or "unknown model"))
        else:
            self.total += cost
        return cost

    def summary(self) -> dict[str, Any]:
        return {
            "cost_usd": None if self.unpriced else self.total,
            "priced_usd": self.total,
            "unpriced": sorted(self.unpriced),
        }


def _call_cost(part: Mapping[str, Any], prices: Prices, tally: _Tally) -> float | None:
    tokens = part.get("input_tokens"), part.get("output_tokens")
    return tally.add(prices, part.get("model"), *tokens, batch=part.get("batch") is True)


def section_cost(
    section: Mapping[str, Any], prices: Prices, tally: _Tally | None = None
) -> float | None:
    """An answer's cost, its grade's and claim diagnosis's included (None: some model has
    no price)."""
    tally = tally or _Tally()
    parts = [_call_cost(section, prices, tally)]
    for judged in ("judge", "diagnostics"):
        grade = section.get(judged)
        members = grade.get("jury") if isinstance(grade, Mapping) else None
        if isinstance(members, list):  # a jury: each judge's calls at its own price
            parts += [_call_cost(g, prices, tally) for g in members if isinstance(g, Mapping)]
        elif isinstance(grade, Mapping):
            parts.append(_call_cost(grade, prices, tally))
    return None if any(p is None for p in parts) else sum(p for p in parts if p is not None)


def records_cost(records: Iterable[Mapping[str, Any]], prices: Prices) -> dict[str, Any]:
    """The cost of a result's task records (results.json's `usage`)."""
    tally = _Tally()
    for record in records:
        for name in ANSWER_SECTIONS:
            section = record.get(name)
            if isinstance(section, Mapping):
                section_cost(section, prices, tally)
    return tally.summary()


def price_results(results: Iterable[dict[str, Any]], prices: Prices) -> None:
    """Price each question's answers (their entries completed from the task records) and
    each result as a whole, in place: `cost_usd` on every answer and in `usage`."""
    for result in results:
        tally = _Tally()
        for entry in result.get("per_query", ()):
            for name in ANSWER_SECTIONS:
                section = entry.get(name)
                if isinstance(section, dict) and "input_tokens" in section:
                    section["cost_usd"] = section_cost(section, prices, tally)
        result.setdefault("usage", {}).update(tally.summary())


def _money(usage: Mapping[str, Any]) -> str:
    if usage.get("cost_usd") is not None:
        return f"${usage['cost_usd']:.4f}"
    unpriced = ", ".join(usage.get("unpriced") or ()) or "some model"
    return f"unknown (no price for {unpriced}; ${usage.get('priced_usd', 0.0):.4f} priced)"


def cost_line(results: Sequence[Mapping[str, Any]]) -> str:
    """One line: each result's cost (answers and grades, cached calls included)."""
    parts = [
        f"{r['setup']['name']} on {r['dataset']['name']} {_money(r.get('usage') or {})}"
        for r in results
    ]
    return "cost (answers and grades, cached calls included): " + "; ".join(parts)
