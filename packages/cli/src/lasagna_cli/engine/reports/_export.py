"""Flat exports of a run's results: one row per (benchmark, setup, question), and TREC.

Each row holds the run, benchmark, split, setup and comparability key, the question's id
and status (scored, failed, missing, not run) and error, every metric the result averages
(`<track>/<metric>`: the value results.json's mean counts, empty when the question has none
or does not count in it), each answer with its EM, F1, refusal, the judge's grade and
status, and its tokens, latency and cost when known. So the mean of a metric's column over
the rows that have a value is results.json's mean, exactly (`math.fsum`).

- `csv`: a header, then the rows; an empty cell is no value; floats as Python writes them
  (`repr`), so they read back to the same number;
- `jsonl`: one JSON object per row, null for no value;
- `parquet`: through pyarrow (`pip install "lasagna-cli[parquet]"`), typed columns;
- `trec`: the run file trec_eval, ranx and ir_measures read, `qid Q0 doc rank score tag`,
  one (benchmark, setup) per file, each question's ranking as retrieved;
- `qrels`: the judgments of that benchmark's questions, `qid 0 doc grade`, so the run file
  can be scored outside lasagna.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from lasagna_cli.engine._errors import EngineError, EngineUsageError, MissingExtraError
from lasagna_cli.engine.records._records import ANSWER_SECTIONS

FORMATS = ("csv", "jsonl", "parquet", "trec", "qrels")
ANSWER_FIELDS = (
    "prediction",
    "exact_match",
    "f1",
    "refused",
    "unanswerable",
    "judge_score",
    "judge_status",
    "model",
    "input_tokens",
    "output_tokens",
    "latency_s",
    "cost_usd",
)
BASE_FIELDS = (
    "run",
    "dataset",
    "split",
    "setup",
    "comparability_key",
    "question_id",
    "status",
    "error",
)


def check_export(export_format: str, output: Path | None) -> None:
    """`export --format` is one of FORMATS, parquet is written to a file, and the file
    (-o, when given) can be written."""
    from lasagna_cli.engine.records._store import check_output_file

    if export_format not in FORMATS:
        raise EngineUsageError(
            f"--format: expected one of {', '.join(FORMATS)}, found {export_format!r}"
        )
    if export_format == "parquet" and output is None:
        raise EngineUsageError("--format parquet: give the file with -o FILE.parquet")
    if output is not None:
        check_output_file(output, f"-o {output}")


def write_export(
    results: Sequence[Mapping[str, Any]],
    export_format: str,
    output: Path,
    *,
    run: str = "",
    setup: str | None = None,
    dataset: str | None = None,
) -> str:
    """The export written to `output` (whole or absent), and the line that says so."""
    from lasagna_cli.engine._counts import counted
    from lasagna_synth import write_bytes_atomic

    if export_format == "parquet":
        rows = list(flat_rows(results, run))
        to_parquet(rows, output)
        return f"export: {output} ({counted(len(rows), 'row')})"
    text = export_text(results, export_format, run=run, setup=setup, dataset=dataset)
    write_bytes_atomic(output, text.encode("utf-8"))
    return f"export: {output} ({text.count(chr(10)):,} lines)"


def flat_rows(results: Iterable[Mapping[str, Any]], run: str = "") -> Iterator[dict[str, Any]]:
    """One row per (benchmark, setup, question) of results in results.json's shape."""
    from lasagna_cli.engine.reports._run_data import metric_names, value_reader

    for result in results:
        names = metric_names(result)
        values_of = value_reader(result)
        for entry in result.get("per_query", ()):
            row: dict[str, Any] = {
                "run": run,
                "dataset": result["dataset"]["name"],
                "split": result["dataset"].get("split"),
                "setup": result["setup"]["name"],
                "comparability_key": result.get("comparability_key"),
                "question_id": str(entry["id"]),
                "status": entry.get("status"),
                "error": entry.get("error") or entry.get("missing"),
            }
            values = values_of(entry)
            for name in names:
                row[name] = values.get(name)
            for track in ANSWER_SECTIONS:
                section = entry.get(track)
                if isinstance(section, Mapping):
                    for key in ANSWER_FIELDS:
                        if key in section:
                            row[f"{track}.{key}"] = section[key]
            yield row


