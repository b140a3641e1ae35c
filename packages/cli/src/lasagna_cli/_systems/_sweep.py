"""The user's system as a setup of `lasagna benchmark sweep` (SETUPS.toml):

    [my-rag]
    system = "my_rag.pipeline:answer"        # or "http://127.0.0.1:8765/answer", or a table:
    # system = {url = "http://...", timeout = 30, retries = 3, headers = {...}}
    datasets = ["facts"]                     # optional, as for any setup
    prompt = "{{INPUT}}"                     # optional: the question the system is asked

The system answers by itself, so a system setup names no provider, model, prompts for a
model, retriever or database. It is asked the question's input (an MCQ question's options
follow it, one "key: value" line each, unless `prompt` places {{CHOICE}} itself); the row it
may take is `{"id": "<dataset>/<question>", "question", "metadata": {"dataset",
"question", "options"}}`, and an HTTP system gets the same `id`. Its answer is the result the
stats grade; a reply without an answer, or a failure, is the task's `{"error": ...}`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lasagna_cli._errors import CliError
from lasagna_cli._systems._errors import SystemFailure
from lasagna_cli._systems._output import normalize
from lasagna_cli._systems._spec import SystemSpec, spec_from_sweep

if TYPE_CHECKING:
    from lasagna_cli._sweep._runner import SweepContext, Task
    from lasagna_cli._sweep._setups import Setup

SYSTEM_SETUP_KEYS = ("system", "datasets", "prompt")
SWEEP_TOP_K = 10


def system_spec(path: Path, name: str, body: Mapping[str, Any]) -> SystemSpec:
    """The `system` of one setup table, with every key that does not apply refused."""
    where = f"{path}: setup {name!r}: system"
    for key in body:
        if key not in SYSTEM_SETUP_KEYS:
            raise CliError(
                f"{path}: setup {name!r}: `{key}` does not apply to a system setup (the system "
                f"answers by itself); a system setup takes {', '.join(SYSTEM_SETUP_KEYS)}"
            )
    try:
        spec = spec_from_sweep(body["system"], where, path.parent)
    except CliError as exc:  # a setups-file problem, like every other in that file: exit 1
        raise CliError(str(exc)) from None
    if spec.kind == "predictions":
        raise CliError(
            f"{where}: a sweep asks its questions live, so it takes a callable or a URL; a "
            "predictions file is scored by `lasagna benchmark run DATA --predictions FILE`"
        )
    return spec


def system_model(spec: SystemSpec) -> str:
    """What a system setup shows where a model name would be (a URL is masked)."""
    return spec.describe().get("url") or spec.target


async def load_sweep_systems(setups: Sequence[Setup], parallel: int) -> dict[str, Any]:
    """One adapter per system setup, by setup name; import errors are one line."""
    from lasagna_cli._systems._run import load_system

    systems: dict[str, Any] = {}
    for setup in setups:
        if setup.system is not None:
            systems[setup.name] = (await load_system(setup.system, parallel)).adapter
    return systems


def system_input(setup: Setup, task: Task) -> str:
    from lasagna_cli._sweep._prompts import build_messages

    # The setup's prompt filled as for a model (system setups have no system prompt).
    return build_messages(setup, task.question)[-1]["content"]


async def run_system_task(context: SweepContext, task: Task) -> dict[str, Any]:
    """One question to the setup's system: `{"ok": ...}` or `{"error": ...}`."""
    setup, question = task.setup, task.question
    assert setup.system is not None
    adapter = context.systems[setup.name]
    text = system_input(setup, task)
    row = {
        "id": f"{question.dataset}/{question.id}",
        "question": text,
        "metadata": {
            "dataset": question.dataset,
            "question": question.id,
            "options": dict(question.options) if question.options is not None else None,
        },
    }
    started = time.perf_counter()
    try:
        raw = await adapter.ask(text, row, SWEEP_TOP_K)
        output = normalize(raw, f"{setup.system.label} on {row['id']}")
    except asyncio.CancelledError:
        raise
    except SystemFailure as exc:
        return {"error": str(exc)}
    elapsed = time.perf_counter() - started
    if output.answer is None:
        return {
            "error": f"{setup.system.label} gave no answer for {row['id']} (only a ranking); "
            "a sweep grades answers"
        }
    passages = [item.shown for item in output.retrieved] if output.retrieved is not None else None
    stats = {
        "generation_time_s": elapsed,
        "retrieval_time_s": None,
        "passages": passages,
        "input_tokens": None,
        "output_tokens": None,
        "context_length": len(text),
        "attempts": None,
        "cached": False,
        "setup": context.description(setup),
    }
    return {"ok": {"result": output.answer, "stats": stats}}
