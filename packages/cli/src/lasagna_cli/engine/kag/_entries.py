"""What config.toml's entries become, and the checks every entry shares."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lasagna_cli.engine._errors import EngineError, did_you_mean


@dataclass(frozen=True, slots=True)
class Retriever:
    name: str
    type: str
    """bm25, dense, hybrid (lasagna's), or Embedder (kag's: it searches Neo4j)."""
    top_k: int
    settings: tuple[tuple[str, Any], ...] = ()
    """dense and hybrid: embedder, rrf_k, weights, as given; Embedder: provider, model,
    and `extra`, the names of the databases it has Neo4j settings for."""

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "top_k": self.top_k, **dict(self.settings)}

    @property
    def extra(self) -> tuple[str, ...]:
        return tuple(dict(self.settings).get("extra", ()))


@dataclass(frozen=True, slots=True)
class GraphDatabase:
    """kag's `type = "Neo4j"` database; its password is not kept."""

    name: str
    uri: str
    user: str
    database: str


def check_keys(path: Path, where: str, body: dict[str, Any], allowed: tuple[str, ...]) -> None:
    for key in body:
        if key not in allowed:
            raise EngineError(
                f"{path}: {where}: unknown key {key!r}{did_you_mean(key, allowed)}; "
                f"expected one of {', '.join(allowed)}"
            )


def string(path: Path, where: str, body: dict[str, Any], key: str) -> str | None:
    value = body.get(key)
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise EngineError(f"{path}: {where}.{key}: expected a non-empty string, found {value!r}")
    return value


def integer(path: Path, where: str, body: dict[str, Any], key: str, default: int, low: int) -> int:
    value = body.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise EngineError(f"{path}: {where}.{key}: expected an integer >= {low}, found {value!r}")
    return value
