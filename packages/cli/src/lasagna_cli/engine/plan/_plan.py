"""From a configuration to its tasks: data loaded, questions chosen, tracks settled.

Everything that can be refused is refused here, before an index is built or a model
loaded: a split or filter the data does not have, a track the data cannot support (with
the reason and the fix), a generation track with no model to generate with.

A task is one (dataset, question, setup); it is plain data, so it can cross to another
process or machine. Its fingerprint covers everything that decides its record: the
dataset's revision, the question, the setup's retriever, generator and prompt, the
tracks, the metrics' version, and (a second fingerprint over the first) the judge, so that
a changed judge regrades the answers it has rather than asking for them again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from importlib.metadata import version
from typing import Any

from lasagna_cli.engine._data import Dataset, Question
from lasagna_cli.engine._errors import EngineUsageError
from lasagna_cli.engine.config._config import BenchmarkEntry, ChunkingSpec, RunConfig, Setup
from lasagna_cli.engine.datasets import select_questions
from lasagna_cli.engine.plan._prompts import prompt_sha256
from lasagna_cli.engine.records._store import slug

RUN_METRICS_VERSION = "run-metrics-2"
#: How retrieval over a folder of documents is scored, in its tasks' fingerprints: a change
#: scores those tasks anew, and only them.
SPAN_SCORING = "evidence-spans-1"


@cache
def metrics_version() -> str:
    """The metric definitions in force: the engine's and lasagna-metrics' versions."""
    return f"{RUN_METRICS_VERSION}; lasagna-metrics {version('lasagna-metrics')}"


@dataclass(frozen=True, slots=True)
class PlannedSetup:
    setup: Setup
    tracks: tuple[str, ...]
    generation_mode: str | None
    """"rag" (answers from the top-k passages), "closed-book", or "system" (the user's
    system answers); None without generation."""
    system: Mapping[str, Any] | None = None
    """The user's system as results describe it (no secrets); set once it is loaded."""
    system_identity: Mapping[str, Any] | None = None
    """What decides the system's outputs, for task fingerprints."""
    chunked: bool = False
    """It searches a folder of documents cut by its chunking (results list the chunking
    with the retriever's settings)."""

    @property
    def needs_retrieval(self) -> bool:
        """Whether the built-in BM25 retriever runs (a system retrieves for itself)."""
        if self.setup.system is not None or self.setup.retriever is None:
            return False
        return "retrieval" in self.tracks or self.generation_mode == "rag"

    @property
    def answers(self) -> bool:
        """Whether the setup answers (a model or a system), so a judge may grade it."""
        return self.generation_mode is not None or "closed-book" in self.tracks


