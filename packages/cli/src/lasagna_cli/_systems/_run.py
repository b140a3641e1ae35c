"""Systems under test inside `lasagna benchmark run`.

1. `settle_systems` (after the plan, before any task): loads each system (imports the
   callable, reads and checks the predictions file, opens the HTTP client), then settles
   the tracks of each (benchmark, system setup): the tracks the data supports and the
   system provides. A predictions file provides what its rows carry; any other system is
   asked the first question (the probe; its answer is kept for that task, so nothing is
   asked twice): a reply lasagna cannot score stops the run with one line, and a system
   that fails on each of the first three questions stops it too, before hundreds of
   questions fail the same way.
2. `system_sections` (per task): the system's output for one question, scored like the
   built-in setup's: the ranking mapped to the corpus and measured with the same metrics,
   the answer scored with EM/F1 and graded by the judge. A failure raises, and the runner
   records it as the task's error (never scored); a question a predictions file leaves out
   (with --allow-missing) is recorded as missing.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from lasagna_cli._errors import DATA_ERROR, CliError
from lasagna_cli._systems._adapter import SystemAdapter
from lasagna_cli._systems._errors import SystemFailure, SystemOutputError
from lasagna_cli._systems._match import CorpusMatcher, match_ranking
from lasagna_cli._systems._output import SystemOutput, normalize
from lasagna_cli._systems._predictions import (
    PredictionCheck,
    Predictions,
    check_predictions,
    known_ids,
    load_predictions,
)
from lasagna_cli._systems._spec import SystemSpec

if TYPE_CHECKING:
    from lasagna_cli._run_plan import PlannedBenchmark, PlannedSetup
    from lasagna_cli._run_tasks import Task
    from lasagna_judge import LLM, Rubric
    from lasagna_synth import BenchmarkRow

PROBE_QUESTIONS = 3
_FIELD_OF_TRACK = {"retrieval": '"retrieved" (a ranking)', "generation": '"answer"'}


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@dataclass
class LoadedSystem:
    spec: SystemSpec
    adapter: SystemAdapter | None = None
    """FunctionSystem, RetrieverSystem, RunnableSystem or HttpSystem; None for predictions."""
    predictions: Predictions | None = None

    def describe(self) -> dict[str, Any]:
        """What results record: the spec (no secrets), how it was called, the file's digest."""
        described = self.spec.describe()
        if self.adapter is not None:
            described.update(self.adapter.describe())
        if self.predictions is not None:
            described.update(self.predictions.describe())
        return described

    def identity(self) -> dict[str, Any]:
        """What decides the outputs, for task fingerprints: a changed file is a new system."""
        described = self.spec.describe()
        keep = {"kind", "file", "target", "url"}
        found = {k: v for k, v in described.items() if k in keep}
        if self.predictions is not None:
            found["sha256"] = self.predictions.sha256
        return found


@dataclass
class SystemState:
    """What the tasks of a run share about its systems."""

    systems: dict[str, LoadedSystem] = field(default_factory=dict)
    """By setup name."""
    probed: dict[tuple[int, str, str], SystemOutput | SystemFailure] = field(default_factory=dict)
    """(benchmark position, setup name, row id) -> the probe's output or failure."""
    checks: dict[tuple[int, str], PredictionCheck] = field(default_factory=dict)
    matchers: dict[int, CorpusMatcher] = field(default_factory=dict)

    async def aclose(self) -> None:
        for system in self.systems.values():
            if system.adapter is not None:
                await system.adapter.aclose()


def system_row(row: BenchmarkRow) -> dict[str, Any]:
    """What a system may see of a row: never its references or gold passages."""
    return {"id": row.id, "question": row.question, "metadata": dict(row.metadata)}


