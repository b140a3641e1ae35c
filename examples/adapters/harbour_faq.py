"""A dataset of your own, the OpenViking way: a `BaseAdapter` subclass, found by its module
and class name in OpenViking's config (no edit to lasagna), or through an entry point.

    harbour-faq/docs/*.md         the documents to search
    harbour-faq/questions.jsonl   {id, question, answers, category, doc, evidence}

Run it from the repository's root (the module is imported from the working directory):

    uv run lasagna benchmark openviking examples/adapters/harbour_faq_config.yaml --step gen

or register it in your package's pyproject.toml, and `lasagna benchmark run harbour-faq
--data-dir DIR` finds it:

    [project.entry-points."lasagna.benchmarks"]
    harbour-faq = "examples.adapters.harbour_faq:HarbourFaqAdapter"
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from lasagna_cli.engine.benchmarks import BaseAdapter, BenchmarkDocument, BenchmarkQuestion


class HarbourFaqAdapter(BaseAdapter):
    name = "harbour-faq"
    title = "Port Elvar visitor FAQ"
    description = "Questions a visitor asks about the ferry and the library."
    licence = "CC0 1.0"
    categories = {  # noqa: RUF012  (a class attribute read once, as BaseAdapter's)
        "fact": "one sentence of one document answers it",
        "reasoning": "two facts of one document",
    }
    instructions = {  # noqa: RUF012
        "fact": "Answer with the exact words of the context; no full sentence.",
        "reasoning": "Answer both parts briefly, from the context only.",
    }
    files_help = "a folder with docs/*.md and questions.jsonl (see examples/adapters/)"

    def load_documents(self, source: Path, split: str) -> Iterator[BenchmarkDocument]:
        for path in sorted((source / "docs").glob("*.md")):
            text = path.read_text(encoding="utf-8")
            yield BenchmarkDocument(id=path.stem, text=text, title=text.splitlines()[0][2:])

    def load_questions(self, source: Path, split: str) -> Iterator[BenchmarkQuestion]:
        with (source / "questions.jsonl").open(encoding="utf-8") as handle:
            for line in handle:
                row = json.loads(line)
                yield BenchmarkQuestion(
                    id=row["id"],
                    question=row["question"],
                    references=tuple(row["answers"]),
                    evidence=tuple(row["evidence"]),
                    category=row["category"],
                    doc_ids=(row["doc"],),
                )
