"""Reading an official SQuAD v1.1/v2.0 JSON file (`.json`) as benchmark rows.

One row per question, its paragraph as the one context, its answers' texts (de-duplicated
in order) as references, and `is_impossible` as unanswerable; the article title goes to
`metadata.title`. A question `id` may be a whole number (Haystack's files): the row's id is
its decimal string. (lasagna-rag does not read this format; the name is formed by the same
rule.)
"""

from __future__ import annotations

import json

from lasagna_metrics import parse_json
from lasagna_synth._format_reading import _Draft, json_type


def _parse_squad(label: str, text: str, problems: list[str]) -> list[_Draft]:
    try:
        dataset = parse_json(text)
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
