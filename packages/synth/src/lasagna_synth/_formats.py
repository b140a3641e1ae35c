"""Reading benchmark data: JSONL, CSV, a BEIR folder, or an official SQuAD JSON file.

The formats are lasagna-rag 0.1.0's ("Your own data"), read the same way so a file gets the
same name, rows and passage ids in both tools; where this reader accepts more, it says so:

- JSONL, one object per line. Only `question` is required. `answer` or `answers` (a string,
  a number or a list of them; EM and F1 accept any, the first is the one a judge sees);
  `context` or `contexts` (a string or a list); `id` (a string or a number; default
  `row<line number>`; unique); `expected_docs` (names for the passages, same order and
  length as `contexts`); `metadata` (an object; `metadata.unanswerable: true` marks a
  question with no answer, and then the row has no answer, `"answer": ""` or
  `"answers": []`). Any other field is an error with a did-you-mean, so a typo never
  silently leaves rows unanswered. (lasagna-rag takes `answer` as a string and `answers` as
  a list only, and refuses `"answers": []`.)
- CSV with a header row: `question` (required), `answer`, `contexts`, `id`; several
  passages in one cell separated by `|||`. CSV cannot mark a question unanswerable.
- A BEIR folder: corpus.jsonl, queries.jsonl and qrels/<split>.tsv (three tab-separated
  columns, the header line optional). A score above 0 is relevant and graded scores feed
  nDCG; only queries with a relevant document are asked. Judgments naming a document or
  query the folder does not have are an error (or, on request, dropped and counted).
- An official SQuAD v1.1/v2.0 JSON file (`.json`): one row per question, its paragraph as
  the one context, its answers' texts (de-duplicated in order) as references, and
  `is_impossible` as unanswerable; the article title goes to `metadata.title`. A question
  `id` may be a whole number (Haystack's files): the row's id is its decimal string.
  (lasagna-rag does not read this format; the name is formed by the same rule.)

Rows with contexts are pooled into one corpus: each passage is a document named by
`expected_docs` or `ctx-<12 hex of its sha256>`; a passage several rows share is one
document relevant to each; an unanswerable row's passages join the pool, relevant to none.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lasagna_synth._naming import folder_sha256, passage_id
from lasagna_synth._rows import BenchmarkData, BenchmarkRow
from lasagna_synth._validate import DataError, did_you_mean, examples

CSV_CONTEXT_SEPARATOR = "|||"
DATA_SUFFIXES = (".jsonl", ".csv", ".json")
JSONL_FIELDS = (
    "id",
    "question",
    "answer",
    "answers",
    "context",
    "contexts",
    "expected_docs",
    "metadata",
)
CSV_COLUMNS = ("id", "question", "answer", "contexts")
BEIR_FILES = ("corpus.jsonl", "queries.jsonl")


@dataclass
class _Draft:
    """A row as read, before its passages are pooled into document ids."""

    number: int
    id: str
    question: str
    answers: list[str] = field(default_factory=list)
    contexts: list[str] = field(default_factory=list)
    doc_names: list[str] = field(default_factory=list)
    unanswerable: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)


def load_data(path: str | Path, *, drop_unknown_judgments: bool = False) -> BenchmarkData:
    """Read and validate benchmark data at `path`: a .jsonl, .csv or .json file, or a BEIR
    folder.

    `drop_unknown_judgments`: in a BEIR folder, drop judgments that name a document or query
    the folder does not have (recorded in `notes`) instead of refusing the folder.

    Raises:
        DataError: listing every problem found, each naming its file, row and field.
    """
    given = Path(path).expanduser()
    if not given.exists():
        raise DataError(
            str(path),
            [
                f"{path}: no such file or folder; give a .jsonl, .csv or SQuAD .json file, "
                "or a BEIR folder (corpus.jsonl, queries.jsonl, qrels/test.tsv)"
            ],
        )
    resolved = given.resolve()  # `.` and `folder/` name the folder itself
    if resolved.is_dir():
        return _read_beir(resolved, drop_unknown_judgments)
    suffix = resolved.suffix.lower()
    if suffix not in DATA_SUFFIXES:
        raise DataError(
            resolved.name,
            [
                f"{resolved.name}: cannot read {suffix or 'a file with no extension'} as "
                "benchmark data; use a .jsonl file (one JSON object per line), a .csv file "
                "with a header, an official SQuAD .json file, or a BEIR folder "
                "(corpus.jsonl, queries.jsonl, qrels/test.tsv)"
            ],
        )
    raw = resolved.read_bytes()
    label = resolved.name
    problems: list[str] = []
    text = _decode(label, raw, problems)
    drafts: list[_Draft] = []
    if text is not None:
        if suffix == ".jsonl":
            drafts = _parse_jsonl(label, text, problems)
        elif suffix == ".csv":
            drafts = _parse_csv(label, text, problems)
        else:
            drafts = _parse_squad(label, text, problems)
    if not problems and not drafts:
        problems.append(f"{label}: the file has no rows")
    _check_unique_ids(label, drafts, problems)
    rows, corpus = _pool(label, drafts, problems)
    if problems:
        raise DataError(label, problems)
    return BenchmarkData(
        path=resolved,
        kind="squad" if suffix == ".json" else "jsonl" if suffix == ".jsonl" else "csv",
        sha256=hashlib.sha256(raw).hexdigest(),
        splits={"test": rows},
        corpus=corpus,
        files=(label,),
    )


def _decode(label: str, raw: bytes, problems: list[str]) -> str | None:
    try:
        # utf-8-sig: a spreadsheet's CSV export often starts with a byte-order mark.
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        problems.append(f"{label}: not UTF-8 text (byte {exc.start}); save it as UTF-8")
        return None


def json_type(value: object) -> str:
    """The JSON name of a value's type, for messages about JSON data."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _jsonl_records(
    label: str, text: str, problems: list[str]
) -> Iterator[tuple[int, dict[str, Any]]]:
    # Split on "\n" only: str.splitlines() also breaks at U+2028, U+0085 and other
    # characters that may stand inside a JSON string (MS MARCO's passages have them).
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(
                f"{label} row {number}: not valid JSON ({exc.msg} at column {exc.colno})"
            )
            continue
        if not isinstance(record, dict):
            problems.append(f"{label} row {number}: must be a JSON object, got {json_type(record)}")
            continue
        yield number, record


