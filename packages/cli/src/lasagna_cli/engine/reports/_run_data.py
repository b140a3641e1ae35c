"""Any run folder as one shape, for the views that read results after a run: the HTML
report, paired comparisons and flat exports.

A `RunData` holds results in results.json's shape (one per benchmark and setup: the
dataset, the setup, the comparability key and the fields held fixed, counts, metric
summaries, usage and the per-question entries), whichever door wrote the folder:

- `benchmark run` (a data file, BEIR folder or sweep file): its results.json, each
  question's entry completed from its task record (the judge's reasoning and path, tokens,
  latency), and the questions' and passages' text read again from the data the manifest
  names when it is still there with the same revision (`_texts`);
- the staged pipeline (`run NAME --data-dir`): its gen/ and eval/ records, summarised by
  the same rules (`_read_staged`);
- kag's `benchmark sweep`: its result files with the DATASETS.json it ran, each answer
  scored by the engine's one scoring module (`_read_kag`).

`read_run` (`_read`) reads any of them. `value_reader` gives one question's value of every
metric a result summarises, by the rules results.json's means follow, so the exports and
the comparisons recompute them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lasagna_cli.engine._errors import EngineError
from lasagna_cli.engine.records._fast_json import loads
from lasagna_cli.engine.records._records import ANSWER_SECTIONS
from lasagna_cli.engine.records._store import RunStore, all_records
from lasagna_cli.engine.reports._diagnosis import call_facts
from lasagna_cli.engine.reports._jury_scores import jury_values

Prices = Mapping[str, tuple[float, float]]
#: Per answer section, the metrics whose value a question has (see `_generation_values`).
ANSWER_METRICS = (
    "exact_match",
    "f1",
    "has_answer_exact_match",
    "has_answer_f1",
    "no_answer_accuracy",
    "false_refusal_rate",
    "judge_score",
    "accuracy",
)


@dataclass
class RunData:
    """One run folder's results (see the module docstring)."""

    path: Path
    kind: str
    """"run", "staged" or "sweep"."""
    results: list[dict[str, Any]]
    manifest: dict[str, Any] = field(default_factory=dict)
    seed: int = 42
    questions: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    """Dataset name -> question id -> {text, references, category, unanswerable}."""
    passages: dict[str, dict[str, str]] = field(default_factory=dict)
    """Dataset name -> passage id -> its text (the ranked and the relevant ones)."""
    notes: list[str] = field(default_factory=list)
    prices: dict[str, tuple[float, float]] | None = None
    """The price table results.json was computed with (`run --prices`), if any."""

    _values: dict[int, dict[str, dict[str, Any]]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @property
    def label(self) -> str:
        return str(self.path)

    def values(self, result: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
        """Question id -> `value_reader`'s values of one of these results, computed once: the
        comparisons and the report's cells use the same (a result is not changed once read)."""
        found = self._values.get(id(result))
        if found is None:
            values_of = value_reader(result)
            found = {str(e["id"]): values_of(e) for e in result.get("per_query", ())}
            self._values[id(result)] = found
        return found


def read_json_file(path: Path, what: str) -> Any:
    try:
        return loads(path.read_bytes(), text=True)
    except OSError as exc:
        raise EngineError(f"{path}: cannot read {what} ({exc.strerror})") from None
    except ValueError as exc:
        raise EngineError(
            f"{path}: {what} is not valid JSON ({exc}); run again to rewrite it"
        ) from None


def complete_from_records(data: RunData) -> None:
    """Each scored question's entry completed from its task record: what results.json
    leaves out (the judge's reasoning, tokens, latency, the question as asked)."""
    store = RunStore(data.path)
    index: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}  # (dataset, setup) -> id ->
    for result in data.results:
        entries = index.setdefault((result["dataset"]["name"], result["setup"]["name"]), {})
        for q in result.get("per_query", ()):
            entries[str(q["id"])] = q
    for record in all_records(store):
        task = record.get("task")
        if not isinstance(task, dict):
            continue
        dataset, item = str(task["dataset"]), str(task["item"])
        entry = index.get((dataset, str(task["setup"])), {}).get(item)
        if entry is None or entry.get("status") != "scored":
            continue
        complete_entry(entry, record)
        for name in ANSWER_SECTIONS:
            section = record.get(name)
            if isinstance(section, dict) and section.get("question"):
                questions = data.questions.setdefault(dataset, {})
                if item not in questions:  # the first record that asks it
                    questions[item] = {
                        "text": section["question"],
                        "references": list(section.get("references") or ()),
                        "unanswerable": bool(section.get("unanswerable")),
                    }


# What an answer's entry takes from its record; `batch` (only a batch item's record has it)
# prices it at the batch price (`_costs`).
_COPIED = ("model", "input_tokens", "output_tokens", "latency_s", "choice", "correct", "batch")
#: What the price of one judge's calls of a jury takes (`_costs.section_cost`).
_JUDGE_CALL = ("model", "input_tokens", "output_tokens", "batch")


def complete_entry(entry: dict[str, Any], record: Mapping[str, Any]) -> None:
    """Copy a record's details that results.json leaves out into a question's entry."""
    retrieval = record.get("retrieval")
    if isinstance(retrieval, dict) and retrieval.get("seconds") is not None:
        entry["retrieval_seconds"] = retrieval["seconds"]
    for name in ANSWER_SECTIONS:
        section = record.get(name)
        shown = entry.get(name)
        if not isinstance(section, dict) or not isinstance(shown, dict):
            continue
        for key in _COPIED:
            if section.get(key) is not None:
                shown[key] = section[key]
        grade = section.get("judge")
        if isinstance(grade, dict):
            facts = call_facts(section)
            if facts is not None:
                shown["diagnostics"] = facts
            shown["judge"] = {
                key: grade.get(key)
                for key in (
                    "score",
                    "status",
                    "path",
                    "reasoning",
                    "model",
                    "error",
                    "input_tokens",
                    "output_tokens",
                )
            }
            if grade.get("batch") is True:
                shown["judge"]["batch"] = True
            members = grade.get("jury")
            if isinstance(members, list):  # a jury: each judge priced at its own price
                shown["judge"]["jury"] = [
                    {k: m[k] for k in _JUDGE_CALL if m.get(k) is not None}
                    for m in members
                    if isinstance(m, dict)
                ]


def _generation_values(section: Mapping[str, Any], summarized: Mapping[str, Any]) -> dict[str, Any]:
    """One answer's value of each answer metric its result summarises (None: missing; a
    metric it does not count in, such as no_answer_accuracy for an answerable question, is
    left out)."""
    unanswerable = bool(section.get("unanswerable"))
    refused = 1.0 if section.get("refused") else 0.0
    values: dict[str, Any] = {
        "exact_match": section.get("exact_match"),
        "f1": section.get("f1"),
    }
    if unanswerable:
        values["no_answer_accuracy"] = refused
    else:
        values["has_answer_exact_match"] = section.get("exact_match")
        values["has_answer_f1"] = section.get("f1")
        values["false_refusal_rate"] = refused
    if section.get("judge_status") is not None:
        values["judge_score"] = (
            section.get("judge_score") if section.get("judge_status") == "ok" else None
        )
    values.update(jury_values(section))
    if "accuracy" in summarized and section.get("correct") is not None:
        values["accuracy"] = 1.0 if section["correct"] else 0.0
    return {k: v for k, v in values.items() if k in summarized}


def value_reader(result: Mapping[str, Any]) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """For the entries of one result: `{"track/metric": value}` of one question, the values
    results.json's means average (a scored question only; None is a missing value). The
    "track/metric" names are made once (a large run has 40,000 entries)."""
    metrics = result.get("metrics", {})

    def keys(track: str) -> list[tuple[str, str]]:
        return [(name, f"{track}/{name}") for name in metrics.get(track, ())]

    retrieval, diagnostics = keys("retrieval"), keys("diagnostics")
    answers = [(t, metrics[t], dict(keys(t))) for t in ANSWER_SECTIONS if t in metrics]

    def values_of(entry: Mapping[str, Any]) -> dict[str, Any]:
        if entry.get("status") != "scored":
            return {}
        values: dict[str, Any] = {}
        found = entry.get("metrics")
        if retrieval and isinstance(found, Mapping):
            # None: neither judged nor with evidence, so not averaged in (as results.json).
            for name, key in retrieval:
                if name in found:
                    values[key] = found[name]
        for track, summarized, named in answers:
            section = entry.get(track)
            if isinstance(section, dict):
                for name, value in _generation_values(section, summarized).items():
                    values[named[name]] = value
        found = entry.get("diagnostics")
        if diagnostics and isinstance(found, Mapping):
            for name, key in diagnostics:
                if name in found:  # None: a check that did not parse, missing as in the mean
                    values[key] = found[name]
        return values

    return values_of


def metric_names(result: Mapping[str, Any]) -> list[str]:
    """The result's averaged metrics as "track/metric", in results.json's order."""
    return [
        f"{track}/{name}"
        for track, found in result.get("metrics", {}).items()
        for name, value in found.items()
        if isinstance(value, Mapping) and "mean" in value
    ]


def iter_entries(data: RunData) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    for result in data.results:
        for entry in result.get("per_query", ()):
            yield result, entry


def result_label(result: Mapping[str, Any]) -> str:
    return f"{result['dataset']['name']} / {result['setup']['name']}"
