"""DATASETS.json: dataset -> question -> {"input": ..., "output"?: ...}.

`output` is absent (free-form, nothing to grade against), a string or a list of strings
(free-form with reference answers: EM and F1), or a multiple-choice question:
`{"type": "MCQ", "options": {"a": "...", "b": "..."}, "answer"?: "b"}`.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from lasagna_cli.engine._data import Dataset, Question
from lasagna_cli.engine._errors import EngineError, EngineUsageError, did_you_mean
from lasagna_cli.engine.kag._files import is_component_name, suggest_name
from lasagna_metrics import parse_json

_QUESTION_KEYS = ("input", "output")
_MCQ_KEYS = ("type", "options", "answer")


Datasets = dict[str, dict[str, Question]]


def _problem(path: Path, where: str, message: str) -> EngineError:
    return EngineError(f"{path}: {where}: {message}")


def _parse_output(path: Path, where: str, output: Any) -> dict[str, Any]:
    if isinstance(output, str):
        return {"references": (output,)}
    if isinstance(output, list):
        if not output or not all(isinstance(item, str) for item in output):
            raise _problem(
                path,
                where,
                "expected `output` to be a non-empty list of reference answers "
                f"(strings), found {json.dumps(output)[:80]}",
            )
        return {"references": tuple(output)}
    if not isinstance(output, dict):
        raise _problem(
            path,
            where,
            "expected `output` to be a reference answer (a string or list of "
            'strings) or {"type": "MCQ", "options": {...}, "answer": "..."}, found '
            f"{type(output).__name__}",
        )
    for key in output:
        if key not in _MCQ_KEYS:
            raise _problem(
                path,
                where,
                f"unknown key `output.{key}`{did_you_mean(key, _MCQ_KEYS)}; an MCQ "
                "output has type, options and an optional answer",
            )
    kind = output.get("type")
    if not isinstance(kind, str) or kind.upper() != "MCQ":
        raise _problem(path, where, f'expected `output.type` to be "MCQ", found {kind!r}')
    options = output.get("options")
    if not isinstance(options, dict) or not options:
        raise _problem(
            path,
            where,
            "expected `output.options` to be a non-empty object such as "
            '{"a": "Vitamin A", "b": "Vitamin C"}',
        )
    for option_id, text in options.items():
        if not option_id.strip() or not isinstance(text, str):
            raise _problem(
                path, where, f"option {option_id!r}: expected a non-empty id and a string text"
            )
    answer = output.get("answer")
    if answer is not None:
        ids = {i.strip().casefold(): i for i in options}
        if not isinstance(answer, str) or answer.strip().casefold() not in ids:
            raise _problem(
                path,
                where,
                f"`output.answer` {answer!r} is not one of the option ids {', '.join(options)}",
            )
        answer = ids[answer.strip().casefold()]
    return {"options": dict(options), "answer": answer}


def parse_datasets(data: Any, path: Path) -> Datasets:
    """Check and convert the parsed JSON; the first problem raises an EngineError naming it."""
    if not isinstance(data, dict):
        raise EngineError(
            f"{path}: expected an object of datasets (dataset -> question -> "
            f'{{"input": ...}}), found {type(data).__name__}'
        )
    datasets: Datasets = {}
    for dataset, questions in data.items():
        if not is_component_name(dataset):
            raise _problem(
                path,
                f"dataset {dataset!r}",
                "expected a component name (lowercase letters, "
                f"digits and hyphens), e.g. {suggest_name(dataset)!r}; rename the key",
            )
        if not isinstance(questions, dict):
            raise _problem(
                path,
                f"dataset {dataset!r}",
                "expected an object of questions "
                f'(question -> {{"input": ...}}), found {type(questions).__name__}',
            )
        parsed: dict[str, Question] = {}
        for question, body in questions.items():
            where = f"dataset {dataset!r}, question {question!r}"
            if not is_component_name(question):
                raise _problem(
                    path,
                    where,
                    "expected a component name (lowercase letters, digits and "
                    f"hyphens), e.g. {suggest_name(question)!r}; rename the key",
                )
            if not isinstance(body, dict):
                raise _problem(
                    path,
                    where,
                    f'expected {{"input": "...", "output"?: ...}}, found {type(body).__name__}',
                )
            for key in body:
                if key not in _QUESTION_KEYS:
                    raise _problem(
                        path,
                        where,
                        f"unknown key {key!r}{did_you_mean(key, _QUESTION_KEYS)}; "
                        "a question has `input` and an optional `output`",
                    )
            text = body.get("input")
            if not isinstance(text, str) or not text.strip():
                raise _problem(
                    path,
                    where,
                    f"expected `input` to be a non-empty string, found {json.dumps(text)[:80]}",
                )
            extra = _parse_output(path, where, body["output"]) if "output" in body else {}
            options = extra.get("options")
            parsed[question] = Question(
                id=question,
                text=text,
                references=extra.get("references", ()),
                options=options,
                correct_option=extra.get("answer"),
                metadata={"dataset": dataset, "question": question, "options": options},
            )
        datasets[dataset] = parsed
    if not any(datasets.values()):
        raise EngineError(f"{path}: holds no question; add at least one dataset with questions")
    return datasets


def load_datasets(path: Path) -> Datasets:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise EngineUsageError(f"datasets file not found: {path}") from None
    except IsADirectoryError:
        raise EngineUsageError(f"expected a datasets JSON file, found a folder: {path}") from None
    try:
        data = parse_json(raw, object_pairs_hook=_no_duplicate_keys)
    except _DuplicateKey as exc:
        raise EngineError(
            f"{path}: the key {exc.args[0]!r} appears twice in one object (JSON readers keep "
            "only the last); give each dataset, question and field once"
        ) from None
    except ValueError as exc:
        raise EngineError(f"{path}: not valid JSON ({exc}); fix the file") from None
    return parse_datasets(data, path)


class _DuplicateKey(ValueError):
    pass


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)  # in C; only an object with a repeated key is looked at in Python
    if len(found) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return found


def dataset_of(question: Question) -> str:
    """The DATASETS.json key a question belongs to."""
    return str(question.metadata["dataset"])


def as_datasets(datasets: Datasets) -> list[Dataset]:
    """The file's data sets as the engine runs them: no corpus (a setup brings its
    database), each question's system id `<dataset>/<question>`."""
    found = []
    for name, questions in datasets.items():
        blob = json.dumps(
            [
                [q.id, q.text, dict(q.options or {}), q.correct_option, list(q.references)]
                for q in questions.values()
            ],
            ensure_ascii=False,
        )
        found.append(
            Dataset(
                name=name,
                revision="sha256:" + hashlib.sha256(blob.encode()).hexdigest(),
                kind="kag",
                split="",
                questions=tuple(questions.values()),
                id_prefix=f"{name}/",
            )
        )
    return found
