"""What every live system under test looks like to the runner and the sweep."""

from __future__ import annotations

import asyncio
import traceback
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from lasagna_cli.engine.systems._errors import SystemFailure


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


def failure_text(exc: BaseException) -> str:
    """`ValueError: boom (at my_system.py:12)`: the error and the line that raised it."""
    text = f"{type(exc).__name__}: {exc}".rstrip(": ")
    frames = traceback.extract_tb(exc.__traceback__)
    if frames:
        last = frames[-1]
        text += f" (at {Path(last.filename).name}:{last.lineno})"
    return text


async def within(call: Callable[[], Awaitable[Any]], target: str, timeout: float | None) -> Any:
    """`await call()`; its exception, or no result within `timeout` seconds, is a
    SystemFailure that names the target (a TimeoutError of the system's own is its error)."""
    try:
        async with asyncio.timeout(timeout) as limit:
            return await call()
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        if isinstance(exc, TimeoutError) and limit.expired():
            raise SystemFailure(
                f"{target}: no reply within {timeout:g} s (--system-timeout)"
            ) from None
        raise SystemFailure(f"{target} raised {failure_text(exc)}") from exc
