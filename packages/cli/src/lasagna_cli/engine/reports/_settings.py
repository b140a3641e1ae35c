"""What setups vary: every setting that differs between the `setup` sections of results
(the leaderboard's caption, `compare`'s header, the report's "compared").

results.json's own `varied` lists the retriever settings that left the comparability key,
and only "retriever" when the methods differ (BM25 against dense), which hid a chunk size
that varied beside it; nor does it cover the generator or the prompt. This reads the
setups themselves: the retriever's method, each of its settings (chunker, chunk size and
overlap, top_k, BM25's and the embedder's), the generator, the prompt, the tracks run and a
user's system.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

#: A setup's fields that are not settings: its name, and what its run found (the index).
_NOT_SETTINGS = ("name", "retrieval_index")
#: The order settings are named in: how the documents were cut, the retriever, its own
#: settings (by name, as results.json's `varied`), then how answers are made; the rest after.
_FIRST = ("chunker", "chunk_size", "chunk_overlap", "retriever")
_ANSWER = ("generator", "generator_endpoint", "prompt", "generation_mode", "tracks", "system")


def _settings(setup: Mapping[str, Any]) -> dict[str, str]:
    """A setup's settings by the name the caption uses, each as comparable text."""
    found: dict[str, str] = {}
    for key, value in setup.items():
        if key in _NOT_SETTINGS:
            continue
        if key == "retriever" and isinstance(value, Mapping):
            for inner, setting in value.items():
                if inner != "name":  # kag's label of its retriever, not a setting
                    name = "retriever" if inner in ("method", "type") else inner
                    found[name] = json.dumps(setting, sort_keys=True)
        elif key == "prompt_sha256":
            found["prompt"] = json.dumps(value)
        else:
            found[key] = json.dumps(value, sort_keys=True)
    if setup.get("retriever") is None and "retriever" in setup:
        found["retriever"] = "null"  # retrieves nothing
    return found


def varied_settings(setups: Sequence[Mapping[str, Any]]) -> list[str]:
    """The settings that differ between these `setup` sections, in the caption's order. A
    setting one of them lacks counts as differing, except a retriever's own (BM25's k1, a
    dense retriever's embedder) when the retrievers' methods differ: "retriever" says it."""
    if len(setups) < 2:
        return []
    each = [_settings(setup) for setup in setups]
    names = {name for settings in each for name in settings}
    varied = {name for name in names if len({s.get(name) for s in each}) > 1}
    own = {k for s in setups if isinstance(s.get("retriever"), Mapping) for k in s["retriever"]}
    if "retriever" in varied:  # another method: its own settings (k1, embedder) go with it
        varied -= {k for k in own - {"method", "type"} if any(k not in s for s in each)}
    first = [name for name in _FIRST if name in varied]
    retriever = sorted(varied & own - set(_FIRST) - {"method", "type", "name"})
    answer = [name for name in _ANSWER if name in varied]
    return first + retriever + answer + sorted(varied - set(first + retriever + answer))
