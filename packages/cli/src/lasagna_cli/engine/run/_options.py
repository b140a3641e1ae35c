"""The options of one run (`RunOptions`), and the judge's identity they make: what enters
every graded record's fingerprint, so that another judge, rubric or jury regrades."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lasagna_cli.engine._data import Corpus
from lasagna_cli.engine.config._config import JUDGE_MAX_CHARS, ModelSpec
from lasagna_cli.engine.run._jury import jury_identity

if TYPE_CHECKING:
    from lasagna_judge import Rubric


@dataclass
class RunOptions:
    judge: str | None = None
    """The judge's model name; its rubric is `rubric`."""
    judge_endpoint: str | None = None
    jury: tuple[ModelSpec, ...] = ()  # the other judges of a jury (`_jury`)
    rubric: Rubric | None = None
    judge_max_chars: int = JUDGE_MAX_CHARS  # question, references and answer sent at most
    diagnostics: bool = False
    """The judge's claim-level diagnosis of each generated answer (`_diagnostics`)."""
    resume: bool = False
    retry_failed: bool = True
    """Failed tasks are run again on resume (kag's sweep keeps them unless asked)."""
    probe_systems: bool = True
    """Systems are probed, and a run whose first model calls all fail stops (`_first_calls`);
    kag's sweep does neither: every task is asked and recorded."""
    concurrency: int = 8
    databases: Mapping[str, Corpus] = field(default_factory=dict)
    vector_folder: Path | None = None
    """Where corpus vectors (and HNSW graphs) are kept between runs; None: not kept."""
    ingest_per_document: bool = False
    """Embed a corpus one source document at a time (OpenViking's per_file ingestion)."""


def judge_identity(options: RunOptions) -> dict[str, Any] | None:
    if options.judge is None or options.rubric is None:
        return None
    rubric = options.rubric
    identity: dict[str, Any] = {
        "model": options.judge,
        "rubric": rubric.id,
        "rubric_version": rubric.version,
    }
    if options.judge_endpoint is not None:  # its server is part of who graded
        identity["endpoint"] = options.judge_endpoint
    if options.diagnostics:  # the claims prompt's version: a new one regrades
        from lasagna_judge import CLAIMS_PROMPT

        identity["diagnostics"] = CLAIMS_PROMPT
    if options.jury:  # a lone judge's identity (and fingerprints) stay as they were
        identity.update(jury_identity(options.jury))
    return identity
