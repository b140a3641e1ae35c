"""The user's systems inside a run: loaded, probed, and asked one question per task.

1. `settle_systems` (after the plan, before any task): loads each system (imports the
   callable, reads and checks the predictions file, opens the HTTP client), then settles
   the tracks of each (dataset, system setup): the tracks the data supports and the system
   provides. A predictions file provides what its rows carry; any other system is asked
   the first question (the probe; its answer is kept for that task, so nothing is asked
   twice): a reply lasagna cannot score stops the run with one line, and a system that
   fails on each of the first three questions stops it too, before hundreds of questions
   fail the same way. (kag's sweep asks every question without a probe: `probe=False`.)
2. `ask_system` (per task): the system's output for one question; a failure raises
   SystemFailure, which the task records as its error (never scored); a question a
   predictions file leaves out (with --allow-missing) comes back as its reason.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from lasagna_cli.engine._data import Corpus, Dataset, Question
from lasagna_cli.engine._errors import EngineError
from lasagna_cli.engine.plan._plan import PlannedDataset, PlannedSetup, Task
from lasagna_cli.engine.plan._prompts import system_input
from lasagna_cli.engine.systems import (
    CorpusMatcher,
    LoadedSystem,
    PredictionCheck,
    Predictions,
    SystemFailure,
    SystemOutput,
    SystemOutputError,
    SystemSpec,
    check_predictions,
    load_system,
    normalize,
    quoted,
)

PROBE_QUESTIONS = 3
_FIELD_OF_TRACK = {"retrieval": '"retrieved" (a ranking)', "generation": '"answer"'}


@dataclass
class SystemState:
    """What the tasks of a run share about its systems."""

    systems: dict[str, LoadedSystem] = field(default_factory=dict)
    """By setup name."""
    probed: dict[tuple[int, str, str], SystemOutput | SystemFailure] = field(default_factory=dict)
    """(dataset position, setup name, question id) -> the probe's output or failure."""
    checks: dict[tuple[int, str], PredictionCheck] = field(default_factory=dict)
    matchers: dict[int, CorpusMatcher] = field(default_factory=dict)

    async def aclose(self) -> None:
        for system in self.systems.values():
            await system.aclose()

    def matcher(self, position: int, corpus: Corpus | None) -> CorpusMatcher:
        found = self.matchers.get(position)
        if found is None:
            texts = corpus.texts if corpus is not None else {}
            titled = corpus.titled if corpus is not None else False
            found = self.matchers[position] = CorpusMatcher(texts, titled=titled)
        return found


def system_row(question: Question, dataset: Dataset) -> dict[str, Any]:
    """What a system may see of a question: never its references or gold passages."""
    return {
        "id": f"{dataset.id_prefix}{question.id}",
        "question": question.text,
        "metadata": dict(question.metadata),
    }


async def ask(
    system: LoadedSystem, question: Question, dataset: Dataset, setup_prompt: Any, top_k: int
) -> SystemOutput:
    """One question to a live system, its reply checked; failures raise SystemFailure."""
    assert system.adapter is not None  # a live system, not a predictions file
    row = system_row(question, dataset)
    text = system_input(setup_prompt, question)
    row["question"] = text
    started = time.perf_counter()
    raw = await system.adapter.ask(text, row, top_k)
    output = normalize(raw, f"{system.spec.label} on question {row['id']!r}")
    return replace(output, latency_s=time.perf_counter() - started)


def _settle(
    planned: PlannedSetup, provides: frozenset[str], where: str, returned: str
) -> PlannedSetup:
    """The tracks the data supports that the system provides; explicit tracks it cannot
    serve are refused, with what it returned."""
    if planned.setup.tracks is not None:
        for track in planned.tracks:
            if track not in provides:
                raise EngineError(
                    f"{where}: the {track} track needs {_FIELD_OF_TRACK[track]}, and the "
                    f"system {returned}; return it, or choose other --tracks"
                )
        return planned
    tracks = tuple(t for t in planned.tracks if t in provides)
    if not tracks:
        raise EngineError(
            f"{where}: nothing to measure: the data supports {', '.join(planned.tracks)}, and "
            f"the system {returned}"
        )
    return replace(
        planned, tracks=tracks, generation_mode="system" if "generation" in tracks else None
    )


def _what_it_returns(provides: frozenset[str]) -> str:
    if not provides:
        return "returns neither an answer nor a ranking"
    names = [
        n for t, n in (("generation", "an answer"), ("retrieval", "a ranking")) if t in provides
    ]
    return "returns " + " and ".join(names) + (" only" if len(names) == 1 else "")


