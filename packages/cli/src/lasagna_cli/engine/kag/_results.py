"""kag's result files: where a sweep task's record lives and how it looks on disk.

A task's file is `<output>/<dataset>/<question>/<prefix><setup>.json` and holds
`{"ok": {"result": ..., "stats": {...}}}` or `{"error": "..."}`, exactly the two shapes
kag's users parse (`kag stats` reads only those: nothing of lasagna's sits beside `ok` or
`error`). The engine's record is encoded into them: the answer is the `result`; `stats`
has kag's own fields (`prompt`, `retrieval`, `config`, `time`: below, "kag's stats object") and
lasagna's beside them (generation and retrieval time in seconds, tokens, context length,
the retrieved passages, the exact setup) and the record's `task` and `fingerprint`, by
which a resumed sweep knows whether the file is this task's result with these very
settings. A file without a fingerprint (written by kag itself, or by lasagna before 0.2) is
kept as kag keeps it: a file that exists and is not empty is finished.

Also here: kag's own `stats` object (serde's layout), the exact setup recorded with
every file, reading result files as `kag stats` finds them (and what is wrong with a
damaged one), and a run folder's task records read as the same results.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lasagna_cli.engine._data import Question
from lasagna_cli.engine.config._config import Setup
from lasagna_cli.engine.kag._datasets import Datasets
from lasagna_cli.engine.records._records import ANSWER_SECTIONS, TASK_FORMAT
from lasagna_cli.engine.records._store import (
    BATCH_PREFIX,
    Record,
    RunStore,
    TaskKey,
    dump_task_json,
    iter_records,
    task_json,
)
from lasagna_metrics import parse_json
from lasagna_synth import TEMP_PREFIX


def result_path(output: Path, dataset: str, question: str, prefix: str, setup: str) -> Path:
    # One join, not three: pathlib parses each part, and a sweep makes a path per task.
    return output / f"{dataset}/{question}/{prefix}{setup}.json"


class KagStore:
    """The records of a sweep, in kag's layout."""

    batched = False

    def __init__(self, root: Path, prefix: str, setups: Mapping[str, Setup]) -> None:
        self.root = root
        self.prefix = prefix
        # Each setup's description is the same in all its files: encoded once (much of a
        # file's encoding).
        self._described = {name: task_json(describe_setup(setup)) for name, setup in setups.items()}
        self._top_k = {name: setup.top_k for name, setup in setups.items()}
        self._config = {name: kag_config(setup) for name, setup in setups.items()}

    def path(self, task: TaskKey) -> Path:
        return self.at(task.dataset_name, task.item, task.setup_name)

    def at(self, dataset: str, question: str, setup: str) -> Path:
        return result_path(self.root, dataset, question, self.prefix, setup)

    def encode(self, record: Record) -> bytes:
        """`dump_task_json` of the file's content, byte for byte, with the setup's part
        encoded once per setup (the keys of `stats` before "setup" are encoded together,
        then the setup, then "task" and "time": the order `sort_keys` gives)."""
        if record.get("error") is not None:
            return dump_task_json({"error": record["error"]})
        setup = record["task"]["setup"]
        answer = record["generation"]
        retrieval = record.get("retrieval")
        system = answer.get("mode") == "system"
        passages: Any = answer.get("passages")
        if retrieval is not None:
            top = retrieval["ranking"][: self._top_k[setup]]
            passages = [{"id": doc, "score": score} for doc, score in top]
        retrieval_s = retrieval.get("seconds") if retrieval is not None else None
        # kag's `time` is its whole generate(): the retrieval, the prompt and the call.
        total_s = (retrieval_s or 0.0) + float(answer.get("seconds", answer["latency_s"]))
        before_setup = {
            "prompt": answer.get("prompt", answer.get("question", "")),
            "retrieval": None,
            "config": self._config[setup],
            "generation_time_s": answer["latency_s"],
            "retrieval_time_s": retrieval_s,
            "passages": passages,
            "input_tokens": None if system else answer["input_tokens"],
            "output_tokens": None if system else answer["output_tokens"],
            "context_length": answer["context_length"],
            "attempts": None if system else answer["attempts"],
            "cached": bool(answer.get("cached", False)),
            "fingerprint": record["fingerprint"],
        }
        if answer.get("batch"):  # through a batch API: the report prices it at the batch price
            before_setup["batch"] = True
        stats = (
            f'{task_json(before_setup)[:-1]}, "setup": {self._described[setup]}, '
            f'"task": {task_json(record["task"])}, "time": {task_json(duration(total_s))}}}'
        )
        text = f'{{"ok": {{"result": {task_json(answer["prediction"])}, "stats": {stats}}}}}\n'
        return text.encode("utf-8")

    def decode(self, data: Any) -> Record | None:
        return decode_result(data)


