"""LangChain objects as systems under test: a `BaseRetriever` on the retrieval track, any
other `Runnable` on the generation track (and on retrieval when its output carries the
documents it used, as `context`).

LangChain is imported only when the object given is one: an object from a module that
never imported langchain_core cannot be a LangChain object.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from lasagna_cli.engine.systems._adapter import within


class _LangChainSystem:
    kind = "langchain runnable"

    def __init__(self, runnable: Any, target: str, timeout: float | None = None) -> None:
        self._runnable = runnable
        self.target = target
        self._timeout = timeout

    def describe(self) -> dict[str, Any]:
        return {"adapter": self.kind, "class": type(self._runnable).__name__}

    async def ask(self, question: str, row: Mapping[str, Any], top_k: int) -> Any:
        return await within(lambda: self._runnable.ainvoke(question), self.target, self._timeout)

    async def aclose(self) -> None:
        return None


class RetrieverSystem(_LangChainSystem):
    """`retriever.ainvoke(question)`: its Documents, best first, are the ranking."""

    kind = "langchain retriever"

    async def ask(self, question: str, row: Mapping[str, Any], top_k: int) -> Any:
        documents = await super().ask(question, row, top_k)
        # A list means "a ranking only", so a retriever never counts as answering.
        return list(documents) if isinstance(documents, list | tuple) else documents


class RunnableSystem(_LangChainSystem):
    """`runnable.ainvoke(question)`: a string, a message, or {"answer", "context"}."""


def langchain_system(
    obj: object, target: str, timeout: float | None = None
) -> _LangChainSystem | None:
    if "langchain_core" not in sys.modules:
        return None
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.runnables import Runnable

    if isinstance(obj, BaseRetriever):
        return RetrieverSystem(obj, target, timeout)
    if isinstance(obj, Runnable):
        return RunnableSystem(obj, target, timeout)
    return None
