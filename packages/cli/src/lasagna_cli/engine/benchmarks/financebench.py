"""FinanceBench: questions about public companies' filings (10-K, 10-Q, 8-K, earnings).

Raw files: financebench_open_source.jsonl (one question per line: `financebench_id`,
`question`, `answer`, `question_type`, `doc_name`, `evidence` items with `evidence_text`,
`evidence_page_num` (zero-based) and `evidence_text_full_page`), optionally
financebench_document_information.jsonl, and the filings as pdfs/<doc_name>.pdf.

Rules:
- questions are grouped by document (`doc_name`);
- reference = [answer]; evidence = the non-empty evidence_text items;
  category = question_type;
- the corpus is the filings whose PDF is in pdfs/ (beside the JSONL or its parent folder),
  read through lasagna-synth's loader; a filing without its PDF is not searched, as in
  OpenViking's adapter (its questions are still asked). The evidence pages' full text is
  never made into a document: it would put each question's answer in the corpus by
  construction. The notes count both (with no PDF, nothing is searched).
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
from pathlib import Path
from typing import Any

from lasagna_cli.engine.benchmarks._base import BenchmarkAdapter
from lasagna_cli.engine.benchmarks._files import expect, expect_lists, read_jsonl, write_text_atomic
from lasagna_cli.engine.benchmarks._model import (
    MISSING_ANSWER,
    BenchmarkDocument,
    BenchmarkQuestion,
    BenchmarkSpec,
    LoadedBenchmark,
    ReadOptions,
    Subset,
)
from lasagna_synth import pdf_reader_identity

QUESTIONS_FILE = "financebench_open_source.jsonl"
DOCUMENTS_FILE = "financebench_document_information.jsonl"

SPEC = BenchmarkSpec(
    name="financebench",
    title="FinanceBench",
    description=(
        "Open-book financial questions about US public companies' SEC filings and earnings "
        "reports, with the evidence pages an analyst used; the open-source sample of 150."
    ),
    licence="CC BY-NC 4.0 (non-commercial)",
    citation=(
        "Islam, Kannappan, Kiela, Qian, Scherrer, Vidgen. FinanceBench: A New Benchmark for "
        "Financial Question Answering. arXiv:2311.11944, 2023"
    ),
    homepage="https://github.com/patronus-ai/financebench",
    splits=("open_source",),
    default_split="open_source",
    categories={
        "domain-relevant": "questions an analyst asks of any filing",
        "metrics-generated": "a financial metric read or computed from the statements",
        "novel-generated": "questions written for one specific filing",
    },
    instructions={
        "domain-relevant": (
            "Answer from the filing's facts only, briefly and directly; give units with "
            "numbers (USD millions, %); invent nothing."
        ),
        "metrics-generated": (
            "Compute the metric from the numbers in the filing only: show the calculation in "
            "one line, round sensibly and give units (USD millions, %); invent no numbers."
        ),
        "novel-generated": (
            "Answer from the filing's facts only, clearly and completely; give units with "
            "numbers (USD millions, %); invent nothing."
        ),
    },
    default_instruction="Answer the question from the filing above, inventing nothing.",
    rubric="scale",
    files_help=(
        f"Get data/{QUESTIONS_FILE} (and pdfs/ for the filings) from "
        "https://github.com/patronus-ai/financebench and pass the folder holding the JSONL "
        "as --data-dir."
    ),
)


def _pdf_dirs(questions_file: Path) -> list[Path]:
    base = questions_file.parent
    return [base / "pdfs", base.parent / "pdfs"]


def _pdf_for(questions_file: Path, doc_name: str) -> Path | None:
    for folder in _pdf_dirs(questions_file):
        path = folder / f"{doc_name}.pdf"
        if path.is_file():
            return path
    return None


def _rows(path: Path) -> list[tuple[int, str, dict[str, Any]]]:
    rows = read_jsonl(path, benchmark=SPEC.name)
    for number, _, row in rows:
        expect(
            isinstance(row, dict)
            and isinstance(row.get("question"), str)
            and isinstance(row.get("doc_name"), str)
            and row.get("financebench_id") not in (None, ""),
            f"financebench: {path} line {number} needs financebench_id, question and doc_name",
        )
        expect_lists(row, ("evidence",), f"financebench: {path} line {number}")
    return rows


def _evidence_items(row: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in row.get("evidence") or [] if isinstance(e, dict)]


def _read_pdf(path: Path) -> tuple[str | None, str]:
    """The PDF's text through lasagna-synth's loader, or None and the reason."""
    from lasagna_synth import load_corpus

    corpus = load_corpus(path)
    if corpus.documents:
        return corpus.documents[0].text, ""
    reason = corpus.skipped[0].reason if corpus.skipped else "no text"
    return None, reason


def _pdf_text(path: Path, options: ReadOptions) -> tuple[str | None, str, bool]:
    """(the text or None, why None, whether it came from the text cache); "" without text.

    Extracting a 10-K's text takes long, so with a text cache each PDF's text
    is kept under the sha256 of its bytes and of the reader. An unreadable PDF is not
    cached (it is tried again), and a cache that cannot be written only costs the time."""
    if not options.with_text:
        return "", "", False
    cache = options.text_cache
    if cache is None:
        return (*_read_pdf(path), False)
    digest = hashlib.sha256(pdf_reader_identity())
    with path.open("rb") as handle:
        digest.update(hashlib.file_digest(handle, "sha256").digest())
    cached = cache / f"{digest.hexdigest()}.txt"
    try:
        return cached.read_bytes().decode("utf-8"), "", True
    except (OSError, UnicodeDecodeError):
        pass
    text, reason = _read_pdf(path)
    if text is not None:
        with contextlib.suppress(OSError):
            write_text_atomic(cached, text)
    return text, reason, False


class FinanceBenchAdapter(BenchmarkAdapter):
    spec = SPEC

    def _questions_file(self, source: Path, split: str) -> Path:
        return self.find(source, split, [QUESTIONS_FILE, f"data/{QUESTIONS_FILE}"])

    def load(self, source: Path, split: str, options: ReadOptions) -> LoadedBenchmark:
        path = self._questions_file(source, split)
        rows = _rows(path)
        order: list[str] = []
        questions = []
        for _, _, row in rows:
            doc_name = row["doc_name"]
            if doc_name not in order:
                order.append(doc_name)
            evidence = []
            for item in _evidence_items(row):
                text = item.get("evidence_text")
                if isinstance(text, str) and text.strip() and text not in evidence:
                    evidence.append(text)
            answer = str(row.get("answer") or "").strip()
            questions.append(
                BenchmarkQuestion(
                    id=str(row["financebench_id"]),
                    question=row["question"],
                    references=(answer or MISSING_ANSWER,),
                    evidence=tuple(evidence),
                    category=str(row.get("question_type") or "unknown"),
                    doc_ids=(doc_name,),
                    metadata={"company": row.get("company"), "doc_name": doc_name},
                )
            )
        # Questions grouped by document, each group in file order.
        questions.sort(key=lambda q: order.index(q.doc_ids[0]))
        files = [path]
        documents = []
        from_pdf: list[str] = []
        from_cache = 0
        without_text: list[str] = []
        pdfs = {d: p for d in order if (p := _pdf_for(path, d)) is not None}
        stage = f"extracting the text of {len(pdfs):,} PDF filing(s)"
        if pdfs:
            options.on_step(stage, 0, len(pdfs))
        for doc_name in order:
            pdf = pdfs.get(doc_name)
            if pdf is not None:
                pdf_text, reason, cached = _pdf_text(pdf, options)
                from_cache += cached
                options.on_step(stage, len(from_pdf) + len(without_text) + 1, len(pdfs))
                if pdf_text is None:
                    without_text.append(f"{pdf.name} ({reason})")
                else:
                    files.append(pdf)
                    from_pdf.append(doc_name)
                    documents.append(
                        BenchmarkDocument(
                            doc_name, pdf_text, doc_name, {"source": "pdf", "file": pdf.name}
                        )
                    )
        asked = {q.doc_ids[0] for q in questions}
        missing = [d for d in order if d not in pdfs and d in asked]
        notes = [
            f"corpus: filings from PDFs: {len(from_pdf)}; without a PDF in pdfs/, not searched "
            f"(as OpenViking's adapter): {len(missing)}"
        ]
        if from_cache:
            notes.append(f"PDF texts read from the text cache: {from_cache}")
        if without_text:
            notes.append("unreadable PDFs, not searched: " + ", ".join(without_text))
        return self.loaded(split, documents, questions, files, notes=notes)

    def write_subset(self, source: Path, split: str, out_dir: Path, keep: Subset) -> list[Path]:
        path = self._questions_file(source, split)
        kept = [
            (raw, row)
            for _, raw, row in _rows(path)
            if row["doc_name"] in keep.doc_ids and str(row["financebench_id"]) in keep.question_ids
        ]
        target = out_dir / QUESTIONS_FILE
        write_text_atomic(target, "".join(raw + "\n" for raw, _ in kept))
        written = [target]
        kept_docs = {row["doc_name"] for _, row in kept}
        info = path.parent / DOCUMENTS_FILE
        if info.is_file():
            info_lines = [
                raw
                for _, raw, row in read_jsonl(info, benchmark=SPEC.name)
                if isinstance(row, dict) and row.get("doc_name") in kept_docs
            ]
            write_text_atomic(out_dir / DOCUMENTS_FILE, "".join(x + "\n" for x in info_lines))
            written.append(out_dir / DOCUMENTS_FILE)
        for doc_name in sorted(kept_docs):
            pdf = _pdf_for(path, doc_name)
            if pdf is not None:
                copy = out_dir / "pdfs" / pdf.name
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(pdf, copy)
                written.append(copy)
        return written
