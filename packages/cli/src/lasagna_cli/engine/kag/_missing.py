"""Setups that cannot run here, recorded per task in kag's error shape instead of failing
the file: a missing component (`--missing-as-errors`, kag's behaviour) or a retrieval that
needs a Neo4j server, which lasagna cannot reach."""

from __future__ import annotations

from lasagna_cli.engine._errors import EngineError
from lasagna_cli.engine.kag._config import Config


class MissingComponent(EngineError):
    """A setup names a provider, retriever or database the config does not have. With
    `missing_as_errors` (kag's behaviour) the setup's tasks are recorded as this error."""

    def __init__(self, message: str, task_error: str) -> None:
        super().__init__(message)
        self.task_error = task_error


class NeedsNeo4j(MissingComponent):
    """A setup whose retrieval needs a Neo4j server, which lasagna cannot reach: each of its
    tasks is recorded as this error (kag's shape) and the other setups run."""


def neo4j_error(config: Config, retriever: str, database: str) -> NeedsNeo4j | None:
    """The error of a setup retrieving with kag's Embedder or from a Neo4j database; None
    for lasagna's own retrievers over lasagna's databases."""
    found = config.retrievers[retriever]
    graph = config.graphs.get(database)
    if graph is None and found.type != "Embedder":
        return None
    if graph is None:
        raise EngineError(
            f"{config.path}: retriever {retriever!r} is kag's Embedder, which searches a Neo4j "
            f"database; database {database!r} holds documents: give the setup a retriever of "
            'type = "dense" (or "bm25", "hybrid")'
        )
    if found.type != "Embedder":
        raise EngineError(
            f"{config.path}: database {database!r} is a Neo4j database; retriever "
            f"{retriever!r} ({found.type}) searches documents (kag: mismatched database and "
            "retriever backend variants)"
        )
    # kag's anyhow chain, "context: cause" (`retrieval/mod.rs`): the embedder's provider is
    # looked up first, then the query embedded, then Neo4j searched with `extra`'s settings.
    context = f"Failed during the knowledge retrieval phase (KAG) on database '{database}'"
    embedder = dict(found.settings).get("provider")
    if embedder not in config.providers:
        cause = f"The requested provider '{embedder}' is missing from the configuration."
    elif database not in found.extra:
        cause = (
            f"Failed to execute vector retrieval for database '{database}': Missing "
            f"configuration parameters for Neo4j database '{graph.database}'. Ensure that "
            "'extra' contains a valid 'Neo4j' configuration block matching this retriever."
        )
    else:
        cause = (
            "lasagna cannot connect to a Neo4j database; benchmark this pipeline as your own "
            "system (a setup with `system =`, or --system; see docs/coming-from/kag.md)"
        )
    message = f"{context}: {cause}"
    return NeedsNeo4j(message, message)
