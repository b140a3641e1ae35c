"""What a system under test may return, checked and brought to one shape.

A system returns, for one question:

- a string: the answer;
- a mapping with `answer` (a string) and/or `retrieved` (a ranked list, best first);
  LangChain's `context` (and `contexts`) are read as `retrieved`; other keys are ignored;
- a list: a ranking only (what a retriever returns);
- a LangChain message (`AIMessage`): its text is the answer.

A ranked item is a document id or a passage text (a string), a LangChain `Document`, a
mapping with `id` and/or `text` (also `doc_id`, `_id`, `passage_id`; `page_content`,
`content`), or an `(item, score)` pair. Which corpus document an item is, is decided later
against the benchmark's corpus (`_match`).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lasagna_cli.engine.systems._errors import SystemOutputError

ANSWER_KEY = "answer"
RANKING_KEYS = ("retrieved", "context", "contexts")
_ID_KEYS = ("id", "doc_id", "_id", "passage_id", "corpus_id")
_TEXT_KEYS = ("text", "page_content", "content", "passage")
# Document metadata that may name the corpus document, in order of preference.
_METADATA_ID_KEYS = ("passage_id", "doc_id", "id", "_id", "corpus_id")

EXPECTED = (
    'a string (the answer), a mapping with "answer" and/or "retrieved" (a ranked list of '
    "document ids or passage texts), or a list (a ranking)"
)


@dataclass(frozen=True, slots=True)
class Retrieved:
    """One ranked item: the ids it may be known by (preferred first) and its text."""

    ids: tuple[str, ...]
    text: str | None

    @property
    def shown(self) -> str:
        """How a report names the item."""
        given = self.ids[0] if self.ids else self.text or ""
        return given if len(given) <= 80 else given[:77] + "..."


@dataclass(frozen=True, slots=True)
class SystemOutput:
    answer: str | None
    """None when the system gave no answer (a retriever); "" is an answer (a refusal)."""
    retrieved: tuple[Retrieved, ...] | None
    """None when the system gave no ranking; () is a ranking with nothing in it."""
    latency_s: float = 0.0

    def provides(self) -> frozenset[str]:
        """The tracks this output can be scored on."""
        tracks = set()
        if self.answer is not None:
            tracks.add("generation")
        if self.retrieved is not None:
            tracks.add("retrieval")
        return frozenset(tracks)


def type_name(value: object) -> str:
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "a boolean"
    return f"{'an' if type(value).__name__[0] in 'aeiouAEIOU' else 'a'} {type(value).__name__}"


def _is_document(value: object) -> bool:
    return hasattr(value, "page_content") and hasattr(value, "metadata")


def _is_message(value: object) -> bool:
    # langchain_core.messages.BaseMessage, without importing LangChain to ask.
    return hasattr(value, "content") and hasattr(value, "type") and not isinstance(value, Mapping)


def _message_text(value: Any, where: str) -> str:
    content = value.content
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content blocks: keep the text ones
        return "".join(
            b if isinstance(b, str) else str(b.get("text", ""))
            for b in content
            if isinstance(b, str) or (isinstance(b, Mapping) and b.get("type") == "text")
        )
    raise SystemOutputError(f"{where}: a message whose content is {type_name(content)}")


def _text_of(value: object, where: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise SystemOutputError(
        f"{where}: expected a string, got {type_name(value)}: {_preview(value)}"
    )


def _preview(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def retrieved_item(value: object, where: str) -> Retrieved:
    """One ranked item in the shapes the module docstring lists."""
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], int | float):
        value = value[0]  # (item, score): the order is the ranking; the score is not needed
    if isinstance(value, str):
        return Retrieved((value,), value)
    if isinstance(value, int) and not isinstance(value, bool):
        return Retrieved((str(value),), None)
    if _is_document(value):
        metadata = getattr(value, "metadata", None) or {}
        names: list[object] = [getattr(value, "id", None)]
        if isinstance(metadata, Mapping):
            names += [metadata.get(k) for k in _METADATA_ID_KEYS]
        text = getattr(value, "page_content", None)
        return Retrieved(
            tuple(dict.fromkeys(str(i) for i in names if isinstance(i, str | int) and str(i))),
            text if isinstance(text, str) else None,
        )
    if isinstance(value, Mapping):
        ids = tuple(
            dict.fromkeys(
                str(value[k])
                for k in _ID_KEYS
                if isinstance(value.get(k), str | int) and not isinstance(value.get(k), bool)
            )
        )
        texts = [value[k] for k in _TEXT_KEYS if isinstance(value.get(k), str)]
        if not ids and not texts:
            raise SystemOutputError(
                f'{where}: a ranked item needs "id" or "text"; got the keys '
                f"{', '.join(map(str, value)) or 'none'}"
            )
        return Retrieved(ids, texts[0] if texts else None)
    raise SystemOutputError(
        f"{where}: a ranked item must be a document id or passage text (a string), a "
        f'Document, or a mapping with "id" or "text"; got {type_name(value)}: '
        f"{_preview(value)}"
    )


def ranking(value: object, where: str) -> tuple[Retrieved, ...]:
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise SystemOutputError(
            f"{where}: expected a ranked list (best first) of document ids or passage texts, "
            f"got {type_name(value)}"
        )
    return tuple(retrieved_item(item, f"{where}[{i}]") for i, item in enumerate(value))


def normalize(value: object, where: str) -> SystemOutput:
    """A system's return value as a SystemOutput; SystemOutputError says what was wrong."""
    if isinstance(value, str):
        return SystemOutput(answer=value, retrieved=None)
    if _is_message(value):
        return SystemOutput(answer=_message_text(value, where), retrieved=None)
    if isinstance(value, Mapping):
        return _from_mapping(value, where)
    if isinstance(value, list | tuple):
        return SystemOutput(answer=None, retrieved=ranking(value, where))
    raise SystemOutputError(
        f"{where} returned {type_name(value)} ({_preview(value)}); expected {EXPECTED}"
    )


def _from_mapping(value: Mapping[Any, Any], where: str) -> SystemOutput:
    keys = [k for k in RANKING_KEYS if k in value]
    if ANSWER_KEY not in value and not keys:
        found = ", ".join(f'"{k}"' for k in value) or "none"
        hints = [
            close[0]
            for k in value
            if (close := difflib.get_close_matches(str(k), (ANSWER_KEY, *RANKING_KEYS), n=1))
        ]
        hint = f' (did you mean "{hints[0]}"?)' if hints else ""
        raise SystemOutputError(
            f'{where} returned a mapping without "answer" or "retrieved" (keys: {found}){hint}; '
            f"expected {EXPECTED}"
        )
    if len(keys) > 1:
        raise SystemOutputError(
            f"{where} returned both {' and '.join(repr(k) for k in keys)}; give the ranking once"
        )
    answer: str | None = None
    raw_answer = value.get(ANSWER_KEY)
    if raw_answer is not None:
        if _is_message(raw_answer):
            answer = _message_text(raw_answer, f'{where}: "answer"')
        else:
            answer = _text_of(raw_answer, f'{where}: "answer"')
    retrieved = None
    if keys and value[keys[0]] is not None:
        retrieved = ranking(value[keys[0]], f'{where}: "{keys[0]}"')
    return SystemOutput(answer=answer, retrieved=retrieved)
