"""manifest.json: a run's configuration (model names only, never a secret), the package
versions and the seeds, with the sha256 of the configuration."""

from __future__ import annotations

import hashlib
import json
import platform
from collections.abc import Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from lasagna_cli.engine.config._config import RunConfig
from lasagna_cli.engine.plan._plan import PlannedDataset

MANIFEST_FORMAT = "lasagna-run-manifest/1"
_VERSIONED = (
    "lasagna-cli",
    "lasagna-metrics",
    "lasagna-judge",
    "lasagna-synth",
    "numpy",
    "PyStemmer",
    "wordllama",
    "usearch",
)


def package_versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for dist in _VERSIONED:
        try:
            found[dist] = version(dist)
        except PackageNotFoundError:
            found[dist] = "not installed"
    return found


def manifest(
    config: RunConfig, plan: Sequence[PlannedDataset], judge: Mapping[str, Any] | None
) -> dict[str, Any]:
    config_part = {
        "profile": config.profile,
        "seed": config.seed,
        "judge": dict(judge) if judge else None,
        "benchmarks": [_benchmark(b) for b in plan],
        "setups": [
            {
                "name": s.name,
                # A system ranks for itself: of the retriever settings only top_k applies.
                "retriever": (s.retriever.to_dict() if s.retriever else None)
                if s.system is None
                else {"top_k": s.top_k},
                "generator": s.generator.name if s.generator else None,
                **(
                    {"generator_endpoint": s.generator.endpoint}
                    if s.generator is not None and s.generator.endpoint is not None
                    else {}
                ),
                "tracks": list(s.tracks) if s.tracks else None,
                # Present only for a system: the built-in setups keep their config hash.
                **({"system": s.system.describe()} if s.system is not None else {}),
            }
            for s in config.setups
        ],
    }
    blob = json.dumps(config_part, sort_keys=True).encode()
    return {
        "format": MANIFEST_FORMAT,
        "config_hash": hashlib.sha256(blob).hexdigest(),
        "config": config_part,
        "source": config.source,
        "seeds": {"sampling": config.seed, "bootstrap": config.seed},
        "versions": package_versions(),
    }


def _benchmark(bench: PlannedDataset) -> dict[str, Any]:
    dataset = bench.dataset
    corpus = dataset.corpus
    return {
        "name": bench.name,
        "revision": dataset.revision,
        "kind": dataset.kind,
        "given_as": bench.entry.where,
        # A registered benchmark's passages (path data keeps its config hash).
        **({"corpus": corpus.rule} if corpus is not None and corpus.rule else {}),
        "split": bench.split,
        "n_samples": bench.entry.n_samples,
        "filters": {k: list(v) for k, v in bench.entry.filters.items()},
        "drop_unknown_judgments": bench.entry.drop_unknown_judgments,
        "questions": len(bench.questions),
        "sample_ids_sha256": bench.sample_ids_sha256,
        "setups": [
            {
                "name": p.setup.name,
                "tracks": list(p.tracks),
                "generation_mode": p.generation_mode,
                **({"system": dict(p.system_identity)} if p.system_identity else {}),
            }
            for p in bench.setups
        ],
    }