def columns(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Every row's keys, in first-seen order (the base fields first)."""
    seen: dict[str, None] = dict.fromkeys(BASE_FIELDS)
    for row in rows:
        seen.update(dict.fromkeys(row))
    return list(seen)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def to_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    header = columns(rows)
    writer.writerow(header)
    for row in rows:
        writer.writerow([_cell(row.get(name)) for name in header])
    return buffer.getvalue()


def to_jsonl(rows: Sequence[Mapping[str, Any]]) -> str:
    header = columns(rows)
    return "".join(
        json.dumps({k: row.get(k) for k in header}, ensure_ascii=False) + "\n" for row in rows
    )


def to_parquet(rows: Sequence[Mapping[str, Any]], path: Path) -> None:
    try:
        import pyarrow as pa  # type: ignore[import-untyped]
        import pyarrow.parquet as pq  # type: ignore[import-untyped]
    except ImportError:
        raise MissingExtraError("--format parquet", "parquet", "pyarrow") from None
    header = columns(rows)
    table = pa.Table.from_pylist([{k: row.get(k) for k in header} for row in rows])
    pq.write_table(table, path)


_TAG = re.compile(r"\s+")


def _retrieval_results(results: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [r for r in results if "retrieval" in r.get("metrics", {})]


def one_ranking_result(
    results: Sequence[Mapping[str, Any]], setup: str | None, dataset: str | None
) -> Mapping[str, Any]:
    """The one (benchmark, setup) with rankings a TREC file holds; an error naming the
    choices when the flags leave several."""
    found = [
        r
        for r in _retrieval_results(results)
        if (setup is None or r["setup"]["name"] == setup)
        and (
            dataset is None
            or r["dataset"]["name"] == dataset
            or str(r["dataset"]["name"]).startswith(f"{dataset}@")
        )
    ]
    if len(found) == 1:
        return found[0]
    choices = ", ".join(
        f"--dataset {r['dataset']['name']} --setup {r['setup']['name']}"
        for r in _retrieval_results(results)
    )
    if not choices:
        raise EngineError(
            "--format trec: this run has no retrieval results (no rankings to write); run "
            "it with the retrieval track"
        )
    raise EngineUsageError(
        f"--format trec: a run file holds one benchmark and setup, and {len(found)} match; "
        f"choose one: {choices}"
    )


def _qid(text: str) -> str:
    if _TAG.search(text) or not text:
        raise EngineError(
            f"--format trec: question id {text!r} holds whitespace, which TREC files cannot; "
            "export --format jsonl instead"
        )
    return text


def to_trec_run(result: Mapping[str, Any]) -> str:
    """`qid Q0 doc rank score tag`, each question's ranking as the run retrieved it (the
    scores are the retriever's; a ranking whose scores tie or rise is written with scores
    that keep its order, since trec_eval sorts by score)."""
    tag = _TAG.sub("_", str(result["setup"]["name"])) or "lasagna"
    lines = []
    for entry in result.get("per_query", ()):
        ranking = entry.get("ranking") or ()
        if entry.get("status") != "scored" or not ranking:
            continue
        qid = _qid(str(entry["id"]))
        scores = [float(score) for _, score in ranking]
        ordered = all(a > b for a, b in itertools.pairwise(scores))
        for rank, (doc, score) in enumerate(ranking, start=1):
            shown = float(score) if ordered else float(len(ranking) - rank + 1)
            lines.append(f"{qid} Q0 {_qid(str(doc))} {rank} {shown!r} {tag}\n")
    return "".join(lines)


def to_qrels(result: Mapping[str, Any]) -> str:
    lines = []
    for entry in result.get("per_query", ()):
        for doc, grade in (entry.get("judgments") or {}).items():
            lines.append(f"{_qid(str(entry['id']))} 0 {_qid(str(doc))} {int(grade)}\n")
    return "".join(lines)


def export_text(
    results: Sequence[Mapping[str, Any]],
    export_format: str,
    *,
    run: str = "",
    setup: str | None = None,
    dataset: str | None = None,
) -> str:
    """The export in a text format (csv, jsonl, trec, qrels)."""
    if export_format in ("trec", "qrels"):
        chosen = one_ranking_result(results, setup, dataset)
        return to_trec_run(chosen) if export_format == "trec" else to_qrels(chosen)
    rows = list(flat_rows(results, run))
    if export_format == "csv":
        return to_csv(rows)
    if export_format == "jsonl":
        return to_jsonl(rows)
    raise EngineUsageError(
        f"--format: expected one of {', '.join(FORMATS)}, found {export_format!r}"
    )
