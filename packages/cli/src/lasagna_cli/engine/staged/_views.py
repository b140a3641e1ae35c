"""OpenViking's per-question files, as views over the engine's task records.

Each figure OpenViking writes is under its key with its definition (lasagna_metrics'
openviking_* functions); lasagna's own figure, where it differs, sits beside it under a key
of its own:
- `generated_item`: one result of generated_answers.json: the question, its gold answers
  and category as the adapter wrote them (lasagna's category beside where it differs), its
  evidence, the retrieval (latency, the retrieved passage ids and scores, the
  query), the generated answer, evidence recall ("Recall": OpenViking's, any retrieved
  text, a plain substring test, 0.0 with no evidence; "Recall (lasagna)": counted in the
  question's own documents with word boundaries, None with no evidence) and cl100k_base
  token counts (offline) of the prompt plus the question, as run.py counts its input, and
  of the answer.
- `evaluated_item`: one result of qa_eval_detailed_results.json: the generated item with
  "F1" (OpenViking's normalisation, the best over the references), "Accuracy" (an int
  0-4, 0 when no grade could be had, as OpenViking writes it), their honest twins "F1
  (SQuAD)" (the engine's one rule) and "Accuracy (lasagna)" (None when not graded, its
  reason in llm_evaluation's "status"), and "Heuristic_Refusal_Check" when the answer and
  a reference both refuse. OpenViking's rule sets "Accuracy" to 4, as run.py does; where
  only lasagna's fires, "Accuracy (lasagna)" is the top score with no call and "Accuracy"
  the judge's grade, asked for it (`judge_openviking`), as run.py would have asked. On a
  rubric that is not 0-4, "Accuracy" is the grade's place on OpenViking's 0-4.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lasagna_cli.engine._data import Corpus, Question
from lasagna_cli.engine.benchmarks import BenchmarkDocument, BenchmarkQuestion
from lasagna_cli.engine.config._config import PromptSpec
from lasagna_cli.engine.plan._prompts import build_messages
from lasagna_cli.engine.records._store import Record
from lasagna_cli.engine.run._scoring import NO_ANSWER, gradable
from lasagna_cli.engine.run._tasks import query_text

REFUSAL_HEURISTIC = "Heuristic_Refusal_Check"
#: OpenViking's names of its two judge prompts, lasagna's built-in rubrics of the same rules.
PROMPT_NAMES = {"binary": "Locomo_0or4", "scale": "Generic_0-4"}


def write_documents(documents: Sequence[BenchmarkDocument], folder: Path) -> int:
    """The processed documents as Markdown files, `<id>_doc.md` (OpenViking's docs/);
    returns how many."""
    from lasagna_cli.engine.records._store import slug, write_bytes_atomic

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


def gold_answers(question: Question, source: BenchmarkQuestion | None) -> list[str]:
    """The adapter's references as written ("Not mentioned" among them, as OpenViking keeps
    it), else the engine's."""
    if source is not None:
        return list(source.references)
    return list(question.references) or ([NO_ANSWER] if question.unanswerable else [])


def categories(question: Question, source: BenchmarkQuestion | None) -> dict[str, str]:
    """The "category" OpenViking writes (str of its adapter's category: "None" for
    Qasper); lasagna's beside it where that differs."""
    ours = str(question.category)
    theirs = str(source.metadata.get("openviking_category", ours)) if source else ours
    return {"category": theirs} | ({"category (lasagna)": ours} if theirs != ours else {})


def generated_item(
    index: int,
    question: Question,
    record: Record,
    corpus: Corpus,
    prompt: PromptSpec,
    top_k: int,
    query_prefix: str,
    source: BenchmarkQuestion | None = None,
) -> dict[str, Any]:
    """`source` is the adapter's question (its references and category as written)."""
    from lasagna_metrics import openviking_recall

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
    # the evidence as OpenViking's adapter keeps it (LoCoMo: its raw items, unrepaired)
    evidence = list(question.evidence)
    if source is not None:
        evidence = list(source.metadata.get("openviking_evidence", source.evidence))
    return {
        "_global_index": index,
        "sample_id": question.documents[0] if question.documents else "",
        "question_id": question.id,
        "question": question.text,
        "gold_answers": gold_answers(question, source),
        **categories(question, source),
        "evidence": evidence,
        "retrieval": {
            "latency_sec": retrieval.get("seconds") or 0.0,
            "uris": [doc for doc, _ in top],
            "scores": [round(score, 6) for _, score in top],
            "query": query_text(query_prefix, question),
        },
        "llm": llm,
        "metrics": {
            "Recall": openviking_recall(texts, evidence),
            "Recall (lasagna)": metrics.get("evidence_recall"),
            # Over documents whose evidence is given as spans (chroma-chunking).
            **{label: metrics[name] for name, label in SPAN_LABELS.items() if name in metrics},
        },
        "token_usage": {
            # run.py counts the prompt and then the question again
            "total_input_tokens": _tokens(messages[-1]["content"]) + _tokens(question.text),
            "llm_output_tokens": _tokens(prediction or ""),
            "retrieval_embedding_tokens": 0,  # BM25: no embedding model
        },
    }


