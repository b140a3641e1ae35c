"""Qasper: information-seeking questions about NLP papers, answered by several annotators.

Raw file: qasper-<split>-v0.3.json (or v0.1/v0.2), an object `paper_id -> paper` with
`title`, `abstract`, `full_text` (sections with `section_name` and `paragraphs`),
optionally `figures_and_tables`, and `qas`: `question`, `question_id`, `answers` (one per
annotator: `answer` with `unanswerable`, `extractive_spans`, `free_form_answer`, `yes_no`,
`evidence`).

Rules (OpenViking's qasper_adapter.py, which they are checked against):
- split "all" reads every `*.json` of the folder but sampling_metadata.json, in name order,
  merged paper by paper (a paper in two files is the later file's, in the first one's
  place), as OpenViking's adapter reads a folder; a file given itself is read alone;
- the question is prefixed with the paper's title: `Based on the paper "<title>", `;
- one reference per annotator: unanswerable -> "Not mentioned"; else, when it has
  extractive spans, those spans joined with "; " (none when all are blank); else the
  free-form answer; else "Yes"/"No"; de-duplicated in order;
- evidence = the ordered union of the annotators' non-blank evidence;
- a question is skipped only when every annotator marked it unanswerable;
- category = the answer type of the first annotator who answered (extractive, free_form,
  yes_no), which picks the answer instruction; OpenViking writes no category ("None");
- the papers' full text (title, abstract, sections, figure and table captions) is the corpus.
"""

from __future__ import annotations

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
    name="qasper",
    title="Qasper",
    description=(
        "Questions NLP practitioners ask about research papers (title and abstract only), "
        "answered by experts from the full text, with the paragraphs that support each answer."
    ),
    licence="CC BY 4.0",
    citation=(
        "Dasigi, Lo, Beltagy, Cohan, Smith, Gardner. A Dataset of Information-Seeking "
        "Questions and Answers Anchored in Research Papers. NAACL 2021. arXiv:2105.03011"
    ),
    homepage="https://allenai.org/data/qasper",
    splits=("train", "dev", "test", "all"),
    default_split="dev",
    categories={
        "extractive": "answered by spans copied from the paper",
        "free_form": "answered in the annotator's own words",
        "yes_no": "a yes/no question",
    },
    instructions={
        "extractive": (
            "Copy the exact words of the paper that answer the question; do not rephrase or "
            "explain."
        ),
        "free_form": (
            "Answer in your own words from the facts in the paper, briefly and completely; "
            "invent nothing."
        ),
        "yes_no": 'Answer "Yes" or "No" from what the paper says, with no explanation.',
    },
    default_instruction="Answer the question from the paper above, inventing nothing.",
    rubric="scale",
    files_help=(
        "Get qasper-<split>-v0.3.json from https://allenai.org/data/qasper (the "
        "qasper-train-dev-v0.3 and qasper-test-and-evaluator-v0.3 archives) and pass its "
        "folder (or the file) as --data-dir; split all reads every *.json there."
    ),
)


def _papers(path: Path) -> dict[str, dict[str, Any]]:
    data = read_json(path, benchmark=SPEC.name)
    expect(
        isinstance(data, dict) and all(isinstance(p, dict) for p in data.values()),
        f"qasper: {path} should be an object mapping paper ids to papers, found "
        f"{type(data).__name__}; is it a Qasper qasper-<split>-v0.x.json file?",
    )
    for paper_id, paper in data.items():
        where = f"qasper: paper {paper_id} in {path}"
        expect_lists(paper, ("full_text", "qas", "figures_and_tables"), where)
        for section in paper.get("full_text") or []:
            if isinstance(section, dict):
                expect_lists(section, ("paragraphs",), f"{where}, a full_text section")
        for qa in paper.get("qas") or []:
            at = f"{where}, question {qa.get('question_id') if isinstance(qa, dict) else qa!r}"
            expect_lists(qa, ("answers",), at)
            for wrapper in qa.get("answers") or []:
                answer = wrapper.get("answer") if isinstance(wrapper, dict) else None
                if isinstance(answer, dict):
                    expect_lists(answer, ("extractive_spans", "evidence"), f"{at}, an answer")
    return data  # type: ignore[no-any-return]


def _merged(paths: list[Path]) -> dict[str, dict[str, Any]]:
    """The papers of every file, a later file's paper replacing an earlier one's (dict
    update order, as OpenViking merges a folder)."""
    papers: dict[str, dict[str, Any]] = {}
    for path in paths:
        papers.update(_papers(path))
    return papers


def paper_markdown(paper_id: str, paper: dict[str, Any]) -> str:
    lines = [f"# {paper.get('title') or paper_id}", f"Paper ID: {paper_id}", ""]
    abstract = str(paper.get("abstract") or "").strip()
    if abstract:
        lines += ["## Abstract", abstract, ""]
    for section in paper.get("full_text") or []:
        if not isinstance(section, dict):
            continue
        name = str(section.get("section_name") or "").strip()
        if name:
            lines.append(f"## {name}")
        for paragraph in section.get("paragraphs") or []:
            if isinstance(paragraph, str) and paragraph.strip():
                lines += [paragraph.strip(), ""]
    figures = [f for f in paper.get("figures_and_tables") or [] if isinstance(f, dict)]
    if figures:
        lines.append("## Figures and Tables")
        for figure in figures:
            caption = str(figure.get("caption") or "").strip()
            if caption:
                lines += [caption, ""]
    return "\n".join(lines).rstrip() + "\n"