def decode_result(data: Any) -> Record | None:
    """A kag result file's content as a record (`answer` and kag's `stats` kept as they
    are), or None when it is neither of kag's two shapes."""
    if not isinstance(data, dict):
        return None
    ok = data.get("ok")
    if isinstance(ok, dict) and isinstance(ok.get("result"), str):
        raw = ok.get("stats")
        stats: dict[str, Any] = raw if isinstance(raw, dict) else {}
        record: Record = {
            "format": TASK_FORMAT,
            "task": stats.get("task"),
            "fingerprint": stats.get("fingerprint"),
            "error": None,
            "generation": {"prediction": ok["result"]},
            "stats": stats,
        }
        if record["fingerprint"] is None:
            record["legacy"] = True
        return record
    if "error" in data:
        return {"error": str(data["error"] or "malformed result file"), "legacy": True}
    return None


# -- kag's stats object -----------------------------------------------------------------------
#
# kag's `stats` object of a result file, in the layout serde gives kag's Rust structs.
#
# kag 0.2 (`src/generation/config.rs`, `src/retrieval/`, `src/cli/generation.rs`) writes an
# ok result as `{"ok": {"result": str, "stats": Stats}}`, where Stats is
#
#     prompt: str                       the prompt sent to the model (one user message)
#     retrieval: null | {"result": str, "stats": {"embedder": {
#         "embedding": {"document": str, "vec": [float]},
#         "database": {"neo4j": {"vertices": int, "relationships": int,
#                                "properties": int, "time": Duration}},
#         "time": Duration}}}
#     config: {"augmented_generation": null | {"retriever": name, "database": name},
#              "provider": name, "model": str, "temperature": float, "tokens": null | int}
#     time: Duration                    the whole generation, retrieval included
#
# and a Duration is serde's `{"secs": u64, "nanos": u32}`. `kag stats` reads the whole
# object (a file it cannot read is left out with a warning), so lasagna writes every field,
# its own keys beside them. kag's only retrieval shape is an embedder over Neo4j; lasagna's
# retrievers (BM25, dense, hybrid) are neither, so their files say `retrieval: null` and keep
# the retrieval in lasagna's own keys (`retrieval_time_s`, `passages`).


NANOS = 1_000_000_000
U64_MAX = 2**64 - 1


def duration(seconds: float) -> dict[str, int]:
    """serde's encoding of a `std::time::Duration` of `seconds` (rounded to nanoseconds)."""
    secs, nanos = divmod(max(0, round(seconds * NANOS)), NANOS)
    return {"secs": secs, "nanos": nanos}


def kag_config(setup: Setup) -> dict[str, Any]:
    """The setup as kag's `Generation` (its `config`): component names, the model id as the
    provider knows it, the temperature sent (lasagna's 0.0 when the setup sets none).

    A setup that is the user's own system names no provider or model; kag has no such
    setup, so its `config` says provider `system` and the system (callable or URL) as the
    model, which is what a reader of the table needs to tell the setups apart.
    """
    if setup.system is not None:
        return {
            "augmented_generation": None,
            "provider": "system",
            "model": setup.system.label.removeprefix("--system "),
            "temperature": 0.0,
            "tokens": None,
        }
    model = setup.generator
    assert model is not None
    augmented = None
    if setup.retriever_name is not None and setup.database is not None:
        augmented = {"retriever": setup.retriever_name, "database": setup.database.name}
    provider = model.provider.name if model.provider is not None else model.name.partition("/")[0]
    return {
        "augmented_generation": augmented,
        "provider": provider,
        "model": model.name.partition("/")[2],
        "temperature": float(model.temperature or 0.0),
        "tokens": model.max_tokens,
    }


# -- reading -----------------------------------------------------------------------------