async def ask(system: LoadedSystem, row: BenchmarkRow, top_k: int) -> SystemOutput:
    """One question to a live system, its reply checked; failures raise SystemFailure."""
    assert system.adapter is not None  # a live system, not a predictions file
    started = time.perf_counter()
    raw = await system.adapter.ask(row.question, system_row(row), top_k)
    output = normalize(raw, f"{system.spec.label} on question {row.id!r}")
    return replace(output, latency_s=time.perf_counter() - started)


async def load_system(spec: SystemSpec, concurrency: int) -> LoadedSystem:
    if spec.kind == "predictions":
        return LoadedSystem(spec, predictions=load_predictions(spec))
    if spec.kind == "http":
        from lasagna_cli._systems._http import HttpSystem

        return LoadedSystem(spec, adapter=HttpSystem(spec, concurrency))
    from lasagna_cli._systems._callable import build_callable

    return LoadedSystem(spec, adapter=await build_callable(spec.target, spec.label, spec.timeout))


def _settle(
    planned: PlannedSetup, provides: frozenset[str], where: str, returned: str
) -> PlannedSetup:
    """The tracks the data supports that the system provides; explicit tracks it cannot
    serve are refused, with what it returned."""
    if planned.setup.tracks is not None:
        for track in planned.tracks:
            if track not in provides:
                raise CliError(
                    f"{where}: the {track} track needs {_FIELD_OF_TRACK[track]}, and the "
                    f"system {returned}; return it, or choose other --tracks",
                    DATA_ERROR,
                )
        return planned
    tracks = tuple(t for t in planned.tracks if t in provides)
    if not tracks:
        raise CliError(
            f"{where}: nothing to measure: the data supports {', '.join(planned.tracks)}, and "
            f"the system {returned}",
            DATA_ERROR,
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
    rows: Sequence[BenchmarkRow],
    top_k: int,
    where: str,
    store: dict[str, SystemOutput | SystemFailure],
) -> SystemOutput:
    """The first questions until one is answered; a reply that cannot be scored, or no
    answer to any of them, stops the run."""
    failures: list[str] = []
    for row in rows[:PROBE_QUESTIONS]:
        try:
            output = await ask(system, row, top_k)
        except SystemOutputError as exc:
            raise CliError(f"{where}: {exc}", DATA_ERROR) from None
        except SystemFailure as exc:
            store[row.id] = exc
            failures.append(f"{row.id}: {exc}")
            continue
        store[row.id] = output
        return output
    tried = len(failures)
    which = f"each of the first {tried} questions" if tried > 1 else "the first question"
    raise CliError(
        f"{where}: the system failed on {which}, so the run stops before asking the rest "
        f"({failures[0]}); is it running, and does it work on one question?",
        DATA_ERROR,
    )


async def settle_systems(
    plan: Sequence[PlannedBenchmark], concurrency: int, state: SystemState
) -> list[PlannedBenchmark]:
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
                planned = _settle(
                    planned,
                    preds.provides,
                    where,
                    "(" + preds.label + ") " + _what_it_returns(preds.provides),
                )
                check = check_predictions(
                    preds,
                    data_label=f"{bench.entry.where} (split {bench.split})",
                    rows=bench.rows,
                    known=known_ids(bench.data),
                    tracks=planned.tracks,
                    allow_missing=system.spec.allow_missing,
                )
                state.checks[(position, planned.setup.name)] = check
                described["check"] = check.report()
                _report_check(preds, bench, check)
            elif bench.rows:
                store: dict[str, SystemOutput | SystemFailure] = {}
                output = await _probe(
                    system, bench.rows, planned.setup.retriever.top_k, where, store
                )
                for row_id, found in store.items():
                    state.probed[(position, planned.setup.name, row_id)] = found
                returned = _what_it_returns(output.provides())
                planned = _settle(planned, output.provides(), where, returned)
                adapter = system.describe().get("adapter")
                _say(
                    f"{planned.setup.name}: {adapter} {returned}; tracks on {bench.name}: "
                    f"{', '.join(planned.tracks)}"
                )
            setups.append(replace(planned, system=described, system_identity=system.identity()))
        settled.append(replace(bench, setups=tuple(setups)))
    return settled


