"""Validation of benchmark data: every problem found, and what each track needs.

Readers collect problems instead of stopping at the first, so a user fixes a file in one
pass; `DataError` lists at most `MAX_PROBLEMS_SHOWN` of them and counts the rest. Each
problem names the file, the row (or line) and the field.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from lasagna_synth._errors import SynthError

if TYPE_CHECKING:
    from lasagna_synth._rows import BenchmarkData, Track, TrackSupport

MAX_PROBLEMS_SHOWN = 20


class DataError(SynthError):
    """Benchmark data that cannot be used. `problems` lists every problem found."""

    exit_code = 1

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


def _count(n: int, noun: str, plural: str = "") -> str:
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def track_support(data: BenchmarkData) -> dict[Track, TrackSupport]:
    """What each track needs, checked against the data, with a reason either way."""
    from lasagna_synth._rows import TrackSupport

    rows = data.rows()
    judged = sum(1 for r in rows if r.relevant)
    answered = sum(1 for r in rows if r.answers)
    unanswerable = sum(1 for r in rows if r.unanswerable)
    docs = _count(len(data.corpus), "document")

    if not data.corpus:
        retrieval = TrackSupport(
            "retrieval",
            False,
            "no row has contexts, so there is nothing to retrieve",
            'add "contexts" to the rows, or use a BEIR folder',
        )
    elif not judged:
        retrieval = TrackSupport(
            "retrieval",
            False,
            "every row with contexts is unanswerable, so no passage is relevant to any question",
            'add "contexts" to answerable rows',
        )
    elif data.kind == "beir":
        retrieval = TrackSupport(
            "retrieval",
            True,
            f"{_count(judged, 'query', 'queries')} judged over a corpus of {docs}",
        )
    else:
        retrieval = TrackSupport(
            "retrieval",
            True,
            f"{_count(judged, 'question')} with relevant passages, searched in a pool of {docs} "
            "(every row's passages: an easier search than a real corpus, labelled pooled_gold)",
        )

    if data.kind == "beir":
        why = "a BEIR folder has relevance judgments but no answers"
        fix = 'use a JSONL file with "answer" fields'
        generation = TrackSupport("generation", False, why, fix)
        closed_book = TrackSupport("closed-book", False, why, fix)
    elif not answered and not unanswerable:
        why = 'no row has an "answer"'
        fix = 'add an "answer" to the rows'
        generation = TrackSupport("generation", False, why, fix)
        closed_book = TrackSupport("closed-book", False, why, fix)
    else:
        scored = f"{_count(answered, 'question')} with answers"
        if unanswerable:
            scored += f" and {unanswerable:,} unanswerable (a refusal is the right answer)"
        if data.corpus:
            how = "the generator answers from the top-k retrieved passages"
        else:
            how = "no contexts, so the generator answers closed-book"
        generation = TrackSupport("generation", True, f"{scored}; {how}")
        closed_book = TrackSupport(
            "closed-book", True, f"{scored}; the generator answers without passages"
        )
    return {"retrieval": retrieval, "generation": generation, "closed-book": closed_book}