def nanos_of(value: Any) -> int | None:
    """A serde Duration in nanoseconds, or None when `value` is not one (kag would refuse
    the file)."""
    if not isinstance(value, dict):
        return None
    secs, nanos = value.get("secs"), value.get("nanos")
    if not (isinstance(secs, int) and isinstance(nanos, int) and _count(secs) and _count(nanos)):
        return None
    if secs > U64_MAX or nanos > 2**32 - 1:
        return None
    return secs * NANOS + nanos


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


@dataclass(frozen=True, slots=True)
class KagTiming:
    """What `kag stats` takes from one ok result (`stats/mod.rs`); durations in ns."""

    generation_ns: int | None
    """`stats.time`: the whole generation; None when the file has no kag `time`."""
    context_length: int | None
    """`stats.prompt.len()`: the prompt's length in UTF-8 bytes, as Rust's `str::len`."""
    retrieval: tuple[int, int, int, int] | None
    """The embedder's time and Neo4j's vertices, relationships, properties."""

    @property
    def timed(self) -> tuple[int, int] | None:
        """kag's (time, context length) pair: both or neither (a kag file has both)."""
        if self.generation_ns is None or self.context_length is None:
            return None
        return (self.generation_ns, self.context_length)


def kag_timing(stats: dict[str, Any]) -> KagTiming:
    """kag's figures of an ok result's `stats`, each None where the file lacks it (a file
    lasagna wrote before kag's fields were added has only lasagna's own keys)."""
    prompt = stats.get("prompt")
    context = len(prompt.encode("utf-8", "surrogatepass")) if isinstance(prompt, str) else None
    return KagTiming(nanos_of(stats.get("time")), context, _retrieval(stats.get("retrieval")))


def _retrieval(value: Any) -> tuple[int, int, int, int] | None:
    try:
        embedder = value["stats"]["embedder"]
        neo4j = embedder["database"]["neo4j"]
        counts = [neo4j[k] for k in ("vertices", "relationships", "properties")]
    except (KeyError, TypeError):
        return None
    time = nanos_of(embedder.get("time"))
    if time is None or not all(_count(c) for c in counts):
        return None
    return (time, counts[0], counts[1], counts[2])


# -- the setup recorded -----------------------------------------------------------------------
#
# The exact setup of a sweep task, as recorded with every result file.


def describe_setup(setup: Setup) -> dict[str, Any]:
    """The exact setup, as recorded with every result: names of key variables only."""
    datasets = list(setup.datasets) if setup.datasets is not None else None
    if setup.system is not None:
        return {
            "name": setup.name,
            "system": setup.system.describe(),
            "prompt": setup.prompt.user,
            "datasets": datasets,
        }
    model = setup.generator
    assert model is not None and model.provider is not None
    provider = model.provider.describe()
    if provider["base_url"] is None and model.endpoint is not None:
        provider["base_url"] = model.endpoint  # a built-in provider's server, as used
    return {
        "name": setup.name,
        "provider": provider,
        "model": model.name.partition("/")[2],
        "model_id": model.name,
        "temperature": model.temperature,
        "tokens": model.max_tokens,
        "system_prompt": setup.prompt.system,
        "prompt": setup.prompt.user,
        "datasets": datasets,
        "retriever": _describe_retriever(setup),
        "database": setup.database.describe() if setup.database else None,
    }


def _describe_retriever(setup: Setup) -> dict[str, Any] | None:
    spec = setup.retriever
    if spec is None:
        return None
    described = {"name": setup.retriever_name, "type": spec.kind, "top_k": spec.top_k}
    if spec.uses_vectors:
        described.update({k: v for k, v in spec.to_dict().items() if k not in ("kind", "top_k")})
    return described


# -- reading result files ---------------------------------------------------------------------
#
# kag's result files as `kag stats` finds and reads them:
# `<results>/<dataset>/<question>/<prefix><setup>.json`, and what is wrong with a damaged one.


_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")


def is_kag_name(name: str) -> bool:
    """kag's `ComponentName`: non-empty, lowercase ASCII letters, digits and hyphens."""
    return bool(name) and _NAME_CHARS.issuperset(name)


