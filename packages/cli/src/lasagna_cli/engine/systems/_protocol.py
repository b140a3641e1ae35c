"""What a system under test is, as a type: what `--system` targets take and return.

    from lasagna_cli import Row, SystemReply

    def answer(question: str, row: Row) -> SystemReply:
        hits = my_index.search(question, k=5)
        return {"answer": my_llm(question, hits), "retrieved": [h.doc_id for h in hits]}

A system may also take the question alone, be `async`, return the answer as a plain string
or a ranking alone as a list (of document ids, passage texts, `{"id", "text"}` objects,
LangChain Documents or `(item, score)` pairs, best first); see `_output` for the rules.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping, Sequence
from typing import Any, Protocol, TypedDict


class Row(TypedDict):
    """What a system sees of a question: never its references or gold passages."""

    id: str
    question: str
    metadata: Mapping[str, Any]


class RetrievedItem(TypedDict, total=False):
    """One ranked item: the corpus id it is known by, and/or its text."""

    id: str
    text: str


class SystemReply(TypedDict, total=False):
    """A system's reply: an answer, a ranking (best first), or both."""

    answer: str
    retrieved: Sequence[str | RetrievedItem | Any]


SystemResult = str | SystemReply | Sequence[Any]
"""An answer, a reply, or a ranking alone."""


class System(Protocol):
    """A callable system under test (`--system package.module:attr`)."""

    def __call__(self, question: str, row: Row) -> SystemResult | Awaitable[SystemResult]: ...