def _report_check(preds: Predictions, bench: PlannedBenchmark, check: PredictionCheck) -> None:
    from lasagna_cli._systems._predictions import quoted

    if check.missing:
        _say(
            f"--predictions {preds.label}: {len(check.missing)} of {len(bench.rows)} questions "
            f"of {bench.name} are not scored (--allow-missing), counted as missing: "
            f"{quoted(sorted(check.missing))}"
        )
    if check.unknown:
        _say(
            f"--predictions {preds.label}: {len(check.unknown)} id(s) are not questions of "
            f"{bench.name}, ignored: {quoted(check.unknown)}"
        )


def _matcher(state: SystemState, position: int, bench: PlannedBenchmark) -> CorpusMatcher:
    matcher = state.matchers.get(position)
    if matcher is None:
        matcher = state.matchers[position] = CorpusMatcher(
            bench.data.corpus, titled=bench.data.kind == "beir"
        )
    return matcher


async def system_sections(
    task: Task,
    position: int,
    state: SystemState,
    *,
    judge: LLM | None,
    rubric: Rubric | None,
) -> dict[str, Any]:
    """The task record's system part: retrieval and generation sections, or `missing`."""
    from lasagna_cli._run_tasks import retrieval_metrics

    planned, row, bench = task.planned, task.row, task.bench
    name = planned.setup.name
    system = state.systems[name]
    if system.predictions is not None:
        check = state.checks[(position, name)]
        if row.id in check.missing:
            return {"missing": check.missing[row.id]}
        output = check.outputs[row.id]
    else:
        probed = state.probed.pop((position, name, row.id), None)
        if isinstance(probed, SystemFailure):
            raise probed
        output = (
            probed if probed is not None else await ask(system, row, planned.setup.retriever.top_k)
        )
    sections: dict[str, Any] = {}
    if system.predictions is None:
        sections["system"] = {"latency_s": round(output.latency_s, 6)}
    if "retrieval" in planned.tracks:
        if output.retrieved is None:
            raise SystemOutputError(
                f'{system.spec.label} gave no ranking ("retrieved") for question {row.id!r}, '
                "which the retrieval track needs"
            )
        matched = match_ranking(output.retrieved, _matcher(state, position, bench))
        depth = len(matched.ids)
        section: dict[str, Any] = {
            # The order is the system's; scores are rank-derived (depth, depth - 1, ...).
            "ranking": [[doc, float(depth - i)] for i, doc in enumerate(matched.ids)],
            "metrics": retrieval_metrics(row, matched.ids, matched.texts, planned.setup.retriever),
        }
        if matched.unmatched:
            section["unmatched"] = matched.unmatched
        if matched.duplicates:
            section["duplicates_dropped"] = matched.duplicates
        sections["retrieval"] = section
    if planned.generation_mode == "system":
        if output.answer is None:
            raise SystemOutputError(
                f'{system.spec.label} gave no "answer" for question {row.id!r}, which the '
                "generation track needs"
            )
        sections["generation"] = await score_system_answer(output, row, judge=judge, rubric=rubric)
    return sections


async def score_system_answer(
    output: SystemOutput,
    row: BenchmarkRow,
    *,
    judge: LLM | None,
    rubric: Rubric | None,
) -> dict[str, Any]:
    """The system's answer scored as the built-in generator's is (EM, F1, refusals, judge)."""
    from lasagna_cli._generation import answer_fields, judge_grade

    assert output.answer is not None
    prediction = output.answer.strip()
    return {
        "mode": "system",
        **answer_fields(prediction, row),
        "input_tokens": 0,
        "output_tokens": 0,
        "latency_s": round(output.latency_s, 6),
        "judge": await judge_grade(prediction, row, judge, rubric),
    }
