"""`--predictions PRED.jsonl`: outputs produced elsewhere, scored like any system's.

One JSON object per line:

    {"id": "q01", "answer": "wide, flat pasta sheets", "retrieved": ["lasagna", "ragu"]}

- `id` (a string or a number): a question of the data, as the data names it.
- `answer` (optional): the system's answer; "" is an answer (a refusal).
- `retrieved` (optional): the ranking, best first: document ids or passage texts, or
  objects with `id` and/or `text` (see `_output`).
- `metadata` (optional): anything; kept out of the scoring.

Any other field is an error with a did-you-mean.

`--predictions-from-data` reads the same outputs from the data file itself: the system's
answer and retrieved passages a RAGAS or DeepEval file records beside each question
(`lasagna_synth.load_data_and_outputs`); the passages are texts, matched to the corpus by
their words as a predictions file's texts are. A row that records no output has no
prediction. The file is checked against the questions
the run asks before anything runs: a question with no prediction, an id the data does not
have, and an id given twice are errors that name them; with --allow-missing the questions
without a (single) prediction are counted and reported, never scored, and unknown ids are
ignored and counted.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lasagna_cli.engine._errors import EngineError, EngineUsageError, did_you_mean
from lasagna_cli.engine.systems._errors import SystemOutputError
from lasagna_cli.engine.systems._output import Retrieved, SystemOutput, ranking
from lasagna_cli.engine.systems._spec import SystemSpec
from lasagna_metrics import parse_json

if TYPE_CHECKING:
    from lasagna_cli.engine._data import Question

FIELDS = ("id", "answer", "retrieved", "metadata")
SHOWN = 5


@dataclass(frozen=True)
class Prediction:
    id: str
    line: int
    output: SystemOutput


@dataclass(frozen=True)
class Predictions:
    label: str
    sha256: str
    by_id: Mapping[str, Sequence[Prediction]]
    provides: frozenset[str]
    """The tracks some row has a field for: "generation" (answer), "retrieval" (retrieved)."""

    def describe(self) -> dict[str, Any]:
        return {"rows": sum(len(p) for p in self.by_id.values()), "sha256": self.sha256}


def quoted(ids: Iterable[str], k: int = SHOWN) -> str:
    listed = list(ids)
    shown = ", ".join(f'"{i}"' for i in listed[:k])
    return shown + (f" and {len(listed) - k} more" if len(listed) > k else "")


def load_predictions(spec: SystemSpec) -> Predictions:
    """Read and check the file's rows; DataError lists every bad row."""
    from lasagna_synth import DataError

    assert spec.path is not None
    if spec.from_data:
        return outputs_in_data(spec)
    label = spec.target
    try:
        raw = spec.path.read_bytes()
    except FileNotFoundError:
        raise EngineUsageError(
            f"--predictions {label}: no such file; give a JSONL file with one "
            '{"id": ..., "answer": ..., "retrieved": [...]} object per line'
        ) from None
    except OSError as exc:
        raise EngineUsageError(f"--predictions {label}: cannot read it ({exc.strerror})") from None
    problems: list[str] = []
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(
            label, [f"{label}: not UTF-8 text (byte {exc.start}); save it as UTF-8"]
        ) from None
    from lasagna_cli.engine.systems._trec import is_trec_run, read_trec_run

    if is_trec_run(text):  # a TREC run file: rankings only (the retrieval track)
        rankings = {
            qid: [Prediction(qid, line, SystemOutput(None, ranking(docs, f"{label} {qid}")))]
            for qid, (line, docs) in read_trec_run(label, text).items()
        }
        digest = hashlib.sha256(raw).hexdigest()
        return Predictions(label, digest, rankings, frozenset({"retrieval"}))
    by_id: dict[str, list[Prediction]] = {}
    provides: set[str] = set()
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        prediction = _parse_line(label, number, line, problems)
        if prediction is not None:
            by_id.setdefault(prediction.id, []).append(prediction)
            provides |= prediction.output.provides()
    if not problems and not by_id:
        problems.append(f"{label}: the file has no predictions")
    if problems:
        raise DataError(label, problems)
    return Predictions(label, hashlib.sha256(raw).hexdigest(), by_id, frozenset(provides))


