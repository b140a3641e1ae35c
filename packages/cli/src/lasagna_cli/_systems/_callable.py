"""`--system package.module:attr`: a Python function, a LangChain object, or a factory.

The module is imported from the current directory or the installed environment (or, when
the part before the colon is a path to a .py file, from that file). `attr` may be dotted
(`module:obj.method`). What it names decides how it is called:

- a LangChain `BaseRetriever`: asked `ainvoke(question)`, its Documents are the ranking;
- any other LangChain `Runnable`: asked `ainvoke(question)`; its output is read like a
  function's (a string, an `AIMessage`, or a mapping with `answer` and/or `context`);
- a function, or an object with `__call__`, that takes at least one argument: called with
  the question, and with the row too when it takes a second positional argument or a
  keyword argument named `row`. The row is `{"id", "question", "metadata"}`: the references
  and gold passages are withheld, since they are what the system is measured against.
  An `async def` function is awaited; a plain one runs on a worker thread so that
  `--concurrency` questions are in flight (use --concurrency 1 for a function that is not
  thread-safe);
- a class, or a function that takes no required argument: a factory, called once (awaited
  if async) to build one of the above.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
import traceback
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from lasagna_cli._errors import DATA_ERROR, USAGE_ERROR, CliError
from lasagna_cli._systems._adapter import SystemAdapter
from lasagna_cli._systems._errors import SystemFailure

EXPECTED_TARGET = (
    "a function taking the question (and optionally the row), a LangChain retriever or "
    "runnable, or a factory (a class, or a function with no required argument) returning one"
)


def failure_text(exc: BaseException) -> str:
    """`ValueError: boom (at my_system.py:12)`: the error and the line that raised it."""
    text = f"{type(exc).__name__}: {exc}".rstrip(": ")
    frames = traceback.extract_tb(exc.__traceback__)
    if frames:
        last = frames[-1]
        text += f" (at {Path(last.filename).name}:{last.lineno})"
    return text


def _import_module(module_part: str, where: str) -> Any:
    if module_part.endswith(".py") or "/" in module_part or os.sep in module_part:
        path = Path(module_part).expanduser().resolve()
        if not path.is_file():
            raise CliError(f"{where}: no such Python file {module_part}", USAGE_ERROR)
        digest = hashlib.sha256(str(path).encode()).hexdigest()[:8]
        name = f"_lasagna_system_{digest}_{path.stem}"
        if name in sys.modules:
            return sys.modules[name]
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise CliError(f"{where}: cannot import {module_part} as a module", USAGE_ERROR)
        module = importlib.util.module_from_spec(spec)
        # Its own folder first, so that the file imports its neighbours as a script would.
        if str(path.parent) not in sys.path:
            sys.path.insert(0, str(path.parent))
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException as exc:
            del sys.modules[name]
            if isinstance(exc, KeyboardInterrupt | SystemExit):
                raise
            raise CliError(
                f"{where}: importing {module_part} raised {failure_text(exc)}", DATA_ERROR
            ) from None
        return module
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)  # as `python -m` would: the current directory first
    try:
        return importlib.import_module(module_part)
    except ModuleNotFoundError as exc:
        missing = exc.name or module_part
        if module_part == missing or module_part.startswith(missing + "."):
            raise CliError(
                f"{where}: cannot find module {missing} (looked in the current directory "
                f"{cwd} and the installed packages); run from the folder that holds it, or "
                "give a path: path/to/file.py:attr",
                USAGE_ERROR,
            ) from None
        raise CliError(
            f"{where}: importing {module_part} failed: it needs module {missing}, which is "
            "not installed",
            DATA_ERROR,
        ) from None
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt | SystemExit):
            raise
        raise CliError(
            f"{where}: importing {module_part} raised {failure_text(exc)}", DATA_ERROR
        ) from None


def import_target(target: str, where: str) -> Any:
    """The object `module:attr` names; one line naming the target when it cannot."""
    module_part, _, attr = target.rpartition(":")
    found = _import_module(module_part, where)
    for i, part in enumerate(attr.split(".")):
        try:
            found = getattr(found, part)
        except AttributeError:
            owner = module_part if i == 0 else ".".join(attr.split(".")[:i])
            names = sorted(
                n for n in dir(found) if not n.startswith("_") and callable(getattr(found, n))
            )
            shown = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")
            raise CliError(
                f"{where}: {owner} has no attribute {part!r}; its callables are: {shown or 'none'}",
                USAGE_ERROR,
            ) from None
    return found


class FunctionSystem:
    """A user's function: the question (and the row) in, a raw return value out."""

    def __init__(self, fn: Callable[..., Any], target: str, concurrency: int = 1) -> None:
        self._fn = fn
        self.target = target
        self.kind = "async function" if _is_async(fn) else "function"
        self._pass_row, self._row_keyword = _takes_row(fn)
        self._concurrency = concurrency
        self._threads: ThreadPoolExecutor | None = None

    def describe(self) -> dict[str, Any]:
        return {"adapter": self.kind, "receives_row": self._pass_row or self._row_keyword}

    async def ask(self, question: str, row: Mapping[str, Any], top_k: int) -> Any:
        args: tuple[Any, ...] = (question, row) if self._pass_row else (question,)
        kwargs: dict[str, Any] = {"row": row} if self._row_keyword else {}
        try:
            if self.kind == "async function":
                result = await self._fn(*args, **kwargs)
            else:
                # Threads of our own, one per question in flight (asyncio's default pool
                # has only cores + 4).
                if self._threads is None:
                    self._threads = ThreadPoolExecutor(
                        self._concurrency, thread_name_prefix="lasagna-system"
                    )
                call = functools.partial(self._fn, *args, **kwargs)
                result = await asyncio.get_running_loop().run_in_executor(self._threads, call)
                if inspect.isawaitable(result):
                    result = await result
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            raise SystemFailure(f"{self.target} raised {failure_text(exc)}") from exc
        return result

    async def aclose(self) -> None:
        if self._threads is not None:
            self._threads.shutdown(wait=False, cancel_futures=True)
            self._threads = None


