"""A run whose models cannot be reached stops after its first calls, not after every task.

When the first tasks that call a model each fail with a call that failed for good (cannot
connect, 401, an unknown model: `LLMCallError`, or the judge's "error" grade), the rest
would fail the same way, each after its retries. `FirstCalls` watches the outcomes until
one such task succeeds; the third failure in a row before that raises `ModelsUnreachable`,
which stops the run (the failed tasks are recorded, so `--resume` retries them). As the
probe of a user's system does (`_system_tasks`); kag's sweep does neither.
"""

from __future__ import annotations

from typing import Any

from lasagna_cli.engine._errors import EngineError

FIRST_CALLS = 3
_ANSWER_SECTIONS = ("generation", "closed-book")


class ModelsUnreachable(EngineError):
    """The first model calls of a run all failed for good."""


def _failed_call(error: BaseException | None, record: dict[str, Any] | None) -> str | None:
    from lasagna_judge import LLMCallError

    if isinstance(error, LLMCallError):
        return str(error)
    for name in _ANSWER_SECTIONS:
        section = (record or {}).get(name)
        grade = section.get("judge") if isinstance(section, dict) else None
        # An error grade with a prompt is a call that failed; without one nothing was sent
        # (an answer over --max-chars), which says nothing of the judge.
        if not isinstance(grade, dict) or grade.get("prompt_sha256") is None:
            continue
        if grade.get("status") == "error":
            return f"the judge: {grade.get('error')}"
    return None


class FirstCalls:
    """Told each outcome of a task that calls a model, in the order they finish."""

    def __init__(self, limit: int = FIRST_CALLS) -> None:
        self._limit = limit
        self._reasons: list[str] = []
        self._settled = False

    def see(self, error: BaseException | None, record: dict[str, Any] | None) -> None:
        if self._settled:
            return
        reason = _failed_call(error, record)
        if reason is None:
            # A task that worked (or failed for a reason of its own): the models answer.
            self._settled = error is None
            return
        self._reasons.append(reason)
        if len(self._reasons) >= self._limit:
            raise ModelsUnreachable(
                f"the first {len(self._reasons)} model calls of the run failed, so it stops "
                f"before the rest ({self._reasons[0]}); is the server running, the key set and "
                "the model name right? The failed tasks are recorded and retried by --resume"
            )
