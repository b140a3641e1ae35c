"""What every live system under test looks like to the runner and the sweep."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol


class SystemAdapter(Protocol):
    """A function, a LangChain object or an HTTP endpoint, asked one question at a time."""

    kind: str
    """How it is called: "function", "async function", "langchain retriever", ... "http"."""

    def describe(self) -> dict[str, Any]:
        """What results record about how it was called (never a secret)."""
        ...

    async def ask(self, question: str, row: Mapping[str, Any], top_k: int) -> Any:
        """The raw reply to one question; SystemFailure when the system fails."""
        ...

    async def aclose(self) -> None: ...
