"""results.json: every metric's mean, 95% bootstrap interval and counts, per setup and
benchmark, with the per-query rankings so anyone can recompute the metrics. A view over the
task records.

Results are grouped by a comparability key: the sha256 of the fields held fixed (metrics
version, dataset name and revision, split, sample ids, corpus provenance, retriever
settings, judge model). Two results with the same key measured the same questions the same
way, so their numbers may be compared; a pooled-gold corpus never shares a key with a real
one. Retriever settings that the run's own setups vary (say top_k 3 vs 10) are what is being
compared, so they are left out of the key and listed under `varied` instead.

The file holds no timings and no cache flags: the same inputs, seed, models and cache give
a byte-identical results.json.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from lasagna_cli.engine.plan._plan import PlannedDataset, PlannedSetup, Task, metrics_version
from lasagna_cli.engine.plan._prompts import prompt_sha256
from lasagna_cli.engine.records._records import ANSWER_SECTIONS
from lasagna_cli.engine.records._store import Record
from lasagna_cli.engine.reports._diagnosis import diagnosed, diagnostics_metrics, query_diagnostics
from lasagna_cli.engine.reports._jury_scores import jury_metrics, jury_scores
from lasagna_cli.engine.retrieval._bm25 import Analyzer

RESULTS_FORMAT = "lasagna-results/1"
CONFIDENCE = 0.95
RESAMPLES = 1000


def retriever_settings(planned: PlannedSetup) -> dict[str, Any] | None:
    """Everything that decides a setup's rankings, or None when it retrieves nothing."""
    if planned.setup.system is not None:
        # The user's system ranks for itself: only the depth of recall@k and hit@k is ours.
        if "retrieval" not in planned.tracks:
            return None
        return {"method": "system", "top_k": planned.setup.top_k}
    spec = planned.setup.retriever
    if not planned.needs_retrieval or spec is None:
        return None
    settings: dict[str, Any] = {
        "method": spec.kind,
        "top_k": spec.top_k,
        "ranking_depth": spec.depth,
    }
    if spec.uses_bm25:
        analyzer = Analyzer(stemmer=spec.stemmer, stopwords=spec.stopwords)  # type: ignore[arg-type]
        settings.update(variant=spec.variant, k1=spec.k1, b=spec.b, **analyzer.describe())
    if spec.uses_vectors:  # the embedder and where its vectors are searched
        settings.update(
            embedder=spec.embedder,
            embedder_endpoint=spec.embedder_endpoint,
            dimensions=spec.dimensions,
            vector_store=spec.store or "in-process",
            collection=spec.collection,
        )
    if spec.kind == "hybrid":
        settings.update(fusion="reciprocal rank", rrf_k=spec.rrf_k, weights=list(spec.weights))
    if planned.chunked:  # how the folder of documents was cut: a setting a sweep compares
        settings.update(planned.setup.chunking.describe())
    return settings


def varied_retriever_fields(setups: Sequence[PlannedSetup]) -> list[str]:
    """The retriever settings that differ between the setups run on one benchmark."""
    settings = [retriever_settings(p) for p in setups]
    if len(settings) < 2:
        return []
    if any(s is None for s in settings):
        return ["retriever"] if any(s is not None for s in settings) else []
    if len({s["method"] for s in settings if s}) > 1:  # BM25 against a user's own system
        return ["retriever"]
    keys = sorted({k for s in settings if s for k in s})
    return [k for k in keys if len({json.dumps(s.get(k)) for s in settings if s}) > 1]