def _answer_type(answer: dict[str, Any]) -> str | None:
    """The annotator's answer type, in OpenViking's order of tests."""
    if answer.get("unanswerable"):
        return "unanswerable"
    if answer.get("extractive_spans"):
        return "extractive"
    if str(answer.get("free_form_answer") or "").strip():
        return "free_form"
    if answer.get("yes_no") is not None:
        return "yes_no"
    return None


def _reference(answer: dict[str, Any], kind: str | None) -> str | None:
    """The annotator's reference; None for an answer with no text (all spans blank)."""
    if kind == "unanswerable":
        return MISSING_ANSWER
    if kind == "extractive":
        spans = answer.get("extractive_spans") or []
        return "; ".join(s.strip() for s in spans if isinstance(s, str) and s.strip()) or None
    if kind == "free_form":
        return str(answer["free_form_answer"]).strip()
    if kind == "yes_no":
        return "Yes" if answer["yes_no"] else "No"
    return None


def _annotations(qa: dict[str, Any]) -> list[dict[str, Any]]:
    answers = []
    for wrapper in qa.get("answers") or []:
        if isinstance(wrapper, dict) and isinstance(wrapper.get("answer"), dict):
            answers.append(wrapper["answer"])
    return answers


def _question(paper_id: str, paper: dict[str, Any], qa: dict[str, Any]) -> BenchmarkQuestion:
    references: list[str] = []
    evidence: list[str] = []
    category = ""
    for answer in _annotations(qa):
        kind = _answer_type(answer)
        reference = _reference(answer, kind)
        if reference and reference not in references:
            references.append(reference)
        if not category and reference and kind != "unanswerable":
            category = kind or ""
        for item in answer.get("evidence") or []:
            # kept as written (OpenViking's recall tests it as a substring), blanks dropped
            if isinstance(item, str) and item.strip() and item not in evidence:
                evidence.append(item)
    title = paper.get("title", "Unknown Title")
    return BenchmarkQuestion(
        id=str(qa.get("question_id") or ""),
        question=f'Based on the paper "{title}", {qa["question"]}',
        references=tuple(references) or (MISSING_ANSWER,),
        evidence=tuple(evidence),
        category=category or "free_form",
        doc_ids=(paper_id,),
        metadata={"openviking_category": "None"},  # str(None): its adapter sets none
    )


def _all_unanswerable(qa: dict[str, Any]) -> bool:
    return all(bool(answer.get("unanswerable")) for answer in _annotations(qa))


class QasperAdapter(BenchmarkAdapter):
    spec = SPEC

    def _split_files(self, source: Path, split: str) -> list[Path]:
        if split == "all" and source.is_dir():
            found = sorted(
                p
                for p in source.glob("*.json")
                if p.is_file() and p.name != "sampling_metadata.json"
            )
            if found:
                return found
        return [self._split_file(source, split)]

    def _split_file(self, source: Path, split: str) -> Path:
        return self.find(
            source,
            split,
            [f"qasper-{split}-v0.3.json"],
            [f"qasper-{split}-v0.*.json", f"*qasper-{split}-v0.*.json"],
        )

    def load(self, source: Path, split: str, options: ReadOptions) -> LoadedBenchmark:
        paths = self._split_files(source, split)
        documents = []
        questions = []
        skipped = 0
        for paper_id, paper in _merged(paths).items():
            documents.append(
                BenchmarkDocument(
                    id=paper_id,
                    title=str(paper.get("title") or paper_id),
                    text=paper_markdown(paper_id, paper),
                )
            )
            for position, qa in enumerate(paper.get("qas") or []):
                expect(
                    isinstance(qa, dict)
                    and isinstance(qa.get("question"), str)
                    and bool(qa.get("question_id")),
                    f"qasper: paper {paper_id} qas item {position} needs question and question_id",
                )
                if _all_unanswerable(qa):
                    skipped += 1
                    continue
                questions.append(_question(paper_id, paper, qa))
        return self.loaded(
            split,
            documents,
            questions,
            paths,
            skipped={"every annotator: unanswerable": skipped},
        )

    def write_subset(self, source: Path, split: str, out_dir: Path, keep: Subset) -> list[Path]:
        kept = {
            paper_id: {
                **paper,
                "qas": [
                    qa
                    for qa in paper.get("qas") or []
                    if qa.get("question_id") in keep.question_ids
                ],
            }
            for paper_id, paper in _merged(self._split_files(source, split)).items()
            if paper_id in keep.doc_ids
        }
        target = out_dir / f"qasper-{split}-v0.3.json"
        write_text_atomic(target, dump_json(kept))
        return [target]
