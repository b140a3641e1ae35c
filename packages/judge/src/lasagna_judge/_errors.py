"""The one base error of lasagna-judge."""


class JudgeError(Exception):
    """A problem talking to a model or grading; the message says what to do."""
