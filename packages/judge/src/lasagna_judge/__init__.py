"""The one door to LLMs for lasagna, and grading that never lies."""

from lasagna_judge._errors import JudgeError

__all__ = ["JudgeError"]