def setup_of(file_name: str, prefix: str) -> str | None:
    """The setup a result file's name gives (`<prefix><setup>.json`), as kag reads it."""
    if not file_name.endswith(".json") or not file_name.startswith(prefix):
        return None
    setup = file_name[len(prefix) : -len(".json")]
    return setup if is_kag_name(setup) else None


@dataclass(frozen=True, slots=True)
class Recorded:
    """A run folder's MCQ grading as its task record keeps it (it holds no answer key)."""

    keyed: bool
    """The question has an answer (else: kag's "skipped")."""
    choice: str | None
    correct: bool | None


@dataclass(frozen=True, slots=True)
class Result:
    question: Question
    setup: str
    path: Path
    text: str | None
    """The answer, None for an error."""
    error: str | None
    stats: dict[str, Any]
    recorded: Recorded | None = None


Damaged = tuple[Path, str]
"""A file named as a result that is none, and what is wrong with it."""


def json_problem(data: bytes) -> tuple[Any, str | None]:
    """The JSON value of a file's bytes, or what is wrong with them (one phrase)."""
    if not data.strip():
        return None, "empty"
    try:
        return parse_json(data), None
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 (byte {exc.start})"
    except json.JSONDecodeError as exc:
        end = len(data.decode("utf-8", "replace").rstrip())
        # The text ran out: at the end, or inside a string (json names where it began).
        if exc.pos >= end or exc.msg.startswith("Unterminated string"):
            return None, f"truncated (its JSON stops mid-value after {len(data)} bytes)"
        return None, f"not JSON ({exc.msg} at character {exc.pos})"


def read_result(path: Path, question: Question, setup: str) -> Result | str:
    """The result in a file, or what is wrong with the file."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        return f"unreadable ({exc.strerror or exc})"
    value, problem = json_problem(data)
    if problem is not None:
        return problem
    record = decode_result(value)
    if record is None:
        return 'not a result (neither {"ok": {"result": ...}} nor {"error": ...})'
    if record.get("error") is not None:
        return Result(question, setup, path, None, str(record["error"]), {})
    text = str(record["generation"]["prediction"])
    return Result(question, setup, path, text, None, record.get("stats") or {})


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir() and not path.is_symlink()  # kag's file_type(): no symlinks
    except OSError:
        return False


def iter_results(
    datasets: Datasets, results: Path, prefix: str, damaged: list[Damaged] | None = None
) -> Iterator[Result]:
    """Every result file of the datasets' questions, in dataset, question, file order, as
    kag finds them: `<results>/<dataset>/<question>/<prefix><setup>.json`, regular files,
    `<setup>` a component name (anything else is not a result file and is passed over);
    the damaged ones go to `damaged`."""
    for dataset, questions in datasets.items():
        if not _is_dir(results / dataset):
            continue
        for question in questions.values():
            folder = results / dataset / question.id
            if not _is_dir(folder):
                continue
            with os.scandir(folder) as entries:
                files = sorted(
                    (e.name, setup)
                    for e in entries
                    if e.is_file(follow_symlinks=False)
                    and (setup := setup_of(e.name, prefix)) is not None
                )
            for name, setup in files:
                found = read_result(folder / name, question, setup)
                if isinstance(found, Result):
                    yield found
                elif damaged is not None:
                    damaged.append((folder / name, found))


def dataset_folders(results: Path) -> int:
    """kag's "Datasets": the folders under the results root whose name is a component
    name, whatever they hold."""
    try:
        with os.scandir(results) as entries:
            return sum(
                1 for e in entries if e.is_dir(follow_symlinks=False) and is_kag_name(e.name)
            )
    except OSError:
        return 0


# -- a run folder's task records as results ---------------------------------------------------
#
# kag's `stats` over a run folder of `benchmark run` or the staged pipeline: the answers
# in its task records, as the stats of a sweep's result files.
#
# Every answered task is a result of its setup (closed-book answers of a setup that also
# answers from passages are the setup `<setup>:closed-book`); its question is as the record
# keeps it (text, references, unanswerable), so EM/F1 and judge grades follow the same rules
# as everywhere. An MCQ record keeps lasagna's grading (`choice`, `correct`), not the answer
# key, which is enough for kag's (`_stats.kag_correct`). A failed task's record names no
# question type: it takes that of another setup's record of the same question, else it is an
# MCQ's error where every question answered in its dataset is an MCQ with an answer.
#
# A task file or batch line that cannot be read (truncated by a full disk, say) is no
# record; `damaged_records` names each, so that stats never passes such a folder as clean.


def is_run_folder(folder: Path) -> bool:
    return (folder / "manifest.json").is_file() and (folder / "tasks").is_dir()


def run_folder_results(folder: Path) -> tuple[Datasets, list[Result]]:
    """The datasets (as their records name them) and every answer of the folder's tasks."""
    store = RunStore(folder)
    datasets: Datasets = {}
    results: list[Result] = []
    for path, record in iter_records(store):
        if not isinstance(record.get("task"), dict):
            continue
        task = record["task"]
        dataset, item, setup = str(task["dataset"]), str(task["item"]), str(task["setup"])
        error = record.get("error")
        answered = [n for n in ANSWER_SECTIONS if isinstance(record.get(n), dict)]
        if error is None and not answered:
            continue  # retrieval only: nothing for these stats
        for name in answered or ["generation"]:
            section = record.get(name) or {}
            question = Question(
                id=item,
                text=str(section.get("question") or ""),
                references=tuple(section.get("references") or ()),
                unanswerable=bool(section.get("unanswerable")),
                metadata={"dataset": dataset, "question": item},
            )
            known = datasets.setdefault(dataset, {})
            if item not in known or (question.references and not known[item].references):
                known[item] = question
            label = setup if name == "generation" or len(answered) == 1 else f"{setup}:{name}"
            text = None if error is not None else str(section.get("prediction", ""))
            recorded = None
            if "choice" in section:
                correct = section.get("correct")
                recorded = Recorded(correct is not None, section.get("choice"), correct)
            stats = {
                "generation_time_s": section.get("latency_s"),
                "context_length": section.get("context_length"),
                "retrieval_time_s": (record.get("retrieval") or {}).get("seconds"),
            }
            results.append(Result(question, label, path, text, error, stats, recorded))
    return datasets, _typed_errors(results)