def held_fixed(
    bench: PlannedDataset,
    planned: PlannedSetup,
    varied: Sequence[str],
    judge: Mapping[str, Any] | None,
) -> dict[str, Any]:
    retriever = retriever_settings(planned)
    if "retriever" in varied:
        retriever = None
    elif retriever is not None:
        retriever = {k: v for k, v in retriever.items() if k not in varied}
    fixed: dict[str, Any] = {
        "metrics_version": metrics_version(),
        "dataset": bench.name,
        "revision": bench.dataset.revision,
        "split": bench.split,
        "sample_ids_sha256": bench.sample_ids_sha256,
        "corpus_provenance": bench.dataset.corpus_provenance,
        "retriever": retriever,
        "judge": dict(judge) if judge else None,
    }
    corpus = bench.dataset.corpus
    documents = bench.dataset.documents
    if documents is not None:  # the folder's documents (each setup's chunking is its own)
        fixed["corpus"] = {"documents": len(documents.texts), "sha256": documents.digest}
    elif corpus is not None and corpus.rule:  # how a benchmark's corpus was made
        fixed["corpus"] = corpus.rule
    return fixed


def comparability_key(fields: Mapping[str, Any]) -> str:
    blob = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


def summary(values: Sequence[float | None], seed: int) -> dict[str, Any]:
    return summaries({"values": values}, seed)["values"]


def summaries(
    columns: Mapping[str, Sequence[float | None]], seed: int
) -> dict[str, dict[str, Any]]:
    """`summary` of each column, in one pass (`lasagna_metrics.summarize_many`'s figures)."""
    from lasagna_cli.engine.reports._intervals import summarize_many

    found = summarize_many(columns, confidence=CONFIDENCE, resamples=RESAMPLES, seed=seed)
    return {
        name: {
            "mean": one.mean,
            "ci95_low": one.low,
            "ci95_high": one.high,
            "count": one.count,
            "missing": one.missing,
        }
        for name, one in found.items()
    }


def generation_metrics(sections: Sequence[Mapping[str, Any]], seed: int) -> dict[str, Any]:
    answerable = [r for r in sections if not r["unanswerable"]]
    unanswerable = [r for r in sections if r["unanswerable"]]
    metrics: dict[str, Any] = {
        "exact_match": summary([r["exact_match"] for r in sections], seed),
        "f1": summary([r["f1"] for r in sections], seed),
    }
    if unanswerable:
        metrics["has_answer_exact_match"] = summary([r["exact_match"] for r in answerable], seed)
        metrics["has_answer_f1"] = summary([r["f1"] for r in answerable], seed)
        metrics["no_answer_accuracy"] = summary(
            [1.0 if r["refused"] else 0.0 for r in unanswerable], seed
        )
    if answerable:
        metrics["false_refusal_rate"] = summary(
            [1.0 if r["refused"] else 0.0 for r in answerable], seed
        )
    grades = [r["judge"] for r in sections if r.get("judge") is not None]
    if grades:
        # Unparsed and failed grades are missing values, counted, never averaged as 0.
        metrics["judge_score"] = summary(
            [g["score"] if g["status"] == "ok" else None for g in grades], seed
        )
        metrics["judge_status"] = {
            status: sum(1 for g in grades if g["status"] == status)
            for status in ("ok", "unparsed", "error")
        }
        metrics.update(jury_metrics(grades, seed, summary))
    return metrics


