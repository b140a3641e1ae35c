"""The errors of lasagna-judge.

    JudgeError                 base: a problem talking to a model or grading
     +-- LLMCallError          a call failed after every transport retry (or cannot be retried)
     +-- MissingExtraError     a provider needs an optional dependency that is not installed
     +-- JudgeUsageError       a file named by the user is not there (or is a folder)

Messages say what was expected, what was found and what to do, and never contain an API key.
"""

from __future__ import annotations


class JudgeError(Exception):
    """A problem talking to a model or grading; the message says what to do."""


class LLMCallError(JudgeError):
    """A model call failed for good: retries exhausted, or an error no retry can fix.

    `status` is the last HTTP status (None for a connection error or a timeout) and
    `attempts` the number of network requests made for the call.
    """

    def __init__(self, message: str, *, status: int | None = None, attempts: int = 0) -> None:
        super().__init__(message)
        self.status = status
        self.attempts = attempts


class MissingExtraError(JudgeError):
    """A provider's optional dependency is missing; the message names the install command
    (the CLI reports it as a usage error)."""

    def __init__(self, provider: str, extra: str, module: str) -> None:
        super().__init__(
            f"{provider} models need the optional dependency {module!r}, which is not "
            f'installed: run `uv add "lasagna-judge[{extra}]"` (or '
            f'`pip install "lasagna-judge[{extra}]"`'
            # The workspace keeps the compiled llama.cpp out of the default environment.
            + ("; in a lasagna checkout: `uv run --group local ...`)" if extra == "local" else ")")
        )
        self.extra = extra


class JudgeUsageError(JudgeError):
    """A file the user named is not there, or is a folder (the CLI reports it as a usage
    error, not as bad data)."""
