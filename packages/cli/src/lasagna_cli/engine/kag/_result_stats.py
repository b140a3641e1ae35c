"""kag's `stats` object of a result file, in the layout serde gives kag's Rust structs.

kag 0.2 (`src/generation/config.rs`, `src/retrieval/`, `src/cli/generation.rs`) writes an
ok result as `{"ok": {"result": str, "stats": Stats}}`, where Stats is

    prompt: str                       the prompt sent to the model (one user message)
    retrieval: null | {"result": str, "stats": {"embedder": {
        "embedding": {"document": str, "vec": [float]},
        "database": {"neo4j": {"vertices": int, "relationships": int,
                               "properties": int, "time": Duration}},
        "time": Duration}}}
    config: {"augmented_generation": null | {"retriever": name, "database": name},
             "provider": name, "model": str, "temperature": float, "tokens": null | int}
    time: Duration                    the whole generation, retrieval included

and a Duration is serde's `{"secs": u64, "nanos": u32}`. `kag stats` reads the whole
object (a file it cannot read is left out with a warning), so lasagna writes every field,
its own keys beside them. kag's only retrieval shape is an embedder over Neo4j; lasagna's
retrievers (BM25, dense, hybrid) are neither, so their files say `retrieval: null` and keep
the retrieval in lasagna's own keys (`retrieval_time_s`, `passages`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lasagna_cli.engine.config._config import Setup

NANOS = 1_000_000_000
U64_MAX = 2**64 - 1


def duration(seconds: float) -> dict[str, int]:
    """serde's encoding of a `std::time::Duration` of `seconds` (rounded to nanoseconds)."""
    secs, nanos = divmod(max(0, round(seconds * NANOS)), NANOS)
    return {"secs": secs, "nanos": nanos}


def kag_config(setup: Setup) -> dict[str, Any]:
    """The setup as kag's `Generation` (its `config`): component names, the model id as the
    provider knows it, the temperature sent (lasagna's 0.0 when the setup sets none).

    A setup that is the user's own system names no provider or model; kag has no such
    setup, so its `config` says provider `system` and the system (callable or URL) as the
    model, which is what a reader of the table needs to tell the setups apart.
    """
    if setup.system is not None:
        return {
            "augmented_generation": None,
            "provider": "system",
            "model": setup.system.label.removeprefix("--system "),
            "temperature": 0.0,
            "tokens": None,
        }
    model = setup.generator
    assert model is not None
    augmented = None
    if setup.retriever_name is not None and setup.database is not None:
        augmented = {"retriever": setup.retriever_name, "database": setup.database.name}
    provider = model.provider.name if model.provider is not None else model.name.partition("/")[0]
    return {
        "augmented_generation": augmented,
        "provider": provider,
        "model": model.name.partition("/")[2],
        "temperature": float(model.temperature or 0.0),
        "tokens": model.max_tokens,
    }


# -- reading -----------------------------------------------------------------------------


def nanos_of(value: Any) -> int | None:
    """A serde Duration in nanoseconds, or None when `value` is not one (kag would refuse
    the file)."""
    if not isinstance(value, dict):
        return None
    secs, nanos = value.get("secs"), value.get("nanos")
    if not (isinstance(secs, int) and isinstance(nanos, int) and _count(secs) and _count(nanos)):
        return None
    if secs > U64_MAX or nanos > 2**32 - 1:
        return None
    return secs * NANOS + nanos


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


@dataclass(frozen=True, slots=True)
class KagTiming:
    """What `kag stats` takes from one ok result (`stats/mod.rs`); durations in ns."""

    generation_ns: int | None
    """`stats.time`: the whole generation; None when the file has no kag `time`."""
    context_length: int | None
    """`stats.prompt.len()`: the prompt's length in UTF-8 bytes, as Rust's `str::len`."""
    retrieval: tuple[int, int, int, int] | None
    """The embedder's time and Neo4j's vertices, relationships, properties."""

    @property
    def timed(self) -> tuple[int, int] | None:
        """kag's (time, context length) pair: both or neither (a kag file has both)."""
        if self.generation_ns is None or self.context_length is None:
            return None
        return (self.generation_ns, self.context_length)


def kag_timing(stats: dict[str, Any]) -> KagTiming:
    """kag's figures of an ok result's `stats`, each None where the file lacks it (a file
    lasagna wrote before kag's fields were added has only lasagna's own keys)."""
    prompt = stats.get("prompt")
    context = len(prompt.encode("utf-8", "surrogatepass")) if isinstance(prompt, str) else None
    return KagTiming(nanos_of(stats.get("time")), context, _retrieval(stats.get("retrieval")))


def _retrieval(value: Any) -> tuple[int, int, int, int] | None:
    try:
        embedder = value["stats"]["embedder"]
        neo4j = embedder["database"]["neo4j"]
        counts = [neo4j[k] for k in ("vertices", "relationships", "properties")]
    except (KeyError, TypeError):
        return None
    time = nanos_of(embedder.get("time"))
    if time is None or not all(_count(c) for c in counts):
        return None
    return (time, counts[0], counts[1], counts[2])
