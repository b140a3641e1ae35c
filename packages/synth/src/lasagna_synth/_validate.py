"""Validation of benchmark data: every problem found, each naming its row and field.

Readers collect problems instead of stopping at the first, so a user fixes a file in one
pass; `DataError` lists at most `MAX_PROBLEMS_SHOWN` of them and counts the rest. Each
problem names the file, the row (or line) and the field.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

from lasagna_synth._errors import SynthError

MAX_PROBLEMS_SHOWN = 20


class DataError(SynthError):
    """Benchmark data that cannot be used. `problems` lists every problem found."""

    def __init__(self, label: str, problems: Sequence[str]) -> None:
        self.label = label
        self.problems = list(problems)
        super().__init__(format_problems(label, self.problems))


def format_problems(label: str, problems: Sequence[str]) -> str:
    """A heading with the count, then at most 20 problems, then "and N more"."""
    count = len(problems)
    noun = "problem" if count == 1 else "problems"
    lines = [f"{label}: {count} {noun}; fix {'it' if count == 1 else 'them'} and try again:"]
    lines += [f"  {p}" for p in problems[:MAX_PROBLEMS_SHOWN]]
    if count > MAX_PROBLEMS_SHOWN:
        lines.append(f"  ... and {count - MAX_PROBLEMS_SHOWN} more")
    return "\n".join(lines)


def did_you_mean(word: str, known: Iterable[str], *, quote: str = '"') -> str:
    """` (did you mean "answer"?)` for the closest known word, else an empty string."""
    close = difflib.get_close_matches(word, sorted(known), n=1, cutoff=0.6)
    return f" (did you mean {quote}{close[0]}{quote}?)" if close else ""


def examples(ids: Iterable[str], k: int = 5) -> str:
    """The first `k` ids, quoted, for a message about many."""
    return ", ".join(f'"{i}"' for i in list(ids)[:k])
