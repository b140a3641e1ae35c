"""The two ways a system under test can go wrong while it runs.

SystemFailure          the system failed on one question: an exception in a callable,
                       HTTP 500 after every retry, a timeout. Recorded for that item as
                       an error, never scored as a wrong answer.
SystemOutputError      the system answered, but not in a shape lasagna can score (a
                       number instead of a string, a mapping without "answer" ...).
                       On the first question this stops the run with one line; later,
                       it is recorded for the item like a failure.
"""

from __future__ import annotations


class SystemFailure(Exception):
    """The system failed on one question; the message says how."""


class SystemOutputError(SystemFailure):
    """The system's reply cannot be scored; the message says what was expected."""