# --------------------------------------------------------------------------------- JSONL


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
        hint = did_you_mean(key, JSONL_FIELDS)
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
    )


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


# ----------------------------------------------------------------------------------- CSV


def _parse_csv(label: str, text: str, problems: list[str]) -> list[_Draft]:
    try:
        records = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        problems.append(f"{label}: not readable as CSV ({exc})")
        return []
    if not records:
        return []
    header = [cell.strip() for cell in records[0]]
    if "question" not in header:
        shown = ", ".join(f'"{h}"' for h in header) or "nothing"
        problems.append(
            f"{label} row 1: the first row must be a header naming the columns "
            f"({', '.join(CSV_COLUMNS)}); it has {shown}"
        )
        return []
    for column in header:
        if column in CSV_COLUMNS:
            continue
        if column.lower() in ("unanswerable", "metadata"):
            problems.append(
                f'{label} row 1: unknown column "{column}"; CSV cannot mark a question '
                'unanswerable: use a JSONL file with "metadata": {"unanswerable": true}'
            )
        else:
            hint = did_you_mean(column, CSV_COLUMNS)
            problems.append(
                f'{label} row 1: unknown column "{column}"{hint}; the columns are '
                f"{', '.join(CSV_COLUMNS)}"
            )
    for column in sorted({c for c in header if header.count(c) > 1}):
        problems.append(f'{label} row 1: column "{column}" is named twice')
    if problems:
        return []

    drafts: list[_Draft] = []
    # Numbered as a spreadsheet numbers them: the header is row 1.
    for number, cells in enumerate(records[1:], start=2):
        if not any(cell.strip() for cell in cells):
            continue
        where = f"{label} row {number}"
        if len(cells) != len(header):
            cells_found = f"{len(cells)} cell{'s' if len(cells) != 1 else ''}"
            problems.append(f"{where}: has {cells_found}, the header has {len(header)}")
            continue
        record = dict(zip(header, cells, strict=True))
        question = record["question"].strip()
        if not question:
            problems.append(f'{where}: column "question" is empty')
            continue
        contexts: list[str] = []
        if record.get("contexts", "").strip():
            contexts = [c.strip() for c in record["contexts"].split(CSV_CONTEXT_SEPARATOR)]
            if not all(contexts):
                problems.append(
                    f'{where}: column "contexts" has an empty passage between '
                    f'"{CSV_CONTEXT_SEPARATOR}" separators'
                )
                continue
        answer = record.get("answer", "").strip()
        drafts.append(
            _Draft(
                number=number,
                id=record.get("id", "").strip() or f"row{number}",
                question=question,
                answers=[answer] if answer else [],
                contexts=contexts,
            )
        )
    return drafts