@dataclass(frozen=True)
class PlannedDataset:
    entry: BenchmarkEntry
    dataset: Dataset
    questions: tuple[Question, ...]
    setups: tuple[PlannedSetup, ...]

    @property
    def name(self) -> str:
        return self.dataset.name

    @property
    def split(self) -> str:
        return self.dataset.split

    @property
    def folder(self) -> str:
        """Tasks live in `<out>/tasks/<folder>/<setup>/<item>.json`; the name carries the
        content hash, so an edited file never resumes from the old one's results."""
        return slug(f"{self.dataset.name}_{self.dataset.split}")

    @property
    def sample_ids_sha256(self) -> str:
        """Which questions were asked: the sha256 of their sorted ids."""
        ids = sorted(q.id for q in self.questions)
        return hashlib.sha256("\n".join(ids).encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Task:
    """One (dataset, question, setup): what a worker needs besides the shared corpus."""

    position: int
    """Which dataset of the plan."""
    folder: str
    dataset_name: str
    split: str
    revision: str
    planned: PlannedSetup
    question: Question
    fingerprint: str
    answer_fingerprint: str
    ranking: tuple[tuple[str, float], ...] | None = None
    """The retriever's ranking (best first), filled in by the runner for pending tasks."""
    retrieval_seconds: float | None = None
    retrieval_index: Mapping[str, Any] | None = None
    """A dense or hybrid retriever's index: embedder, its server, dimension, index kind."""

    @property
    def item(self) -> str:
        return self.question.id

    @property
    def setup(self) -> Setup:
        return self.planned.setup

    @property
    def setup_name(self) -> str:
        return self.planned.setup.name

    @property
    def label(self) -> dict[str, str]:
        return {"dataset": self.dataset_name, "item": self.item, "setup": self.setup_name}


@dataclass(frozen=True)
class Plan:
    datasets: tuple[PlannedDataset, ...]
    judge: Mapping[str, Any] | None = None
    """The judge's identity ({"model", "rubric", "rubric_version"}), when answers are graded."""
    tasks: tuple[Task, ...] = field(default=())


Loader = Callable[[BenchmarkEntry], Dataset]


def build_plan(config: RunConfig, load: Loader) -> list[PlannedDataset]:
    """Load and check every benchmark, choose questions, settle tracks. Loads no model."""
    planned: list[PlannedDataset] = []
    for entry in config.benchmarks:
        dataset = entry.dataset if entry.dataset is not None else load(entry)
        questions = select_questions(dataset, entry, config.seed)
        setups = [
            s
            for s in config.setups
            if (entry.setups is None or s.name in entry.setups) and s.covers(dataset.name)
        ]
        planned_setups = tuple(plan_tracks(entry, dataset, s) for s in setups)
        planned.append(PlannedDataset(entry, dataset, tuple(questions), planned_setups))
    check_unique_folders(planned)
    return planned


def _refuse(entry: BenchmarkEntry, dataset: Dataset, setup: Setup, message: str) -> Exception:
    shows = (
        f"`lasagna benchmark info {entry.benchmark}` shows what the benchmark has"
        if entry.benchmark is not None
        else f"`lasagna benchmark validate-data {entry.where}` shows what the data supports"
    )
    return EngineUsageError(
        f'{entry.where} ({dataset.name}), setup "{setup.name}": {message}. {shows}'
    )


def plan_tracks(entry: BenchmarkEntry, dataset: Dataset, setup: Setup) -> PlannedSetup:
    """The tracks one setup runs on one benchmark; refused with reason and fix if impossible.
    A system's tracks are narrowed again by what it returns, once it is loaded."""
    support = dataset.tracks
    is_system = setup.system is not None
    names = ("retrieval", "generation") if is_system else tuple(support)
    supported = [t for t in names if support[t].supported]
    if setup.tracks is not None:
        for track in setup.tracks:
            found = support[track]
            if not found.supported:
                if is_system:
                    others = f"; or run --tracks {','.join(supported)}" if supported else ""
                else:
                    others = (
                        f"; or run the tracks it supports: --tracks {','.join(supported)}"
                        if supported
                        else ""
                    )
                raise _refuse(
                    entry,
                    dataset,
                    setup,
                    f"cannot run the {track} track: {found.reason}. Fix: {found.fix}{others}",
                )
            if not is_system and track in ("generation", "closed-book") and not setup.generator:
                raise _refuse(
                    entry,
                    dataset,
                    setup,
                    f"the {track} track needs a model to answer with: add --generator MODEL "
                    "(or `generator:` on the setup); local/smollm2 runs offline with no key",
                )
        tracks = setup.tracks
    elif is_system:
        tracks = tuple(supported)
        if not tracks:
            why = "; ".join(f"{t}: {support[t].reason}" for t in names)
            raise _refuse(
                entry, dataset, setup, f"no track to run: nothing can be measured ({why})"
            )
    else:
        tracks = tuple(
            t
            for t in supported
            if t == "retrieval" or (t == "generation" and setup.generator is not None)
        )
        if not tracks:
            why = "; ".join(f"{t}: {s.reason}" for t, s in support.items() if not s.supported)
            needs_model = [t for t in supported if t != "retrieval"]
            fix = (
                f"it supports {', '.join(needs_model)}, which needs a model: add --generator "
                "MODEL (local/smollm2 runs offline with no key)"
                if needs_model
                else f"nothing can be measured ({why})"
            )
            raise _refuse(entry, dataset, setup, f"no track to run: {fix}")
    mode = None
    if "generation" in tracks:
        mode = "system" if is_system else ("rag" if dataset.corpus else "closed-book")
    return PlannedSetup(
        setup=setup,
        tracks=tuple(tracks),
        generation_mode=mode,
        chunked=dataset.documents is not None and not is_system,
    )


def check_unique_folders(planned: Sequence[PlannedDataset]) -> None:
    seen: dict[str, str] = {}
    for bench in planned:
        if bench.folder in seen:
            fix = (
                "make them one entry (a filter takes a list of values per key)"
                if bench.entry.benchmark is not None
                else "give one of them a different `name:` in the sweep file"
            )
            raise EngineUsageError(
                f"{bench.entry.where}: runs under the same name and split as "
                f"{seen[bench.folder]} ({bench.name}, split {bench.split}); {fix}"
            )
        seen[bench.folder] = bench.entry.where


def fingerprint_blob(
    bench: PlannedDataset, planned: PlannedSetup, question: Question | None = None
) -> dict[str, Any]:
    """Everything that decides a task's record but the judge; without `question`, what all
    the questions of one (dataset, setup) share."""
    setup = planned.setup
    generator = setup.generator
    blob: dict[str, Any] = {
        "dataset": bench.name,
        "revision": bench.dataset.revision,
        "split": bench.split,
        "setup": setup.name,
        "retriever": setup.retriever.to_dict()
        if planned.needs_retrieval and setup.retriever
        else None,
        "generator": generator.name if generator is not None and planned.answers else None,
        "tracks": list(planned.tracks),
        "prompt_sha256": prompt_sha256(setup.prompt),
        "metrics_version": metrics_version(),
    }
    corpus = bench.dataset.corpus
    documents = bench.dataset.documents
    if documents is not None:  # a folder of documents, as this setup chunks it
        if planned.needs_retrieval:
            blob["corpus"] = {
                "documents": documents.digest,
                **setup.chunking.describe(),
                # Retrieval is scored by characters of the evidence spans (`span_scores`).
                "scoring": SPAN_SCORING,
            }
    elif corpus is not None and corpus.rule:  # a registered benchmark's passages
        blob["corpus"] = corpus.rule
    if planned.system_identity is not None:
        blob["system"] = dict(planned.system_identity)
        blob["top_k"] = setup.top_k
    if generator is not None and planned.answers:
        if generator.provider is not None:
            blob["provider"] = generator.provider.describe()
        if generator.temperature is not None:
            blob["temperature"] = generator.temperature
        if generator.max_tokens is not None:
            blob["max_tokens"] = generator.max_tokens
        if generator.endpoint is not None:
            blob["endpoint"] = generator.endpoint
    if setup.query_prefix:
        blob["query_prefix"] = setup.query_prefix
    if setup.database is not None and planned.needs_retrieval:
        blob["database"] = setup.database.describe()
    if question is not None:
        blob["item"] = _item(bench, question)
    return blob


def _item(bench: PlannedDataset, question: Question) -> Any:
    """What of the question itself is in its fingerprint: its id, and for kag's files (where
    the question is the data, with no revision of its own) its text, options and references."""
    if bench.dataset.kind == "kag":
        return [question.id, question.text, dict(question.options or {}), question.references]
    return question.id


def _sha(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()


def judged_fingerprint(answer_fingerprint: str, judge: Mapping[str, Any] | None) -> str:
    """The fingerprint of a record whose answers `judge` graded (the answer's own without)."""
    if judge is None:
        return answer_fingerprint
    return _sha({"answer": answer_fingerprint, "judge": dict(judge)})


def make_tasks(plan: Sequence[PlannedDataset], judge: Mapping[str, Any] | None) -> list[Task]:
    tasks = []
    for position, bench in enumerate(plan):
        folder = bench.folder
        # Each question's item is encoded once, whatever the number of setups.
        items = [json.dumps(_item(bench, q), sort_keys=True).encode() for q in bench.questions]
        judged: dict[Any, tuple[Question, ...]] = {}
        for planned in bench.setups:
            questions = bench.questions
            if bench.dataset.documents is not None:
                # Relevant: the passages of this setup's chunking that overlap the evidence.
                chunking = planned.setup.chunking
                if chunking not in judged:
                    judged[chunking] = judge_by_spans(bench, chunking)
                questions = judged[chunking]
            grader = judge if judge and planned.answers else None
            # What the questions share is encoded once; each task adds its own item.
            shared = hashlib.sha256(
                json.dumps(fingerprint_blob(bench, planned), sort_keys=True).encode()
            )
            for question, item in zip(questions, items, strict=True):
                digest = shared.copy()
                digest.update(item)
                answer = digest.hexdigest()
                tasks.append(
                    Task(
                        position=position,
                        folder=folder,
                        dataset_name=bench.name,
                        split=bench.split,
                        revision=bench.dataset.revision,
                        planned=planned,
                        question=question,
                        fingerprint=judged_fingerprint(answer, grader),
                        answer_fingerprint=answer,
                    )
                )
    return tasks


def judge_by_spans(bench: PlannedDataset, chunking: ChunkingSpec) -> tuple[Question, ...]:
    """The questions with judgments over the documents as `chunking` cuts them."""
    corpus = bench.dataset.corpus_for(chunking)
    assert corpus is not None
    return tuple(
        replace(q, judgments=corpus.judgments(q.spans)) if q.spans else q for q in bench.questions
    )


def with_setups(bench: PlannedDataset, setups: Sequence[PlannedSetup]) -> PlannedDataset:
    return replace(bench, setups=tuple(setups))