def _is_async(fn: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - an object whose __call__ is async
    )


def _signature(fn: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def _takes_row(fn: Callable[..., Any]) -> tuple[bool, bool]:
    """(pass the row as the second positional argument, pass it as `row=`)."""
    signature = _signature(fn)
    if signature is None:
        return False, False
    positional = [
        p
        for p in signature.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    if len(positional) >= 2 or any(
        p.kind == p.VAR_POSITIONAL for p in signature.parameters.values()
    ):
        return True, False
    row = signature.parameters.get("row")
    return False, row is not None and row.kind == row.KEYWORD_ONLY


def _required(fn: Callable[..., Any]) -> int | None:
    """How many arguments a call must pass (None: cannot tell, or *args)."""
    signature = _signature(fn)
    if signature is None:
        return None
    if any(p.kind == p.VAR_POSITIONAL for p in signature.parameters.values()):
        return None
    return sum(
        1
        for p in signature.parameters.values()
        if p.default is p.empty and p.kind not in (p.VAR_KEYWORD,)
    )


async def build_callable(target: str, where: str, concurrency: int = 1) -> SystemAdapter:
    """Import the target and make it askable (see the module docstring)."""
    from lasagna_cli._systems._langchain import langchain_system

    found = import_target(target, where)
    for built_by_factory in (False, True):
        system = langchain_system(found, target)
        if system is not None:
            return system
        if inspect.isclass(found) or (callable(found) and _required(found) == 0):
            if built_by_factory:
                break
            kind = "class" if inspect.isclass(found) else "factory"
            try:
                made = found()
                if inspect.isawaitable(made):
                    made = await made
            except Exception as exc:
                needs = ""
                if isinstance(exc, TypeError) and kind == "class":
                    needs = "; a class is built with no arguments: point --system at a factory"
                raise CliError(
                    f"{where}: building the system ({kind} {target}) raised "
                    f"{failure_text(exc)}{needs}",
                    DATA_ERROR,
                ) from None
            found = made
            continue
        if callable(found):
            return FunctionSystem(found, target, concurrency)
        break
    what = f"a factory that returned {_kind_of(found)}" if built_by_factory else _kind_of(found)
    raise CliError(f"{where}: expected {EXPECTED_TARGET}; {target} is {what}", DATA_ERROR)


def _kind_of(value: object) -> str:
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiouAEIOU' else 'a'} {name} ({value!r:.60})"
