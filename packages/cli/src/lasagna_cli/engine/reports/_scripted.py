"""Which models behind a run's figures are scripted (`fake/...`, lasagna_judge's canned
model for trying the commands), and the note that says so wherever the figures are shown:
the leaderboard under `benchmark run`, the HTML report. A result names its models in its
setup (the generator, a sweep's provider model) and in what it held fixed (the judge, a
jury's judges).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

_MODEL_KEYS = frozenset({"generator", "model", "judge", "judges", "models"})


def scripted_models(results: Iterable[Mapping[str, Any]]) -> list[str]:
    """The scripted models the results name, sorted, each once."""
    from lasagna_judge import is_scripted

    found: set[str] = set()

    def walk(value: Any, named: bool) -> None:
        if isinstance(value, str):
            if named and is_scripted(value):
                found.add(value)
        elif isinstance(value, Mapping):
            for key, inner in value.items():
                walk(inner, named or key in _MODEL_KEYS)
        elif isinstance(value, list | tuple):
            for inner in value:
                walk(inner, named)

    for result in results:
        walk(result.get("setup"), False)
        walk(result.get("held_fixed"), False)
    return sorted(found)


def scripted_note_of(results: Iterable[Mapping[str, Any]]) -> str | None:
    """lasagna_judge's note on scripted figures for the results' scripted models; None when
    no model of theirs is scripted."""
    from lasagna_judge import scripted_note

    return scripted_note(scripted_models(results))