def outputs_in_data(spec: SystemSpec) -> Predictions:
    """The outputs the data file records, per row (`--predictions-from-data`)."""
    from lasagna_synth import load_data_and_outputs

    assert spec.path is not None
    data, outputs = load_data_and_outputs(spec.path, format=spec.data_format)
    label = spec.target
    if not outputs:
        raise EngineError(
            f"--predictions-from-data: {label} records no system outputs (RAGAS "
            "`response`/`answer` and `retrieved_contexts`/`contexts`, DeepEval `actual_output` "
            "and `retrieval_context`); give them with --predictions FILE, or run the built-in "
            "BM25 without the flag"
        )
    position = {row.id: number for number, row in enumerate(data.rows(), start=1)}
    by_id: dict[str, list[Prediction]] = {}
    provides: set[str] = set()
    for row_id, recorded in outputs.items():
        retrieved = None
        if recorded.retrieved is not None:
            # Passage texts by the file's meaning: matched to the corpus by their words only.
            retrieved = tuple(Retrieved((), text) for text in recorded.retrieved)
        output = SystemOutput(answer=recorded.answer, retrieved=retrieved)
        by_id[row_id] = [Prediction(row_id, position.get(row_id, 0), output)]
        provides |= output.provides()
    digest = data.revision.partition(":")[2] or data.revision
    return Predictions(label, digest, by_id, frozenset(provides))


def _parse_line(label: str, number: int, line: str, problems: list[str]) -> Prediction | None:
    where = f"{label} line {number}"
    try:
        record = parse_json(line)
    except json.JSONDecodeError as exc:
        problems.append(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})")
        return None
    if not isinstance(record, dict):
        problems.append(f"{where}: must be a JSON object, got {type(record).__name__}")
        return None
    raw_id = record.get("id")
    row_id = "" if isinstance(raw_id, bool) or not isinstance(raw_id, str | int) else str(raw_id)
    row_id = row_id.strip()
    if row_id:
        where = f'{where} (id "{row_id}")'
    bad = False
    for key in record:
        if key not in FIELDS:
            problems.append(
                f'{where}: unknown field "{key}"{did_you_mean(key, FIELDS)}; the fields are '
                f"{', '.join(FIELDS)}"
            )
            bad = True
    if raw_id is None or isinstance(raw_id, bool) or not isinstance(raw_id, str | int):
        problems.append(f'{where}: field "id" must be a string or a number matching a question')
        return None
    if not row_id:
        problems.append(f'{where}: field "id" is empty')
        return None
    answer = record.get("answer")
    if answer is not None and (
        isinstance(answer, bool) or not isinstance(answer, str | int | float)
    ):
        problems.append(f'{where}: field "answer" must be a string, got {type(answer).__name__}')
        bad = True
    retrieved = None
    if record.get("retrieved") is not None:
        try:
            retrieved = ranking(record["retrieved"], f'{where}: field "retrieved"')
        except SystemOutputError as exc:
            problems.append(str(exc))
            bad = True
    if answer is None and "retrieved" not in record and not bad:
        problems.append(f'{where}: give "answer" and/or "retrieved"')
        bad = True
    if bad:
        return None
    return Prediction(
        row_id,
        number,
        SystemOutput(answer=None if answer is None else str(answer), retrieved=retrieved),
    )


# Why a question is left out (--allow-missing): the text its task file records, and how a
# run's closing line counts it.
NO_PREDICTION = "no prediction"
_REPEATED = re.compile(r"\d+ predictions \(lines [\d, ]+\)")
_LACKING = re.compile(r'no "(\w+)"')


