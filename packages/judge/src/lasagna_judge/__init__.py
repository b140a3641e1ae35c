"""The one door to LLMs for lasagna, and grading that never lies."""

from lasagna_judge._cache import default_cache_path
from lasagna_judge._errors import JudgeError, LLMCallError, MissingExtraError
from lasagna_judge._llm import LLM, make_llm, parse_model
from lasagna_judge._providers import is_reasoning_model
from lasagna_judge._retry import RetryPolicy
from lasagna_judge._types import Completion, Structured, Usage

__all__ = [
    "LLM",
    "Completion",
    "JudgeError",
    "LLMCallError",
    "MissingExtraError",
    "RetryPolicy",
    "Structured",
    "Usage",
    "default_cache_path",
    "is_reasoning_model",
    "make_llm",
    "parse_model",
]
