"""Reading a JSONL benchmark file: one JSON object per line, one row each.

Only `question` is required. `answer` or `answers` (a string, a number or a list of them;
EM and F1 accept any, the first is the one a judge sees); `context` or `contexts` (a string
or a list); `id` (a string or a number; default `row<line number>`; unique);
`expected_docs` (names for the passages, same order and length as `contexts`); `evidence`
(where the passages sit in the corpus documents: a list of `{"doc": <path in the corpus
folder>, "start": <character offset>, "end": ..., "sha256": <of the document's text>}`,
as `synthesize` writes it); `corpus` (the folder of documents the rows were written from,
relative to the file's folder; every row names the same one); `metadata`
(an object; `metadata.unanswerable: true` marks a question with no answer, and then the row
has no answer, `"answer": ""` or `"answers": []`). Any other field is an error with a
did-you-mean, so a typo never silently leaves rows unanswered; a did-you-mean names only a
field of the same meaning (`retrieved_contexts`, RAGAS's system output, is never "did you
mean contexts"), see `_format_foreign`. (lasagna-rag takes `answer`
as a string and `answers` as a list only, and refuses `"answers": []`.)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from lasagna_synth._evidence import EvidenceSpan
from lasagna_synth._format_foreign import LASAGNA, field_hint
from lasagna_synth._format_reading import _Draft, _jsonl_records, json_type

JSONL_FIELDS = tuple(LASAGNA.fields)


def _parse_jsonl(label: str, text: str, problems: list[str]) -> list[_Draft]:
    drafts = []
    for number, record in _jsonl_records(label, text, problems):
        draft = _draft_from_record(record, f"{label} row {number}", number, problems)
        if draft is not None:
            drafts.append(draft)
    return drafts


def _draft_from_record(
    record: dict[str, Any], where: str, number: int, problems: list[str]
) -> _Draft | None:
    """One JSONL object as a row, or None with its problems added."""
    before = len(problems)

    def bad(message: str) -> None:
        problems.append(f"{where}: {message}")

    for key in sorted(set(record) - set(JSONL_FIELDS)):
        hint = field_hint(key, LASAGNA)
        bad(f'unknown field "{key}"{hint}; put fields of your own under "metadata"')

    question = _text(record, "question", bad, required=True)
    row_id = _identifier(record, bad) or f"row{number}"

    metadata = record.get("metadata", {})
    if not isinstance(metadata, dict):
        bad(f'field "metadata" must be an object, got {json_type(metadata)}')
        metadata = {}
    unanswerable = metadata.get("unanswerable", False)
    if not isinstance(unanswerable, bool):
        bad(f'field "metadata.unanswerable" must be true or false, got {json_type(unanswerable)}')
        unanswerable = False

    answers: list[str] = []
    if "answer" in record and "answers" in record:
        bad('give "answer" or "answers", not both')
    for key in ("answer", "answers"):
        if key not in record:
            continue
        if record[key] in ("", []) and unanswerable:
            continue  # SQuAD v2 writes an unanswerable question's answer as "" (or no answers)
        if record[key] == "":
            bad(
                f'field "{key}" is empty; leave it out, or mark a question with no answer '
                'with "metadata": {"unanswerable": true}'
            )
            continue
        answers = _answer_list(record, key, bad)
    if unanswerable and answers:
        bad('"metadata.unanswerable" is true, so the row cannot also have an answer')

    contexts: list[str] = []
    if "context" in record and "contexts" in record:
        bad('give "context" or "contexts", not both')
    before_contexts = len(problems)
    for key in ("context", "contexts"):
        if key in record:
            contexts = _text_list(record, key, bad, allow_empty=True)
    contexts_ok = len(problems) == before_contexts

    names: list[str] = []
    if "expected_docs" in record:
        names = _text_list(record, "expected_docs", bad, allow_empty=False)
        if names and not contexts and contexts_ok:
            bad(
                '"expected_docs" needs "contexts": contexts[i] is the text of '
                "expected_docs[i]; for judgments over a separate corpus, use a BEIR folder"
            )
        elif names and contexts_ok and len(names) != len(contexts):
            bad(
                f'"expected_docs" names {len(names)} documents but "contexts" has '
                f"{len(contexts)} passages; they pair up in order"
            )
        elif len(set(names)) != len(names):
            bad('"expected_docs" names the same document twice')

    evidence = _evidence(record, bad) if "evidence" in record else []
    corpus = _text(record, "corpus", bad) if "corpus" in record else None

    if len(problems) > before or question is None:
        return None
    return _Draft(
        number=number,
        id=row_id,
        question=question,
        answers=answers,
        contexts=contexts,
        doc_names=names,
        unanswerable=unanswerable,
        metadata={k: v for k, v in metadata.items() if k != "unanswerable"},
        evidence=evidence,
        corpus=corpus,
    )


def _evidence(record: dict[str, Any], bad: Callable[[str], None]) -> list[EvidenceSpan]:
    """`evidence`: a list of {doc, start, end, sha256?} spans, start before end."""
    value = record["evidence"]
    if not isinstance(value, list):
        bad(f'field "evidence" must be a list of spans, got {json_type(value)}')
        return []
    spans: list[EvidenceSpan] = []
    for index, item in enumerate(value, start=1):
        where = f'field "evidence" item {index}'
        if not isinstance(item, dict):
            bad(f'{where} must be an object {{"doc", "start", "end"}}, got {json_type(item)}')
            continue
        unknown = sorted(set(item) - {"doc", "start", "end", "sha256"})
        doc, start, end, digest = (item.get(k) for k in ("doc", "start", "end", "sha256"))
        if unknown:
            bad(f'{where}: unknown key "{unknown[0]}"; a span has doc, start, end and sha256')
        elif not isinstance(doc, str) or not doc:
            bad(f'{where}: "doc" must be the document\'s path in the corpus folder')
        elif any(isinstance(n, bool) or not isinstance(n, int) or n < 0 for n in (start, end)):
            bad(f'{where}: "start" and "end" must be character offsets (whole numbers >= 0)')
        elif end <= start:  # type: ignore[operator]
            bad(f'{where}: "end" ({end}) must be after "start" ({start})')
        elif digest is not None and not isinstance(digest, str):
            bad(f'{where}: "sha256" must be a string, got {json_type(digest)}')
        else:
            spans.append(EvidenceSpan(doc, int(start), int(end), digest or ""))  # type: ignore[arg-type]
    return spans


def _text(
    record: dict[str, Any], key: str, bad: Callable[[str], None], *, required: bool = False
) -> str | None:
    if key not in record:
        if required:
            bad(f'field "{key}" is missing')
        return None
    value = record[key]
    if not isinstance(value, str):
        bad(f'field "{key}" must be a string, got {json_type(value)}')
        return None
    if not value.strip():
        bad(f'field "{key}" is empty')
        return None
    return value.strip()


def _answer_list(record: dict[str, Any], key: str, bad: Callable[[str], None]) -> list[str]:
    """A string, a number, or a list of them; numbers become their JSON text."""
    value = record[key]
    items = value if isinstance(value, list) else [value]
    if not items:
        bad(f'field "{key}" is an empty list')
        return []
    out: list[str] = []
    for index, item in enumerate(items, start=1):
        where = f'field "{key}"' + (f" item {index}" if isinstance(value, list) else "")
        if isinstance(item, bool) or not isinstance(item, str | int | float):
            bad(f"{where} must be a string or a number, got {json_type(item)}")
        elif not str(item).strip():
            bad(f"{where} is empty")
        else:
            out.append(item.strip() if isinstance(item, str) else json.dumps(item))
    return out if len(out) == len(items) else []


def _text_list(
    record: dict[str, Any], key: str, bad: Callable[[str], None], *, allow_empty: bool
) -> list[str]:
    """A string or a list of strings."""
    value = record[key]
    if isinstance(value, str):
        if not value.strip():
            bad(f'field "{key}" is empty')
            return []
        return [value.strip()]
    if not isinstance(value, list):
        bad(f'field "{key}" must be a string or a list of strings, got {json_type(value)}')
        return []
    if not value and not allow_empty:
        bad(f'field "{key}" is an empty list')
        return []
    out: list[str] = []
    for index, item in enumerate(value, start=1):
        if not isinstance(item, str):
            bad(f'field "{key}" item {index} must be a string, got {json_type(item)}')
        elif not item.strip():
            bad(f'field "{key}" item {index} is empty')
        else:
            out.append(item.strip())
    return out if len(out) == len(value) else []


def _identifier(record: dict[str, Any], bad: Callable[[str], None]) -> str | None:
    if "id" not in record:
        return None
    value = record["id"]
    if isinstance(value, bool) or not isinstance(value, str | int):
        found = json.dumps(value) if isinstance(value, float) else json_type(value)
        bad(f'field "id" must be a string or a whole number, got {found}')
        return None
    text = str(value).strip()
    if not text:
        bad('field "id" is empty')
        return None
    return text
