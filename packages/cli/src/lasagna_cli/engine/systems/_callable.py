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

With `--system-timeout S`, a question the system has not answered in S seconds is recorded
as that question's failure and the run goes on. An async call is cancelled; a plain
function's call cannot be stopped (Python cannot stop a thread), so it goes on in its
thread, its result is dropped, and a new thread takes its place. The worker threads are
daemons: a call that never returns does not keep `lasagna` from exiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import importlib
import importlib.util
import inspect
import os
import queue
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from lasagna_cli.engine._errors import EngineError, EngineUsageError
from lasagna_cli.engine.systems._adapter import SystemAdapter, failure_text, within
from lasagna_cli.engine.systems._langchain import langchain_system

EXPECTED_TARGET = (
    "a function taking the question (and optionally the row), a LangChain retriever or "
    "runnable, or a factory (a class, or a function with no required argument) returning one"
)


def _import_module(module_part: str, where: str) -> Any:
    if module_part.endswith(".py") or "/" in module_part or os.sep in module_part:
        path = Path(module_part).expanduser().resolve()
        if not path.is_file():
            raise EngineUsageError(f"{where}: no such Python file {module_part}")
        digest = hashlib.sha256(str(path).encode()).hexdigest()[:8]
        name = f"_lasagna_system_{digest}_{path.stem}"
        if name in sys.modules:
            return sys.modules[name]
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise EngineUsageError(f"{where}: cannot import {module_part} as a module")
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
            raise EngineError(
                f"{where}: importing {module_part} raised {failure_text(exc)}"
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
            raise EngineUsageError(
                f"{where}: cannot find module {missing} (looked in the current directory "
                f"{cwd} and the installed packages); run from the folder that holds it, or "
                "give a path: path/to/file.py:attr"
            ) from None
        raise EngineError(
            f"{where}: importing {module_part} failed: it needs module {missing}, which is "
            "not installed"
        ) from None
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt | SystemExit):
            raise
        raise EngineError(f"{where}: importing {module_part} raised {failure_text(exc)}") from None


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
            raise EngineUsageError(
                f"{where}: {owner} has no attribute {part!r}; its callables are: {shown or 'none'}"
            ) from None
    return found


_Job = tuple[Callable[[], Any], asyncio.AbstractEventLoop, "asyncio.Future[Any]"]


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():  # timed out (cancelled): nobody waits for it any more
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


class WorkerThreads:
    """Daemon threads that run a plain function's calls, one call per thread at a time.

    A thread is started whenever no thread is idle, so every call in flight has one (the
    runner bounds how many are in flight; asyncio's default pool has only cores + 4), and a
    thread stuck in a call that timed out is simply no longer idle. Not a
    ThreadPoolExecutor: Python joins those threads at exit, so a call that never returns
    would keep the process alive.
    """

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        self.started = 0

    def run(self, call: Callable[[], Any]) -> asyncio.Future[Any]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        with self._lock:
            if self._idle:
                self._idle -= 1
            else:
                self.started += 1
                threading.Thread(
                    target=self._work, name=f"lasagna-system-{self.started}", daemon=True
                ).start()
        self._jobs.put((call, loop, future))
        return future

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            call, loop, future = job
            result: Any = None
            error: BaseException | None = None
            try:
                result = call()
            except BaseException as exc:  # handed to the awaiting task, which reports it
                error = exc
            with self._lock:  # idle before the result is seen, so the next call reuses it
                self._idle += 1
            with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits
                loop.call_soon_threadsafe(_settle, future, result, error)
            del job, call, result, error  # hold no reference while idle

    def close(self) -> None:
        """Idle threads end; a thread still in a call ends with it (or with the process)."""
        for _ in range(self.started):
            self._jobs.put(None)


class FunctionSystem:
    """A user's function: the question (and the row) in, a raw return value out."""

    def __init__(self, fn: Callable[..., Any], target: str, timeout: float | None = None) -> None:
        self._fn = fn
        self.target = target
        self.kind = "async function" if _is_async(fn) else "function"
        self._pass_row, self._row_keyword = _takes_row(fn)
        self._timeout = timeout
        self._threads: WorkerThreads | None = None

    def describe(self) -> dict[str, Any]:
        return {"adapter": self.kind, "receives_row": self._pass_row or self._row_keyword}

    async def ask(self, question: str, row: Mapping[str, Any], top_k: int) -> Any:
        args: tuple[Any, ...] = (question, row) if self._pass_row else (question,)
        kwargs: dict[str, Any] = {"row": row} if self._row_keyword else {}
        return await within(lambda: self._call(args, kwargs), self.target, self._timeout)

    async def _call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if self.kind == "async function":
            return await self._fn(*args, **kwargs)
        if self._threads is None:
            self._threads = WorkerThreads()
        result = await self._threads.run(functools.partial(self._fn, *args, **kwargs))
        return await result if inspect.isawaitable(result) else result

    async def aclose(self) -> None:
        if self._threads is not None:
            self._threads.close()
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


async def build_callable(target: str, where: str, timeout: float | None = None) -> SystemAdapter:
    """Import the target and make it askable (see the module docstring)."""
    found = import_target(target, where)
    for built_by_factory in (False, True):
        system = langchain_system(found, target, timeout)
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
                raise EngineError(
                    f"{where}: building the system ({kind} {target}) raised "
                    f"{failure_text(exc)}{needs}"
                ) from None
            found = made
            continue
        if callable(found):
            return FunctionSystem(found, target, timeout)
        break
    what = f"a factory that returned {_kind_of(found)}" if built_by_factory else _kind_of(found)
    raise EngineError(f"{where}: expected {EXPECTED_TARGET}; {target} is {what}")


def _kind_of(value: object) -> str:
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiouAEIOU' else 'a'} {name} ({value!r:.60})"
