"""The questions' and passages' text of a run folder, for the report's drill-down.

results.json keeps ids, rankings and scores, not the texts (a corpus can be gigabytes).
The data the run read is named by its manifest (the file, BEIR folder or sweep file it was
started with): it is read again, and its texts are used only when its revision is the one
the run recorded, so a report never shows text of data that has changed since. Data that
cannot be found or read again (moved, edited, a sweep file whose system needs a variable)
is said in a note, and the report shows ids instead.

Passages are kept to the ones a ranking shows or a question is judged relevant to, each
cut at `PASSAGE_CHARS` characters, which bounds the report of a large run.
"""

from __future__ import annotations

from itertools import chain
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lasagna_cli.engine._errors import EngineError
from lasagna_synth import SynthError

if TYPE_CHECKING:
    from lasagna_cli.engine._data import Dataset
    from lasagna_cli.engine.config._config import RunConfig
    from lasagna_cli.engine.reports._run_data import RunData

PASSAGE_CHARS = 600


def _config(source: str) -> RunConfig:
    from lasagna_cli.engine.config._flags import Flags, config_from_path
    from lasagna_cli.engine.config._sweepfile import config_from_sweep, is_sweep_file

    if is_sweep_file(source):
        return config_from_sweep(source, Flags(split_given=False), {})
    return config_from_path(source, Flags())


def _datasets(source: str, text_cache: Path | None) -> list[Dataset]:
    from lasagna_cli.engine.datasets import DatasetLoader

    config = _config(source)
    loader = DatasetLoader(text_cache)
    return [loader(entry) for entry in config.benchmarks]


def add_texts(data: RunData, text_cache: Path | None = None) -> None:
    source = str(data.manifest.get("source") or "")
    if not source or not data.results:
        return
    wanted = {r["dataset"]["name"]: r["dataset"].get("revision") for r in data.results}
    try:
        loaded = _datasets(source, text_cache)
    except (EngineError, SynthError, OSError, ValueError) as exc:
        data.notes.append(
            f"questions and passages shown by id: the data the run read ({source}) cannot be "
            f"read again here ({str(exc).splitlines()[0]}); make the report where the run ran"
        )
        return
    found = {d.name: d for d in loaded}
    for name, revision in wanted.items():
        dataset = found.get(name)
        if dataset is None or dataset.revision != revision:
            data.notes.append(
                f"{name}: questions and passages shown by id: {source} no longer holds the "
                "data this run read (another revision)"
            )
            continue
        _add_dataset(data, dataset)


def _add_dataset(data: RunData, dataset: Dataset) -> None:
    questions = data.questions.setdefault(dataset.name, {})
    for question in dataset.questions:
        shown: dict[str, Any] = {
            "text": question.text,
            "references": list(question.references),
            "unanswerable": question.unanswerable,
        }
        if question.category:
            shown["category"] = question.category
        kind = question.metadata.get("question_type") if question.metadata else None
        if kind:
            shown["question_type"] = str(kind)
        if question.options:
            shown["options"] = dict(question.options)
        if question.evidence:
            shown["evidence"] = list(question.evidence)
        questions[question.id] = {**questions.get(question.id, {}), **shown}
    corpus = dataset.corpus
    if corpus is None:
        return
    entries = [
        entry
        for result in data.results
        if result["dataset"]["name"] == dataset.name
        for entry in result.get("per_query", ())
    ]
    # 400,000 ranked passages in a large run: each ranking's ids taken in C
    needed = set(map(itemgetter(0), chain.from_iterable(e.get("ranking", ()) for e in entries)))
    needed.update(chain.from_iterable(entry.get("judgments", {}) for entry in entries))
    passages = data.passages.setdefault(dataset.name, {})
    for doc in sorted(needed):
        text = corpus.texts.get(doc)
        if text is not None:
            passages[doc] = text if len(text) <= PASSAGE_CHARS else text[:PASSAGE_CHARS] + "…"