def usage_of(records: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    usage = {"input_tokens": 0, "output_tokens": 0}
    for record in records:
        for track in ANSWER_SECTIONS:
            section = record.get(track)
            if section:
                usage["input_tokens"] += section["input_tokens"]
                usage["output_tokens"] += section["output_tokens"]
                if section.get("judge"):
                    usage.setdefault("judge_input_tokens", 0)
                    usage.setdefault("judge_output_tokens", 0)
                    usage["judge_input_tokens"] += section["judge"]["input_tokens"]
                    usage["judge_output_tokens"] += section["judge"]["output_tokens"]
                found = diagnosed(section)
                if found is not None:  # the claim calls, apart from the grade's
                    for way in ("input", "output"):
                        key = f"diagnostics_{way}_tokens"
                        usage[key] = usage.get(key, 0) + int(found.get(f"{way}_tokens") or 0)
    return usage


def summarize_result(
    bench: PlannedDataset,
    planned: PlannedSetup,
    tasks: Sequence[tuple[Task, Record | None]],
    *,
    varied: Sequence[str],
    judge: Mapping[str, Any] | None,
    seed: int,
    prices: Mapping[str, tuple[float, float]] | None = None,
) -> dict[str, Any]:
    """One (benchmark, setup): its metrics, counts and per-query records; with `prices`,
    what its model calls cost (`_costs`)."""
    fixed = held_fixed(bench, planned, varied, judge)
    finished = [r for _, r in tasks]
    # A question a predictions file leaves out (--allow-missing) is counted, never scored.
    missing = sum(1 for r in finished if r is not None and r.get("missing") is not None)
    ok = [r for r in finished if r is not None and r.get("error") is None and not r.get("missing")]
    failed = sum(1 for r in finished if r is not None and r.get("error") is not None)
    metrics: dict[str, Any] = {}
    if "retrieval" in planned.tracks:
        per_metric: dict[str, list[float | None]] = {}
        for record in ok:
            for name, value in (record["retrieval"]["metrics"] or {}).items():
                per_metric.setdefault(name, []).append(value)
        metrics["retrieval"] = summaries(dict(sorted(per_metric.items())), seed)
    for track in ANSWER_SECTIONS:
        if track in planned.tracks:
            metrics[track] = generation_metrics([r[track] for r in ok], seed)
    diagnosis = diagnostics_metrics([r.get("generation") or {} for r in ok], seed, summaries)
    if diagnosis is not None:
        metrics["diagnostics"] = diagnosis
    counts = {
        "questions": len(tasks),
        "scored": len(ok),
        "failed": failed,
        "not_run": len(tasks) - len(ok) - failed - missing,
    }
    setup: dict[str, Any] = {
        "name": planned.setup.name,
        "tracks": list(planned.tracks),
        "generation_mode": planned.generation_mode,
        "generator": planned.setup.generator.name if planned.setup.generator else None,
        "retriever": retriever_settings(planned),
    }
    if planned.setup.generator is not None and planned.setup.generator.endpoint is not None:
        setup["generator_endpoint"] = planned.setup.generator.endpoint
    if planned.setup.generator is not None:  # which prompt: a setting setups may compare
        setup["prompt_sha256"] = prompt_sha256(planned.setup.prompt)
    indexes = [r["retrieval"]["index"] for r in ok if (r.get("retrieval") or {}).get("index")]
    if indexes:  # a dense index: its dimension and kind, as its records say
        setup["retrieval_index"] = indexes[0]
    if planned.setup.system is not None:
        counts["missing"] = missing
        setup["system"] = dict(planned.system or planned.setup.system.describe())
    dataset = bench.dataset
    if dataset.described is not None and "retrieval" in planned.tracks:
        # Neither judged nor with evidence: not in the retrieval metrics, never scored 0.
        counts["without_evidence"] = sum(
            1 for r in ok if r.get("retrieval", {}).get("metrics") is None
        )
    described: dict[str, Any] = {
        "name": bench.name,
        "revision": dataset.revision,
        "kind": dataset.kind,
        "split": bench.split,
        "corpus_provenance": dataset.corpus_provenance,
        "documents": len(dataset.corpus) if dataset.corpus is not None else 0,
        "n_samples": bench.entry.n_samples,
        "filters": {k: list(v) for k, v in bench.entry.filters.items()},
        "sample_ids_sha256": bench.sample_ids_sha256,
        "notes": list(dataset.notes),
    }
    if dataset.described is not None:
        described["benchmark"] = dict(dataset.described)
    if dataset.documents is not None:
        described["corpus"] = dataset.documents.describe()
        if "retrieval" in planned.tracks:
            corpus = dataset.corpus_for(planned.setup.chunking)
            described["documents"] = len(corpus) if corpus is not None else 0
    usage: dict[str, Any] = usage_of(ok)
    if prices is not None:
        from lasagna_cli.engine.reports._costs import records_cost

        usage.update(records_cost(ok, prices))
    return {
        "dataset": described,
        "setup": setup,
        "comparability_key": comparability_key(fixed),
        "held_fixed": fixed,
        "varied": list(varied),
        "counts": counts,
        "metrics": metrics,
        "usage": usage,
        "per_query": [per_query(task, record, bench) for task, record in tasks],
    }


def per_query(
    task: Task, record: Mapping[str, Any] | None, bench: PlannedDataset
) -> dict[str, Any]:
    entry: dict[str, Any] = {"id": task.item}
    if record is None:
        entry["status"] = "not run"
        return entry
    if record.get("error") is not None:
        entry["status"] = "failed"
        entry["error"] = record["error"]
        return entry
    if record.get("missing") is not None:
        entry["status"] = "missing"
        entry["missing"] = record["missing"]
        return entry
    entry["status"] = "scored"
    retrieval = record.get("retrieval")
    if retrieval is not None and "retrieval" in task.planned.tracks:
        entry["judgments"] = dict(task.question.judgments)
        entry["ranking"] = retrieval["ranking"]
        entry["metrics"] = retrieval["metrics"]
        if retrieval.get("unmatched"):
            entry["unmatched"] = retrieval["unmatched"]
        corpus = bench.dataset.corpus
        if corpus is not None and corpus.cut:
            # What recomputing evidence recall needs beyond the ranking (a passage id is
            # `<doc>#<i>`); documents indexed whole are judged by the qrels above.
            entry["evidence"] = list(task.question.evidence)
            entry["documents"] = list(task.question.documents)
        if task.question.spans:  # where the evidence sits in the folder's documents
            entry["evidence_spans"] = [span.to_dict() for span in task.question.spans]
    for track in ANSWER_SECTIONS:
        section = record.get(track)
        if section:
            grade = section.get("judge")
            entry[track] = {
                "prediction": section["prediction"],
                "exact_match": section["exact_match"],
                "f1": section["f1"],
                "refused": section["refused"],
                "unanswerable": section["unanswerable"],
                "judge_score": grade["score"] if grade else None,
                "judge_status": grade["status"] if grade else None,
            }
            scores = jury_scores(grade)
            if scores is not None:
                entry[track]["jury"] = scores
    found = query_diagnostics(record.get("generation"))
    if found is not None:
        entry["diagnostics"] = found
    return entry


def build_results(
    plan: Sequence[PlannedDataset],
    tasks: Sequence[tuple[Task, Record | None]],
    *,
    judge: Mapping[str, Any] | None,
    seed: int,
    config_hash: str,
    prices: Mapping[str, tuple[float, float]] | None = None,
) -> dict[str, Any]:
    """results.json over the run's tasks, each with its current record (or None)."""
    by_pair: dict[tuple[int, str], list[tuple[Task, Record | None]]] = {}
    for task, record in tasks:
        by_pair.setdefault((task.position, task.setup_name), []).append((task, record))
    results = []
    for position, bench in enumerate(plan):
        varied = varied_retriever_fields(bench.setups)
        for planned in bench.setups:
            results.append(
                summarize_result(
                    bench,
                    planned,
                    by_pair.get((position, planned.setup.name), []),
                    varied=varied,
                    judge=judge,
                    seed=seed,
                    prices=prices,
                )
            )
    built: dict[str, Any] = {
        "format": RESULTS_FORMAT,
        "config_hash": config_hash,
        "metrics_version": metrics_version(),
        "seed": seed,
        "bootstrap": {"confidence": CONFIDENCE, "resamples": RESAMPLES, "seed": seed},
        "results": results,
    }
    if prices is not None:  # what the costs were computed with (USD per 1M tokens)
        built["prices"] = {model: list(price) for model, price in sorted(prices.items())}
    return built