# --------------------------------------------------------------------------------- SQuAD


def _parse_squad(label: str, text: str, problems: list[str]) -> list[_Draft]:
    try:
        dataset = json.loads(text)
    except json.JSONDecodeError as exc:
        problems.append(f"{label}: not valid JSON ({exc.msg} at line {exc.lineno})")
        return []
    if not isinstance(dataset, dict) or not isinstance(dataset.get("data"), list):
        found = json_type(dataset)
        if isinstance(dataset, dict):
            found = f"an object with keys {', '.join(sorted(dataset))}" if dataset else "{}"
        problems.append(
            f'{label}: expected an official SQuAD JSON file ({{"version": ..., "data": '
            f"[articles]}}), got {found}; for your own rows use a .jsonl file"
        )
        return []
    drafts: list[_Draft] = []
    number = 0
    for a, article in enumerate(dataset["data"]):
        where_a = f"{label} data[{a}]"
        if not isinstance(article, dict) or not isinstance(article.get("paragraphs"), list):
            problems.append(f'{where_a}: must be an object with a "paragraphs" list')
            continue
        title = article.get("title")
        for p, paragraph in enumerate(article["paragraphs"]):
            where_p = f"{where_a}.paragraphs[{p}]"
            if not isinstance(paragraph, dict):
                problems.append(f"{where_p}: must be an object, got {json_type(paragraph)}")
                continue
            context = paragraph.get("context")
            if not isinstance(context, str) or not context.strip():
                problems.append(f'{where_p}: field "context" must be a non-empty string')
                continue
            qas = paragraph.get("qas")
            if not isinstance(qas, list):
                problems.append(f'{where_p}: field "qas" must be a list')
                continue
            for q, qa in enumerate(qas):
                number += 1
                draft = _squad_question(qa, f"{where_p}.qas[{q}]", number, context, problems)
                if draft is not None:
                    if isinstance(title, str):
                        draft.metadata["title"] = title
                    drafts.append(draft)
    return drafts


def _squad_question(
    qa: object, where: str, number: int, context: str, problems: list[str]
) -> _Draft | None:
    if not isinstance(qa, dict):
        problems.append(f"{where}: must be an object, got {json_type(qa)}")
        return None
    before = len(problems)
    qid = qa.get("id")
    if isinstance(qid, bool) or not isinstance(qid, str | int) or not str(qid).strip():
        # Haystack's files number their questions: a whole number is read as its string.
        found = json.dumps(qid) if isinstance(qid, float | str) else json_type(qid)
        problems.append(
            f'{where}: field "id" must be a non-empty string or a whole number, got {found}'
        )
    else:
        where = f'{where} (id "{qid}")'
    question = qa.get("question")
    if not isinstance(question, str) or not question.strip():
        problems.append(f'{where}: field "question" must be a non-empty string')
    impossible = qa.get("is_impossible", False)
    if not isinstance(impossible, bool):
        problems.append(f'{where}: field "is_impossible" must be true or false')
    answers: list[str] = []
    raw_answers = qa.get("answers", [])
    if not isinstance(raw_answers, list):
        problems.append(f'{where}: field "answers" must be a list')
        raw_answers = []
    for i, answer in enumerate(raw_answers):
        answer_text = answer.get("text") if isinstance(answer, dict) else None
        if not isinstance(answer_text, str):
            problems.append(f'{where}: answers[{i}] must be an object with a "text" string')
        elif answer_text.strip() and answer_text.strip() not in answers:
            answers.append(answer_text.strip())
    if impossible is True and answers:
        problems.append(f'{where}: "is_impossible" is true but the question has answers')
    elif impossible is not True and not answers and len(problems) == before:
        problems.append(f'{where}: no answers, and "is_impossible" is not true')
    if len(problems) > before:
        return None
    assert isinstance(question, str)
    return _Draft(
        number=number,
        id=str(qid).strip(),
        question=question.strip(),
        answers=answers,
        contexts=[context.strip()],
        unanswerable=impossible is True,
    )


# ------------------------------------------------------------------------------- pooling


def _check_unique_ids(label: str, drafts: list[_Draft], problems: list[str]) -> None:
    first: dict[str, int] = {}
    for draft in drafts:
        if draft.id in first:
            problems.append(
                f'{label} row {draft.number}: id "{draft.id}" is also used by row {first[draft.id]}'
            )
        else:
            first[draft.id] = draft.number


