"""DATASETS.json: dataset -> question -> {"input": ..., "output"?: ...}.

`output` is absent (free-form, nothing to grade against), a string or a list of strings
(free-form with reference answers: EM and F1), or a multiple-choice question:
`{"type": "MCQ", "options": {"a": "...", "b": "..."}, "answer"?: "b"}`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lasagna_cli._errors import CliError, did_you_mean
from lasagna_cli._sweep._names import is_component_name, suggest_name

_QUESTION_KEYS = ("input", "output")
_MCQ_KEYS = ("type", "options", "answer")


@dataclass(frozen=True, slots=True)
class Question:
    dataset: str
    id: str
    input: str
    options: dict[str, str] | None = None
    """The MCQ options in file order; None for a free-form question."""
    answer: str | None = None
    """The correct MCQ option id, when the file gives it."""
    references: tuple[str, ...] = ()
    """Reference answers of a free-form question."""

    @property
    def is_mcq(self) -> bool:
        return self.options is not None


Datasets = dict[str, dict[str, Question]]


def _problem(path: Path, where: str, message: str) -> CliError:
    return CliError(f"{path}: {where}: {message}")


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
    """Check and convert the parsed JSON; the first problem raises a CliError naming it."""
    if not isinstance(data, dict):
        raise CliError(
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
            parsed[question] = Question(dataset=dataset, id=question, input=text, **extra)
        datasets[dataset] = parsed
    if not any(datasets.values()):
        raise CliError(f"{path}: holds no question; add at least one dataset with questions")
    return datasets


def load_datasets(path: Path) -> Datasets:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise CliError(f"datasets file not found: {path}", 2) from None
    except IsADirectoryError:
        raise CliError(f"expected a datasets JSON file, found a folder: {path}", 2) from None
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise CliError(f"{path}: not valid JSON ({exc}); fix the file") from None
    return parse_datasets(data, path)