def _repeated(found: Sequence[Prediction]) -> str:
    return f"{len(found)} predictions (lines {', '.join(str(p.line) for p in found)})"


def _lacking(name: str) -> str:
    return f'no "{name}"'


def count_reasons(reasons: Iterable[str]) -> str:
    """How many questions were left out for each reason, in a run's closing line:
    '1 with no prediction, 1 whose id appears more than once, 1 with no "answer"'."""
    counts: dict[tuple[int, str], int] = {}
    for reason in reasons:
        lacking = _LACKING.fullmatch(reason)
        if reason == NO_PREDICTION:
            kind = (0, "with no prediction")
        elif _REPEATED.fullmatch(reason):
            kind = (1, "whose id appears more than once")
        elif lacking:
            kind = (2, f'with no "{lacking.group(1)}"')
        else:
            kind = (3, f"left out ({reason})")
        counts[kind] = counts.get(kind, 0) + 1
    return ", ".join(f"{counts[kind]} {kind[1]}" for kind in sorted(counts))


@dataclass
class PredictionCheck:
    outputs: dict[str, SystemOutput] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)
    """Questions not scored, with the reason (only with --allow-missing)."""
    unknown: list[str] = field(default_factory=list)

    def report(self) -> dict[str, Any]:
        return {
            "missing": len(self.missing),
            "missing_ids": sorted(self.missing)[:20],
            "unknown": len(self.unknown),
            "unknown_ids": self.unknown[:20],
        }


def check_predictions(
    predictions: Predictions,
    *,
    data_label: str,
    rows: Sequence[Question],
    known: set[str],
    tracks: Sequence[str],
    allow_missing: bool,
) -> PredictionCheck:
    """Predictions for the run's questions; every gap is an error unless allowed."""
    check = PredictionCheck()
    needs = {"generation": "answer", "retrieval": "retrieved"}
    no_prediction: list[str] = []
    twice: list[str] = []
    lacking: dict[str, list[str]] = {}
    for row in rows:
        found = predictions.by_id.get(row.id, ())
        if not found:
            no_prediction.append(row.id)
            check.missing[row.id] = NO_PREDICTION
            continue
        if len(found) > 1:
            lines = ", ".join(str(p.line) for p in found)
            twice.append(f'id "{row.id}" appears {len(found)} times (lines {lines})')
            check.missing[row.id] = _repeated(found)
            continue
        output = found[0].output
        gaps = [needs[t] for t in tracks if t in needs and t not in output.provides()]
        if gaps:
            for gap in gaps:
                lacking.setdefault(gap, []).append(f"{row.id} (line {found[0].line})")
            check.missing[row.id] = _lacking(gaps[0])
            continue
        check.outputs[row.id] = output
    check.unknown = sorted(i for i in predictions.by_id if i not in known)
    if allow_missing:
        return check
    problems = []
    if no_prediction:
        problems.append(
            f"{len(no_prediction)} question(s) of {data_label} have no prediction: "
            f"{quoted(no_prediction)}"
        )
    if check.unknown:
        at = [f"{i} (line {predictions.by_id[i][0].line})" for i in check.unknown]
        problems.append(
            f"{len(check.unknown)} id(s) are not questions of {data_label}: {quoted(at)}"
        )
    problems += twice
    for name, where in lacking.items():
        track = "generation" if name == "answer" else "retrieval"
        problems.append(
            f'{len(where)} prediction(s) have no "{name}", which the {track} track needs: '
            f"{quoted(where)}; or choose the tracks with --tracks"
        )
    if problems:
        message = [f"--predictions {predictions.label} does not fit {data_label}:"]
        message += [f"  {problem}" for problem in problems]
        message.append(
            "Fix the file, or pass --allow-missing to score the rest (the questions left out "
            "are then counted and reported, never scored)"
        )
        raise EngineError("\n".join(message))
    return check