def _pool(
    label: str, drafts: list[_Draft], problems: list[str]
) -> tuple[list[BenchmarkRow], dict[str, str]]:
    """Every row's passages as one corpus, and each answerable row's own as its relevant set.

    Pooled over the whole file, not a sample, so `-n` changes how many questions are asked,
    never how many passages there are to search.
    """
    corpus: dict[str, str] = {}
    defined_by: dict[str, int] = {}
    rows: list[BenchmarkRow] = []
    for draft in drafts:
        doc_ids = draft.doc_names or [passage_id(text) for text in draft.contexts]
        for doc_id, text in zip(doc_ids, draft.contexts, strict=True):
            if doc_id in corpus and corpus[doc_id] != text:
                first = defined_by[doc_id]
                problems.append(
                    f'{label} row {draft.number}: field "expected_docs" names document '
                    f'"{doc_id}", whose text in "contexts" differs from row {first}\'s; one '
                    "name, one text"
                )
                continue
            corpus.setdefault(doc_id, text)
            defined_by.setdefault(doc_id, draft.number)
        rows.append(
            BenchmarkRow(
                id=draft.id,
                question=draft.question,
                answers=tuple(draft.answers),
                contexts=tuple(draft.contexts),
                judgments={} if draft.unanswerable else dict.fromkeys(doc_ids, 1),
                unanswerable=draft.unanswerable,
                metadata=draft.metadata,
            )
        )
    return rows, corpus


# ---------------------------------------------------------------------------------- BEIR


def _beir_id(record: dict[str, Any], where: str, problems: list[str]) -> str | None:
    value = record.get("_id")
    if value is None:
        problems.append(f'{where}: field "_id" is missing')
        return None
    if isinstance(value, bool) or not isinstance(value, str | int) or not str(value).strip():
        problems.append(f'{where}: field "_id" must be a non-empty string or number')
        return None
    return str(value).strip()


def _read_beir(folder: Path, drop_unknown: bool) -> BenchmarkData:
    """corpus.jsonl, queries.jsonl and qrels/<split>.tsv, as BEIR's own downloads lay out."""
    label = folder.name
    qrels_dir = folder / "qrels"
    qrels_files = sorted(qrels_dir.glob("*.tsv")) if qrels_dir.is_dir() else []
    missing = [name for name in BEIR_FILES if not (folder / name).is_file()]
    missing += [] if qrels_files else ["qrels/test.tsv"]
    if missing:
        raise DataError(
            label,
            [
                f"{label}: a BEIR folder needs corpus.jsonl, queries.jsonl and "
                f"qrels/<split>.tsv; missing {', '.join(missing)}"
            ],
        )
    problems: list[str] = []
    corpus = _beir_corpus(folder, problems)
    queries = _beir_queries(folder, problems)
    if not corpus and not problems:
        problems.append(f"{label}/corpus.jsonl: has no documents")

    splits: dict[str, list[BenchmarkRow]] = {}
    notes: list[str] = []
    for qrels_file in qrels_files:
        rel = f"{label}/qrels/{qrels_file.name}"
        judgments = _read_qrels(rel, qrels_file, problems)
        judgments = _known_judgments(rel, judgments, corpus, queries, drop_unknown, problems, notes)
        by_query: dict[str, dict[str, int]] = {}
        for query_id, doc_id, score in judgments:
            if score > 0:
                by_query.setdefault(query_id, {})[doc_id] = score
        rows = [
            BenchmarkRow(id=qid, question=text, judgments=by_query[qid])
            for qid, text in queries.items()
            if qid in by_query
        ]
        if not rows and judgments:
            problems.append(
                f"{rel}: no judgment has a score above 0, so no query has a relevant document"
            )
        unjudged = len(queries) - len(rows)
        if rows and unjudged:
            notes.append(
                f"{rel}: queries with no relevant document are not asked: {unjudged:,} of "
                f"{len(queries):,}"
            )
        splits[qrels_file.stem] = rows
    if problems:
        raise DataError(label, problems)
    read = [folder / name for name in BEIR_FILES] + qrels_files
    return BenchmarkData(
        path=folder,
        kind="beir",
        sha256=folder_sha256(folder, read),
        splits=splits,
        corpus=corpus,
        files=tuple(f.relative_to(folder).as_posix() for f in read),
        notes=tuple(notes),
    )