#: The span metrics of a benchmark whose evidence is given as spans, as items show them.
SPAN_LABELS = {
    "span_recall": "Span Recall (lasagna)",
    "span_precision": "Span Precision (lasagna)",
    "span_iou": "Span IoU (lasagna)",
}


def openviking_accuracy(score: float, scale: tuple[int, int]) -> int:
    """A grade on the rubric's scale as OpenViking's Accuracy, an int 0-4 (its judge's
    scale): the same place on the scale, rounded half up; 0-4 rubrics keep their score."""
    lowest, highest = scale
    if highest <= lowest:
        return 0
    place = (score - lowest) / (highest - lowest)
    return max(0, min(4, int(4 * place + 0.5)))


def evaluated_item(
    item: Mapping[str, Any], graded: Record, scale: tuple[int, int] = (0, 4)
) -> dict[str, Any]:
    from lasagna_metrics import openviking_f1, openviking_refusal

    answer = graded.get("generation") or {}
    grade = answer.get("judge")
    record = dict(item)
    metrics = dict(item.get("metrics") or {})
    prediction = str((item.get("llm") or {}).get("final_answer") or "")
    golds = [str(g) for g in item.get("gold_answers") or ()]
    f1 = max((openviking_f1(prediction, gold) for gold in golds), default=0.0)
    question = Question(
        id="",
        text=str(item.get("question", "")),
        references=tuple(answer.get("references") or ()),
        unanswerable=bool(answer.get("unanswerable")),
    )
    ours: float | None  # lasagna's accuracy: None when there is no grade
    evaluation: dict[str, Any]
    refused = openviking_refusal(prediction) and any(openviking_refusal(g) for g in golds)
    if not gradable(question):
        ours = None
        evaluation = {"prompt_used": "", "reasoning": "no reference answer to compare with",
                      "status": "no reference"}  # fmt: skip
    elif grade is None:
        ours = None
        evaluation = {"prompt_used": "", "reasoning": "", "status": "not judged"}
    elif grade.get("path") == "refusal-heuristic":  # lasagna's rule: no call made
        ours = float(scale[1])
        evaluation = {"prompt_used": REFUSAL_HEURISTIC, "status": "ok", "reasoning": (
            "System successfully identified Unanswerable/Refusal condition.")}  # fmt: skip
    else:
        ours = float(grade["score"]) if grade.get("score") is not None else None
        evaluation = {
            "prompt_used": PROMPT_NAMES.get(grade["rubric_id"], grade["rubric_id"]),
            "rubric": f"{grade['rubric_id']} v{grade['rubric_version']}",
            "reasoning": grade.get("reasoning", ""),
            "status": grade.get("status"),
            "path": grade.get("path"),
            "model": grade.get("model"),
            "prompt_sha256": grade.get("prompt_sha256"),
            "raw": grade.get("raw"),
            "error": grade.get("error"),
        }
    # OpenViking's: an int 0-4 whatever the rubric's scale, 0 when ungraded
    accuracy = openviking_accuracy(ours, scale) if ours is not None else 0
    theirs = answer.get("judge_openviking")  # asked where only lasagna's refusal rule fired
    if isinstance(theirs, dict):
        score = theirs.get("score")
        accuracy = openviking_accuracy(score, scale) if score is not None else 0
        evaluation.update(
            prompt_used=PROMPT_NAMES.get(theirs["rubric_id"], theirs["rubric_id"]),
            reasoning=theirs.get("reasoning", ""),
            lasagna_prompt_used=REFUSAL_HEURISTIC,  # Accuracy (lasagna): no call
        )
    if refused:  # OpenViking's override: a refusal where a reference refuses is right
        f1, accuracy = 1.0, 4
        evaluation.update(prompt_used=REFUSAL_HEURISTIC, reasoning=(
            "System successfully identified Unanswerable/Refusal condition."))  # fmt: skip
    metrics.update({"F1": f1, "Accuracy": accuracy, "F1 (SQuAD)": answer.get("f1"),
                    "Accuracy (lasagna)": ours})  # fmt: skip
    evaluation["normalized_score"] = accuracy
    evaluation.setdefault("reasoning", "")
    record["metrics"] = metrics
    record["llm_evaluation"] = evaluation
    return record
