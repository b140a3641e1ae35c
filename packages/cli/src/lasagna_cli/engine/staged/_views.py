"""OpenViking's per-question files, as views over the engine's task records.

- `generated_item`: one result of generated_answers.json: the question, its gold answers,
  category and evidence, the retrieval (latency, the retrieved passage ids and scores, the
  query), the generated answer, evidence recall ("Recall": counted in the question's own
  documents, as everywhere in lasagna; "Recall (any document)": OpenViking's figure, any
  retrieved text) and cl100k_base token counts of the prompt and the answer (offline).
- `evaluated_item`: one result of qa_eval_detailed_results.json: the generated item with
  F1 (the engine's one scoring rule), the judge's accuracy (0-4) and its reasoning, or
  "Heuristic_Refusal_Check" when the answer and the reference both refuse (no call made).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lasagna_cli.engine._config import PromptSpec
from lasagna_cli.engine._data import Corpus, Question
from lasagna_cli.engine._prompts import build_messages
from lasagna_cli.engine._scoring import NO_ANSWER, gradable
from lasagna_cli.engine._store import Record
from lasagna_cli.engine._tasks import query_text
from lasagna_cli.engine.benchmarks import BenchmarkDocument

REFUSAL_HEURISTIC = "Heuristic_Refusal_Check"
#: OpenViking's names of its two judge prompts, lasagna's built-in rubrics of the same rules.
PROMPT_NAMES = {"binary": "Locomo_0or4", "scale": "Generic_0-4"}


def write_documents(documents: Sequence[BenchmarkDocument], folder: Path) -> int:
    """The processed documents as Markdown files, `<id>_doc.md` (OpenViking's docs/);
    returns how many."""
    from lasagna_cli.engine._store import slug, write_bytes_atomic

    folder.mkdir(parents=True, exist_ok=True)
    for document in documents:
        titled = document.title and not document.text.lstrip().startswith("#")
        heading = f"# {document.title}\n\n" if titled else ""
        text = heading + document.text.rstrip("\n") + "\n"
        write_bytes_atomic(folder / f"{slug(document.id)}_doc.md", text.encode("utf-8"))
    return len(documents)


def _tokens(text: str) -> int:
    from lasagna_synth import count_tokens

    return int(count_tokens([text])) if text else 0


def gold_answers(question: Question) -> list[str]:
    return list(question.references) or ([NO_ANSWER] if question.unanswerable else [])


def generated_item(
    index: int,
    question: Question,
    record: Record,
    corpus: Corpus,
    prompt: PromptSpec,
    top_k: int,
    query_prefix: str,
) -> dict[str, Any]:
    from lasagna_metrics import evidence_recall

    retrieval = record["retrieval"]
    top = retrieval["ranking"][:top_k]
    texts = [corpus.texts[doc] for doc, _ in top]
    metrics = retrieval.get("metrics") or {}
    answer = record.get("generation")
    prediction = answer["prediction"] if answer else None
    llm: dict[str, Any] = {"final_answer": prediction}
    if answer:
        llm.update(
            model=answer["model"],
            latency_sec=answer["latency_s"],
            cached=answer["cached"],
            usage={
                "input_tokens": answer["input_tokens"],
                "output_tokens": answer["output_tokens"],
            },
        )
    messages = build_messages(prompt, question, texts)
    return {
        "_global_index": index,
        "sample_id": question.documents[0] if question.documents else "",
        "question_id": question.id,
        "question": question.text,
        "gold_answers": gold_answers(question),
        "category": question.category,
        "evidence": list(question.evidence),
        "retrieval": {
            "latency_sec": retrieval.get("seconds") or 0.0,
            "uris": [doc for doc, _ in top],
            "scores": [round(score, 6) for _, score in top],
            "query": query_text(query_prefix, question),
        },
        "llm": llm,
        "metrics": {
            "Recall": metrics.get("evidence_recall"),
            "Recall (any document)": evidence_recall(texts, question.evidence)
            if question.evidence
            else None,
        },
        "token_usage": {
            "total_input_tokens": _tokens(messages[-1]["content"]),
            "llm_output_tokens": _tokens(prediction or ""),
            "retrieval_embedding_tokens": 0,  # BM25: no embedding model
        },
    }


def evaluated_item(item: Mapping[str, Any], graded: Record, highest: int) -> dict[str, Any]:
    answer = graded.get("generation") or {}
    grade = answer.get("judge")
    record = dict(item)
    metrics = dict(item.get("metrics") or {})
    question = Question(
        id="",
        text=str(item.get("question", "")),
        references=tuple(answer.get("references") or ()),
        unanswerable=bool(answer.get("unanswerable")),
    )
    evaluation: dict[str, Any]
    if not gradable(question):
        metrics.update({"F1": None, "Accuracy": None})
        evaluation = {"prompt_used": None, "reasoning": "no reference answer to compare with",
                      "normalized_score": None, "status": "no reference"}  # fmt: skip
    elif grade is None:
        metrics.update({"F1": answer.get("f1"), "Accuracy": None})
        evaluation = {"prompt_used": None, "reasoning": "", "normalized_score": None,
                      "status": "not judged"}  # fmt: skip
    elif grade.get("path") == "refusal-heuristic":
        metrics.update({"F1": answer.get("f1"), "Accuracy": float(highest)})
        evaluation = {
            "prompt_used": REFUSAL_HEURISTIC,
            "reasoning": "System successfully identified Unanswerable/Refusal condition.",
            "normalized_score": float(highest),
            "status": "ok",
        }
    else:
        score = float(grade["score"]) if grade.get("score") is not None else None
        metrics.update({"F1": answer.get("f1"), "Accuracy": score})
        evaluation = {
            "prompt_used": PROMPT_NAMES.get(grade["rubric_id"], grade["rubric_id"]),
            "rubric": f"{grade['rubric_id']} v{grade['rubric_version']}",
            "reasoning": grade.get("reasoning", ""),
            "normalized_score": score,
            "status": grade.get("status"),
            "path": grade.get("path"),
            "model": grade.get("model"),
            "prompt_sha256": grade.get("prompt_sha256"),
            "raw": grade.get("raw"),
            "error": grade.get("error"),
        }
    record["metrics"] = metrics
    record["llm_evaluation"] = evaluation
    return record
