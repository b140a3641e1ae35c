"""Reading what SQuAD scoring takes: a dataset's questions, the predictions and the no-answer
probabilities, from parsed JSON or from files, each checked so that a malformed one is a
MetricsError naming the file and the place in it. A question id that is a whole number is
read as its decimal string.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lasagna_metrics._errors import MetricsError
from lasagna_metrics._json import parse_json


@dataclass(frozen=True, slots=True)
class _Question:
    qid: str
    answers: tuple[str, ...]


def _type_name(value: object) -> str:
    return "null" if value is None else type(value).__name__


def _questions(dataset: object, source: str) -> list[_Question]:
    """The questions in file order, with the shape checked at every level."""
    hint = "expected a SQuAD dataset file such as dev-v2.0.json"
    if not isinstance(dataset, Mapping) or not isinstance(dataset.get("data"), list):
        if (
            isinstance(dataset, Mapping)
            and dataset
            and all(isinstance(v, str) for v in dataset.values())
        ):
            raise MetricsError(
                f"{source}: this looks like a predictions file, not a SQuAD dataset; "
                "give the predictions file first, then the dataset"
            )
        found = (
            f"an object with keys {', '.join(str(k)[:30] for k in list(dataset)[:3])}"
            + (", ..." if len(dataset) > 3 else "")
            if isinstance(dataset, Mapping)
            else f"a JSON {_type_name(dataset)}"
        )
        raise MetricsError(f'{source}: {hint} ({{"data": [...]}}), found {found}')
    questions: list[_Question] = []
    for a, article in enumerate(dataset["data"]):
        paragraphs = article.get("paragraphs") if isinstance(article, Mapping) else None
        if not isinstance(paragraphs, list):
            raise MetricsError(
                f'{source}: data[{a}] should hold a "paragraphs" list, found '
                f"{_type_name(paragraphs if isinstance(article, Mapping) else article)}; {hint}"
            )
        for p, paragraph in enumerate(paragraphs):
            qas = paragraph.get("qas") if isinstance(paragraph, Mapping) else None
            if not isinstance(qas, list):
                raise MetricsError(
                    f'{source}: data[{a}].paragraphs[{p}] should hold a "qas" list, found '
                    f"{_type_name(qas)}; {hint}"
                )
            for q, qa in enumerate(qas):
                where = f"data[{a}].paragraphs[{p}].qas[{q}]"
                if not isinstance(qa, Mapping):
                    raise MetricsError(
                        f'{source}: {where} should be an object with a string "id", found '
                        f"{_type_name(qa)}; {hint}"
                    )
                qid = qa.get("id")
                if isinstance(qid, bool) or not isinstance(qid, str | int):
                    found = "no id" if qid is None else json.dumps(qid)[:40]
                    raise MetricsError(
                        f'{source}: {where} should have a string "id" (or a whole number), '
                        f"found {found}; {hint}"
                    )
                qid = str(qid)
                answers = qa.get("answers")
                if not isinstance(answers, list) or not all(
                    isinstance(ans, Mapping) and isinstance(ans.get("text"), str) for ans in answers
                ):
                    raise MetricsError(
                        f'{source}: {where} (id {qid}) should have "answers": a list of '
                        f'{{"text": ...}} objects (empty when unanswerable), found '
                        f"{json.dumps(answers)[:80]}"
                    )
                questions.append(_Question(qid, tuple(ans["text"] for ans in answers)))
    if not questions:
        raise MetricsError(f"{source}: the dataset holds no questions; {hint}")
    return questions


def _predictions(predictions: object, source: str) -> Mapping[str, str]:
    if isinstance(predictions, Mapping) and "data" in predictions and "version" in predictions:
        raise MetricsError(
            f"{source}: this looks like a SQuAD dataset, not predictions; "
            "give the predictions file first, then the dataset"
        )
    if not isinstance(predictions, Mapping):
        raise MetricsError(
            f'{source}: expected predictions as a JSON object {{"question id": "answer", ...}}, '
            f"found a JSON {_type_name(predictions)}"
        )
    for qid, answer in predictions.items():
        if not isinstance(answer, str):
            raise MetricsError(
                f'{source}: the prediction for "{qid}" should be a string (use "" for no '
                f"answer), found {_type_name(answer)}"
            )
    if not predictions:
        raise MetricsError(f"{source}: holds no predictions")
    return predictions


def _na_probs(na_probs: object, source: str) -> Mapping[str, float]:
    if not isinstance(na_probs, Mapping) or not all(
        isinstance(p, int | float) and not isinstance(p, bool) for p in na_probs.values()
    ):
        raise MetricsError(
            f'{source}: expected {{"question id": probability of no answer, ...}}, '
            f"found a JSON {_type_name(na_probs)} with other values"
        )
    return na_probs


class _DuplicateKey(ValueError):
    pass


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) < len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return found


def _load_json(path: str | Path, what: str, *, unique_keys: bool = False) -> Any:
    """The parsed file; with `unique_keys`, a key given twice in one object is refused (JSON
    readers keep the last silently, so a prediction would be replaced unseen). Datasets are
    read without the check: it would cost a Python call per object of a large file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MetricsError(f"{what} {path}: no such file; check the path") from None
    except IsADirectoryError:
        raise MetricsError(f"{what} {path}: is a folder, expected a JSON file") from None
    except UnicodeDecodeError as exc:
        raise MetricsError(
            f"{what} {path}: not UTF-8 text (byte {exc.start}); expected a JSON file"
        ) from None
    except OSError as exc:
        raise MetricsError(f"{what} {path}: cannot be read ({exc.strerror})") from None
    try:
        return parse_json(text, object_pairs_hook=_refuse_duplicates if unique_keys else None)
    except _DuplicateKey as exc:
        raise MetricsError(
            f"{what} {path}: the key {exc.args[0]!r} appears twice in one object (a JSON "
            "reader keeps only the last); give each question id once"
        ) from None
    except json.JSONDecodeError as exc:
        raise MetricsError(
            f"{what} {path}: not valid JSON ({exc.msg} at line {exc.lineno} column "
            f"{exc.colno}); expected a JSON file"
        ) from None
