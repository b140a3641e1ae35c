"""The draws of OpenViking's scripts/sample_dataset.py, with Python's `random` seeded and
called exactly as the script calls it (see `_ov_sampling` for how each dataset uses them):

- `draw_stratified`: an even quota per category (sorted), the remainder to the first ones,
  each from a seeded shuffle; then the shortfall one item per category per round, each
  from a fresh shuffle (a sample smaller than the number of categories: `draw_random`);
- `draw_random`: `random.sample` when there are more items than the size;
- `docs_stratified`: whole documents, category by category, each category's questions in
  seeded order, while the category's count stays within its quota;
- `docs_random`: whole documents in seeded order while their questions fit.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any


def category_targets(sample_size: int, categories: Sequence[str]) -> dict[str, int] | None:
    """An even split over the categories (sorted), the remainder to the first ones; None
    when the sample is smaller than the number of categories (then drawn at random)."""
    if not categories:
        return None
    base, remainder = divmod(sample_size, len(categories))
    if base == 0:
        return None
    return {c: base + (1 if i < remainder else 0) for i, c in enumerate(categories)}


def draw_stratified(sample_size: int, by_category: dict[str, list[Any]], seed: int) -> list[Any]:
    """`stratified_sample_with_reallocation`: each category's quota from a seeded shuffle,
    then the shortfall one item per category per round, each from a fresh shuffle."""
    random.seed(seed)
    categories = sorted(by_category)
    targets = category_targets(sample_size, categories)
    if targets is None:
        pooled = [item for items in by_category.values() for item in items]
        return draw_random(sample_size, pooled, seed)
    chosen: list[Any] = []
    taken: dict[str, int] = {}
    for category in categories:
        items = by_category[category].copy()
        random.shuffle(items)
        taken[category] = min(len(items), targets[category])
        chosen.extend(items[: taken[category]])
    remaining = sample_size - sum(taken.values())
    left = {c: len(by_category[c]) - taken[c] for c in categories}
    while remaining > 0:
        given = 0
        for category in categories:
            if remaining <= 0:
                break
            if left[category] > 0:
                items = by_category[category].copy()
                random.shuffle(items)
                for item in items:
                    if item not in chosen:
                        chosen.append(item)
                        left[category] -= 1
                        remaining -= 1
                        given += 1
                        break
        if given == 0:
            break
    return chosen


def draw_random(sample_size: int, items: list[Any], seed: int) -> list[Any]:
    random.seed(seed)
    return random.sample(items, sample_size) if len(items) > sample_size else items


def docs_stratified(
    sample_size: int,
    by_category: dict[str, list[tuple[Any, Any]]],
    doc_categories: dict[Any, dict[str, list[Any]]],
    doc_ids: list[Any],
    seed: int,
) -> list[Any]:
    """`sample_docs_stratified`: per category (sorted), its questions in seeded order; a
    question's whole document is taken while the category's count stays within quota."""
    random.seed(seed)
    categories = sorted(by_category)
    targets = category_targets(sample_size, categories)
    if targets is None:
        counts = {d: sum(len(q) for q in cats.values()) for d, cats in doc_categories.items()}
        return docs_random(sample_size, counts, doc_ids, seed)
    chosen: list[Any] = []
    used: set[Any] = set()
    counted = dict.fromkeys(categories, 0)
    for category in categories:
        pairs = by_category[category].copy()
        random.shuffle(pairs)
        for doc_id, _ in pairs:
            if doc_id in used:
                continue
            if (
                counted[category] + len(doc_categories[doc_id].get(category, []))
                > targets[category]
            ):
                continue
            chosen.append(doc_id)
            used.add(doc_id)
            for other, questions in doc_categories[doc_id].items():
                counted[other] += len(questions)
            if counted[category] >= targets[category]:
                break
    return chosen


def docs_random(
    sample_size: int, counts: dict[Any, int], doc_ids: list[Any], seed: int
) -> list[Any]:
    """`sample_docs_random`: documents in seeded order while their questions fit."""
    random.seed(seed)
    order = doc_ids.copy()
    random.shuffle(order)
    chosen: list[Any] = []
    total = 0
    for doc_id in order:
        n = counts.get(doc_id, 0)
        if n == 0:
            continue
        if total + n <= sample_size or not chosen:
            chosen.append(doc_id)
            total += n
        elif total >= sample_size:
            break
    return chosen


def group(pairs: list[tuple[str, Any]]) -> dict[str, list[Any]]:
    grouped: dict[str, list[Any]] = {}
    for key, value in pairs:
        grouped.setdefault(key, []).append(value)
    return grouped