async def _probe(
    system: LoadedSystem,
    bench: PlannedDataset,
    planned: PlannedSetup,
    where: str,
    store: dict[str, SystemOutput | SystemFailure],
) -> SystemOutput:
    """The first questions until one is answered; a reply that cannot be scored, or no
    answer to any of them, stops the run."""
    failures: list[str] = []
    for question in bench.questions[:PROBE_QUESTIONS]:
        try:
            output = await ask(
                system, question, bench.dataset, planned.setup.prompt, planned.setup.top_k
            )
        except SystemOutputError as exc:
            raise EngineError(f"{where}: {exc}") from None
        except SystemFailure as exc:
            store[question.id] = exc
            failures.append(f"{question.id}: {exc}")
            continue
        store[question.id] = output
        return output
    tried = len(failures)
    which = f"each of the first {tried} questions" if tried > 1 else "the first question"
    raise EngineError(
        f"{where}: the system failed on {which}, so the run stops before asking the rest "
        f"({failures[0]}); is it running, and does it work on one question?"
    )


async def settle_systems(
    plan: Sequence[PlannedDataset],
    concurrency: int,
    state: SystemState,
    *,
    probe: bool = True,
    say: Callable[[str], None] = lambda line: None,
) -> list[PlannedDataset]:
    """Load the systems and settle each system setup's tracks (see the module docstring)."""
    specs: dict[str, SystemSpec] = {}
    for bench in plan:
        for planned in bench.setups:
            if planned.setup.system is not None:
                specs[planned.setup.name] = planned.setup.system
    for name, spec in specs.items():
        state.systems[name] = await load_system(spec, concurrency)
    settled = []
    for position, bench in enumerate(plan):
        setups = []
        for planned in bench.setups:
            system = state.systems.get(planned.setup.name)
            if system is None:
                setups.append(planned)
                continue
            where = f'{bench.entry.where} ({bench.name}), setup "{planned.setup.name}"'
            described = system.describe()
            if system.predictions is not None:
                preds = system.predictions
                returned = "(" + preds.label + ") " + _what_it_returns(preds.provides)
                planned = _settle(planned, preds.provides, where, returned)
                check = check_predictions(
                    preds,
                    data_label=f"{bench.entry.where} (split {bench.split})",
                    rows=bench.questions,
                    known=set(bench.dataset.known_ids) | {q.id for q in bench.dataset.questions},
                    tracks=planned.tracks,
                    allow_missing=system.spec.allow_missing,
                )
                state.checks[(position, planned.setup.name)] = check
                described["check"] = check.report()
                _report_check(preds, bench, check, say)
            elif probe and bench.questions:
                found: dict[str, SystemOutput | SystemFailure] = {}
                output = await _probe(system, bench, planned, where, found)
                for question_id, result in found.items():
                    state.probed[(position, planned.setup.name, question_id)] = result
                returned = _what_it_returns(output.provides())
                planned = _settle(planned, output.provides(), where, returned)
                adapter = system.describe().get("adapter")
                say(
                    f"{planned.setup.name}: {adapter} {returned}; tracks on {bench.name}: "
                    f"{', '.join(planned.tracks)}"
                )
            setups.append(replace(planned, system=described, system_identity=system.identity()))
        settled.append(replace(bench, setups=tuple(setups)))
    return settled


def _report_check(
    preds: Predictions, bench: PlannedDataset, check: PredictionCheck, say: Callable[[str], None]
) -> None:
    if check.missing:
        say(
            f"--predictions {preds.label}: {len(check.missing)} of {len(bench.questions)} "
            f"questions of {bench.name} are not scored (--allow-missing), counted as missing: "
            f"{quoted(sorted(check.missing))}"
        )
    if check.unknown:
        say(
            f"--predictions {preds.label}: {len(check.unknown)} id(s) are not questions of "
            f"{bench.name}, ignored: {quoted(check.unknown)}"
        )


async def ask_system(task: Task, dataset: Dataset, state: SystemState) -> SystemOutput | str:
    """The system's output for the task's question, or why a predictions file left it out."""
    name = task.setup_name
    system = state.systems[name]
    if system.predictions is not None:
        check = state.checks[(task.position, name)]
        if task.item in check.missing:
            return check.missing[task.item]
        return check.outputs[task.item]
    probed = state.probed.pop((task.position, name, task.item), None)
    if isinstance(probed, SystemFailure):
        raise probed
    if probed is not None:
        return probed
    return await ask(system, task.question, dataset, task.setup.prompt, task.setup.top_k)