def _beir_jsonl(
    folder: Path, name: str, problems: list[str]
) -> Iterator[tuple[str, dict[str, Any]]]:
    label = f"{folder.name}/{name}"
    text = _decode(label, (folder / name).read_bytes(), problems)
    if text is not None:
        for number, record in _jsonl_records(label, text, problems):
            yield f"{label} row {number}", record


def _beir_corpus(folder: Path, problems: list[str]) -> dict[str, str]:
    corpus: dict[str, str] = {}
    for where, record in _beir_jsonl(folder, "corpus.jsonl", problems):
        doc_id = _beir_id(record, where, problems)
        title, body = record.get("title") or "", record.get("text") or ""
        if not isinstance(title, str) or not isinstance(body, str):
            problems.append(f'{where}: fields "title" and "text" must be strings')
            continue
        if doc_id is None:
            continue
        # Title and text joined as lasagna-rag joins them, so the searched text is the same.
        text = f"{title}\n\n{body}".strip() if title else body.strip()
        if not text:
            problems.append(f'{where}: document "{doc_id}" has no text and no title')
        elif doc_id in corpus:
            problems.append(f'{where}: document id "{doc_id}" is used twice')
        else:
            corpus[doc_id] = text
    return corpus


def _beir_queries(folder: Path, problems: list[str]) -> dict[str, str]:
    queries: dict[str, str] = {}
    for where, record in _beir_jsonl(folder, "queries.jsonl", problems):
        query_id = _beir_id(record, where, problems)
        text = record.get("text")
        if not isinstance(text, str) or not text.strip():
            problems.append(f'{where}: field "text" must be a non-empty string')
        elif query_id is not None and query_id in queries:
            problems.append(f'{where}: query id "{query_id}" is used twice')
        elif query_id is not None:
            queries[query_id] = text.strip()
    return queries


def _read_qrels(rel: str, qrels_file: Path, problems: list[str]) -> list[tuple[str, str, int]]:
    text = _decode(rel, qrels_file.read_bytes(), problems)
    if text is None:
        return []
    judgments: list[tuple[str, str, int]] = []
    seen: dict[tuple[str, str], tuple[int, int]] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        cells = [c.strip() for c in line.split("\t")]
        if number == 1 and cells[:2] == ["query-id", "corpus-id"]:
            continue  # BEIR's optional header
        if len(cells) != 3:
            problems.append(
                f"{rel} row {number}: needs three tab-separated columns "
                f"(query-id, corpus-id, score), got {len(cells)}"
            )
            continue
        try:
            score = int(cells[2])
        except ValueError:
            problems.append(f'{rel} row {number}: score must be a whole number, got "{cells[2]}"')
            continue
        key = (cells[0], cells[1])
        if key in seen and seen[key][1] != score:
            problems.append(
                f'{rel} row {number}: query "{key[0]}" and document "{key[1]}" were judged '
                f"{seen[key][1]} in row {seen[key][0]} and {score} here"
            )
            continue
        if key not in seen:
            seen[key] = (number, score)
            judgments.append((cells[0], cells[1], score))
    return judgments


def _known_judgments(
    rel: str,
    judgments: list[tuple[str, str, int]],
    corpus: dict[str, str],
    queries: dict[str, str],
    drop_unknown: bool,
    problems: list[str],
    notes: list[str],
) -> list[tuple[str, str, int]]:
    """Judgments naming a missing document or query: an error, or dropped and counted."""
    missing_docs = list(dict.fromkeys(d for _, d, _ in judgments if d not in corpus))
    missing_queries = list(dict.fromkeys(q for q, _, _ in judgments if q not in queries))
    found = []
    for ids, what, where in (
        (missing_docs, "document", "corpus.jsonl"),
        (missing_queries, "query", "queries.jsonl"),
    ):
        if ids:
            n = len(ids)
            noun = f"{what} id{'s' if n > 1 else ''}"
            found.append((n, noun, where, ids))
    if not found:
        return judgments
    if not drop_unknown:
        for n, noun, where, ids in found:
            problems.append(
                f"{rel}: {n:,} judged {noun} {'are' if n > 1 else 'is'} not in {where}, "
                f"for example {examples(ids)}; fix the qrels or {where}, or drop those "
                "judgments with --drop-unknown-judgments"
            )
        return judgments
    kept = [j for j in judgments if j[0] in queries and j[1] in corpus]
    dropped = len(judgments) - len(kept)
    parts = [
        f"{n:,} {noun} not in {where} ({examples(ids, 3)}, ...)" for n, noun, where, ids in found
    ]
    notes.append(f"{rel}: dropped {dropped:,} judgments naming " + " and ".join(parts))
    return kept
