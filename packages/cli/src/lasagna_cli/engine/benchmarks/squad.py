"""SQuAD v2.0 (the official JSON): Wikipedia paragraphs with answerable and unanswerable
questions.

Raw file: <split>-v2.0.json: `{"version": "v2.0", "data": [{"title", "paragraphs":
[{"context", "qas": [{"id", "question", "answers": [{"text", "answer_start"}],
"is_impossible"}]}]}]}`. v1.1 files (no `is_impossible`) read the same way.

Rules:
- one document per paragraph: the article title as a heading, then the paragraph; its id is
  `<title>#<first 8 hex digits of the paragraph's sha256>`, stable when a subset is written;
- references = the distinct answer texts in order; an unanswerable question (is_impossible,
  or no answer) gets "Not mentioned" and no evidence;
- evidence = the paragraph the question was written on;
- category = "answerable" or "unanswerable".
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from lasagna_cli.engine.benchmarks._base import BenchmarkAdapter
from lasagna_cli.engine.benchmarks._files import (
    dump_json,
    expect,
    expect_lists,
    read_json,
    write_text_atomic,
)
from lasagna_cli.engine.benchmarks._model import (
    MISSING_ANSWER,
    BenchmarkDocument,
    BenchmarkQuestion,
    BenchmarkSpec,
    LoadedBenchmark,
    ReadOptions,
    Subset,
)

SPEC = BenchmarkSpec(
    name="squad",
    title="SQuAD v2.0",
    description=(
        "Reading comprehension on Wikipedia paragraphs: crowd-written questions answered by a "
        "span of the paragraph, plus adversarial questions the paragraph cannot answer."
    ),
    licence="CC BY-SA 4.0",
    citation=(
        "Rajpurkar, Jia, Liang. Know What You Don't Know: Unanswerable Questions for SQuAD. "
        "ACL 2018. arXiv:1806.03822"
    ),
    homepage="https://rajpurkar.github.io/SQuAD-explorer/",
    splits=("train", "dev"),
    default_split="dev",
    categories={
        "answerable": "a span of the paragraph answers it",
        "unanswerable": "written to look answerable, but the paragraph does not answer it",
    },
    # One instruction for both categories: a per-category prompt would tell the generator
    # which questions are unanswerable.
    instructions={},
    default_instruction="Answer with the shortest span of the context that answers the question.",
    rubric="scale",
    files_help=(
        "Get train-v2.0.json or dev-v2.0.json from https://rajpurkar.github.io/SQuAD-explorer/ "
        "and pass its folder (or the file) as --data-dir."
    ),
)


def _articles(path: Path) -> list[dict[str, Any]]:
    data = read_json(path, benchmark=SPEC.name)
    found = f"an object with keys {sorted(data)}" if isinstance(data, dict) else type(data).__name__
    expect(
        isinstance(data, dict) and isinstance(data.get("data"), list),
        f"squad: {path} should be the official SQuAD JSON ({{'version', 'data': [...]}}); "
        f"found {found}",
    )
    for i, article in enumerate(data["data"]):
        expect(
            isinstance(article, dict) and isinstance(article.get("paragraphs"), list),
            f"squad: {path} data[{i}] should be an article with paragraphs",
        )
        for j, paragraph in enumerate(article["paragraphs"]):
            where = f"squad: {path} data[{i}].paragraphs[{j}]"
            expect_lists(paragraph, ("qas",), where)
            for qa in paragraph.get("qas") or []:
                if isinstance(qa, dict):
                    expect_lists(qa, ("answers",), f"{where}, question {qa.get('id')}")
    return data["data"]  # type: ignore[no-any-return]


def paragraph_id(title: str, context: str) -> str:
    return f"{title}#{hashlib.sha256(context.encode('utf-8')).hexdigest()[:8]}"


def _references(qa: dict[str, Any]) -> tuple[str, ...]:
    if qa.get("is_impossible"):
        return ()
    refs: list[str] = []
    for answer in qa.get("answers") or []:
        text = str(answer.get("text") or "").strip() if isinstance(answer, dict) else ""
        if text and text not in refs:
            refs.append(text)
    return tuple(refs)


class SquadAdapter(BenchmarkAdapter):
    spec = SPEC

    def _split_file(self, source: Path, split: str) -> Path:
        return self.find(source, split, [f"{split}-v2.0.json"], [f"*{split}-v2.0*.json"])

    def load(self, source: Path, split: str, options: ReadOptions) -> LoadedBenchmark:
        path = self._split_file(source, split)
        documents: dict[str, BenchmarkDocument] = {}
        questions = []
        for article in _articles(path):
            title = str(article.get("title") or "untitled")
            for paragraph in article["paragraphs"]:
                context = str(paragraph.get("context") or "")
                doc_id = paragraph_id(title, context)
                documents.setdefault(
                    doc_id,
                    BenchmarkDocument(doc_id, f"# {title}\n\n{context}\n", title),
                )
                for qa in paragraph.get("qas") or []:
                    expect(
                        isinstance(qa, dict) and isinstance(qa.get("question"), str),
                        f"squad: a question in {title!r} of {path} has no question text",
                    )
                    refs = _references(qa)
                    questions.append(
                        BenchmarkQuestion(
                            id=str(qa.get("id")),
                            question=qa["question"],
                            references=refs or (MISSING_ANSWER,),
                            evidence=(context,) if refs else (),
                            category="answerable" if refs else "unanswerable",
                            doc_ids=(doc_id,),
                        )
                    )
        return self.loaded(split, documents.values(), questions, [path])

    def write_subset(self, source: Path, split: str, out_dir: Path, keep: Subset) -> list[Path]:
        path = self._split_file(source, split)
        version = read_json(path, benchmark=SPEC.name).get("version", "v2.0")
        articles = []
        for article in _articles(path):
            title = str(article.get("title") or "untitled")
            paragraphs = []
            for paragraph in article["paragraphs"]:
                context = str(paragraph.get("context") or "")
                if paragraph_id(title, context) not in keep.doc_ids:
                    continue
                qas = [
                    qa
                    for qa in paragraph.get("qas") or []
                    if str(qa.get("id")) in keep.question_ids
                ]
                paragraphs.append({**paragraph, "qas": qas})
            if paragraphs:
                articles.append({**article, "paragraphs": paragraphs})
        target = out_dir / f"{split}-v2.0.json"
        write_text_atomic(target, dump_json({"version": version, "data": articles}))
        return [target]