def _typed_errors(results: list[Result]) -> list[Result]:
    kinds = {
        (r.question.metadata["dataset"], r.question.id): r.recorded
        for r in results
        if r.recorded is not None
    }
    mcq_only: dict[str, bool] = {}
    for r in results:
        if r.text is not None:
            dataset = r.question.metadata["dataset"]
            keyed = r.recorded is not None and r.recorded.keyed
            mcq_only[dataset] = mcq_only.get(dataset, True) and keyed
    out = []
    for r in results:
        if r.text is None and r.recorded is None:
            dataset = r.question.metadata["dataset"]
            known = kinds.get((dataset, r.question.id))
            if known is not None:
                r = dataclasses.replace(r, recorded=Recorded(known.keyed, None, None))
            elif mcq_only.get(dataset, False):
                r = dataclasses.replace(r, recorded=Recorded(True, None, None))
        out.append(r)
    return out


def damaged_records(folder: Path) -> list[Damaged]:
    """Every task file and batch line under `tasks/` that is not a whole record."""
    store = RunStore(folder)
    damaged: list[Damaged] = []
    for setup_folder in sorted(p for p in (folder / "tasks").glob("*/*") if p.is_dir()):
        for name in sorted(os.listdir(setup_folder)):
            path = setup_folder / name
            if name.startswith(TEMP_PREFIX) or not path.is_file():
                continue
            if name.endswith(".json"):
                value, problem = json_problem(path.read_bytes())
                if problem is None and store.decode(value) is None:
                    problem = 'not a task record (no "format": "lasagna-task/...")'
                if problem is not None:
                    damaged.append((path, problem))
            elif name.startswith(BATCH_PREFIX) and name.endswith(".jsonl"):
                damaged += _damaged_lines(store, path)
    return damaged


def _damaged_lines(store: RunStore, path: Path) -> list[Damaged]:
    data = path.read_bytes()
    found: list[Damaged] = []
    for number, line in enumerate(data.splitlines(), 1):
        value, problem = json_problem(line)
        if problem is None and not (
            isinstance(value, dict) and store.decode(value.get("record")) is not None
        ):
            problem = 'not a {"file", "record"} line'
        if problem is not None:
            found.append((path, f"line {number}: {problem}"))
    if data and not data.endswith(b"\n") and not found:
        found.append((path, "truncated (its last line has no end)"))
    return found
