"""A setup's retrieval, as SETUPS.toml names it, resolved against config.toml.

kag's `Generation` holds `augmented_generation: Option<AugmentedGeneration>`, and a setup
flattens it, so kag writes a Knowledge-Augmented setup

    [kag-rag]
    augmented_generation = { retriever = "bm25-top3", database = "handbook" }

and records that very table as `config.augmented_generation` in each result file. kag's
README says "add a `retriever` and a `database`" at the top level instead; kag's serde
drops those keys and runs the setup without retrieval. lasagna takes both spellings, each
with retrieval (the README's promise), and refuses a setup that gives both.

The references are checked in kag's order (`generation/config.rs`): the retriever, then
the database, then the provider, so that a setup recorded per task with
`--missing-as-errors` carries the error kag would write.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

from lasagna_cli.engine._errors import EngineError, EngineUsageError, did_you_mean
from lasagna_cli.engine.config._config import DatabaseSpec, RetrieverSpec
from lasagna_cli.engine.kag._config import Config, Retriever
from lasagna_cli.engine.kag._missing import MissingComponent
from lasagna_cli.engine.kag._names import one_of

AUGMENTED = "augmented_generation"
AUGMENTED_KEYS = ("retriever", "database")
EXAMPLE = 'augmented_generation = { retriever = "bm25-top3", database = "handbook" }'


def component(
    path: Path, setup: str, key: str, value: Any, known: Collection[str], kind: str
) -> str | None:
    """`value`, a name among `known`; None when absent. A string naming none of them is a
    `MissingComponent` (kag's task error with `--missing-as-errors`)."""
    if value is None:
        return None
    if isinstance(value, str) and value not in known:
        raise MissingComponent(
            f"{path}: setup {setup!r}: {key} {value!r} is not a {kind} of the config"
            f"{did_you_mean(value, known)}; known: {one_of(known)} (--missing-as-errors "
            "records its tasks as errors and runs the other setups, as kag does)",
            f"The requested {kind} {value!r} is missing from the configuration.",
        )
    if not isinstance(value, str):
        raise EngineError(
            f"{path}: setup {setup!r}: {key} {value!r} is not a {kind} of the config"
            f"{did_you_mean(str(value), known)}; known: {one_of(known)}"
        )
    return value


def _named(path: Path, setup: str, body: dict[str, Any]) -> tuple[str, Any, Any]:
    """(where the names are written, retriever, database), as the setup gives them."""
    top = [key for key in AUGMENTED_KEYS if key in body]
    if AUGMENTED not in body:
        return "", body.get("retriever"), body.get("database")
    if top:
        raise EngineError(
            f"{path}: setup {setup!r}: gives both `{AUGMENTED}` and a top-level `{top[0]}`; "
            f"name the retrieval once, as kag does: {EXAMPLE}"
        )
    table = body[AUGMENTED]
    if not isinstance(table, dict):
        raise EngineError(
            f"{path}: setup {setup!r}: expected `{AUGMENTED}` to be a table, found "
            f"{type(table).__name__}; write {EXAMPLE}"
        )
    for key in table:
        if key not in AUGMENTED_KEYS:
            raise EngineError(
                f"{path}: setup {setup!r}: {AUGMENTED}: unknown key {key!r}"
                f"{did_you_mean(key, AUGMENTED_KEYS)}; expected retriever and database"
            )
    for key in AUGMENTED_KEYS:
        if key not in table:
            raise EngineError(
                f"{path}: setup {setup!r}: {AUGMENTED}: missing `{key}` (kag requires both "
                f"retriever and database); write {EXAMPLE}"
            )
    return f"{AUGMENTED}.", table["retriever"], table["database"]


def retrieval_refs(
    path: Path, setup: str, body: dict[str, Any], config: Config
) -> tuple[str, str] | None:
    """The (retriever, database) names the setup retrieves with, each checked against the
    config (the retriever first, as kag); None for a setup without retrieval."""
    where, retriever_value, database_value = _named(path, setup, body)
    retriever = component(
        path, setup, f"{where}retriever", retriever_value, config.retrievers, "retriever"
    )
    database = component(
        path,
        setup,
        f"{where}database",
        database_value,
        [*config.databases, *config.graphs],
        "database",
    )
    if retriever is None and database is None:
        return None
    if retriever is None or database is None:
        raise EngineError(
            f"{path}: setup {setup!r}: a retrieval setup names both `retriever` and `database` "
            f"(found only {'retriever' if retriever else 'database'}); or write {EXAMPLE}"
        )
    return retriever, database


def retriever_spec(
    path: Path, name: str, found: Retriever, database: DatabaseSpec | None
) -> RetrieverSpec:
    """A config retriever over a database: a dense or hybrid one takes its embedder (and
    vector store) from the retriever, else from a `type = "vector"` database."""
    from lasagna_cli.engine.config._flags import retriever_spec as spec_of

    values: dict[str, Any] = {"top_k": found.top_k, "kind": found.type, **dict(found.settings)}
    if found.type != "bm25" and database is not None and database.vector:
        values.setdefault("embedder", database.embedder)
        values.update(store=database.store, collection=database.collection)
    values = {k: v for k, v in values.items() if v is not None}
    try:
        return spec_of(values, f"retrievers.{found.name}", RetrieverSpec())
    except EngineUsageError as exc:
        raise EngineError(f"{path}: setup {name!r}: {exc}") from None
