"""Which questions of a dataset a run asks: filtered, then sampled or cut.

- `filters` match the questions' metadata (`--filter key=value`; several values for one
  key match any of them); a key no question has, or filters that leave nothing, are refused
  with what is there.
- `n_samples` draws with the seed: a registered benchmark by lasagna's seeded order (the
  first N question ids in the order of sha256(seed, id), the same on any machine, as
  `benchmark sample --mode random` draws them), a user's file as lasagna-rag draws it
  (`random.Random(seed).sample`). The corpus always stays whole.
- `max_queries`: the first N questions in the benchmark's order (the staged pipeline's).
"""

from __future__ import annotations

import random

from lasagna_cli.engine._data import Dataset, Question
from lasagna_cli.engine._errors import EngineUsageError
from lasagna_cli.engine.config._config import BenchmarkEntry


def select_questions(dataset: Dataset, entry: BenchmarkEntry, seed: int) -> list[Question]:
    questions = list(dataset.questions)
    if entry.filters:
        available = dataset.filterable()
        for key, wanted in entry.filters.items():
            if key not in available:
                raise EngineUsageError(
                    f'{entry.where}: cannot filter on "{key}": no row has it in "metadata". '
                    f"Filterable: {', '.join(available) or 'nothing'}"
                )
            questions = [q for q in questions if q.filter_values().get(key) in wanted]
        if not questions:
            shown = "; ".join(f"{k}: {', '.join(v)}" for k, v in available.items())
            asked = ", ".join(f"{k}={v}" for k, vs in entry.filters.items() for v in vs)
            raise EngineUsageError(
                f"{entry.where}: no question matches the filters {asked}; the values present "
                f"are {shown}"
            )
    if entry.n_samples is not None and entry.n_samples < len(questions):
        if dataset.kind == "benchmark":
            from lasagna_cli.engine.benchmarks._sampling import seeded_order

            chosen = set(
                seeded_order([q.id for q in questions], seed, "question")[: entry.n_samples]
            )
            questions = [q for q in questions if q.id in chosen]
        else:
            questions = random.Random(seed).sample(questions, entry.n_samples)
    if entry.max_queries is not None:
        questions = questions[: entry.max_queries]
    return questions
