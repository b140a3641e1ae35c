"""Systems under test: the user's own RAG system, scored by the engine's metrics.

Four ways in, one shape out (`SystemOutput`: an answer and/or a ranked list of retrieved
items):

- `_predictions`: a JSONL file of outputs produced elsewhere, checked against the data's ids.
- `_callable`: `package.module:attr` (or `path/to/file.py:attr`), a function (sync or async)
  or a factory returning one; LangChain retrievers and runnables through `_langchain`.
- `_http`: an endpoint that takes `{"question", "id", "top_k"}` and replies
  `{"answer", "retrieved"}`, with concurrency, timeouts and lasagna-judge's retry rules.
- `_output`: what a system may return, and the checks on it; `_match`: retrieved ids or
  passage texts mapped to the corpus.
- `_spec`: how a setup names its system (flags; sweep files: `_spec_sweep`), described
  without secrets.
- `_adapter`: the interface every live system has (`ask`, `describe`, `aclose`).
"""

from lasagna_cli.engine.systems._adapter import SystemAdapter
from lasagna_cli.engine.systems._errors import SystemFailure, SystemOutputError
from lasagna_cli.engine.systems._load import LoadedSystem, load_system
from lasagna_cli.engine.systems._match import UNMATCHED_PREFIX, CorpusMatcher, match_ranking
from lasagna_cli.engine.systems._output import EXPECTED, Retrieved, SystemOutput, normalize
from lasagna_cli.engine.systems._predictions import (
    PredictionCheck,
    Predictions,
    check_predictions,
    count_reasons,
    quoted,
)
from lasagna_cli.engine.systems._protocol import (
    RetrievedItem,
    Row,
    System,
    SystemReply,
    SystemResult,
)
from lasagna_cli.engine.systems._spec import (
    SystemSpec,
    default_setup_name,
    redact_url,
    spec_from_flags,
    spec_from_target,
)
from lasagna_cli.engine.systems._spec_sweep import spec_from_sweep

__all__ = [
    "EXPECTED",
    "UNMATCHED_PREFIX",
    "CorpusMatcher",
    "LoadedSystem",
    "PredictionCheck",
    "Predictions",
    "Retrieved",
    "RetrievedItem",
    "Row",
    "System",
    "SystemAdapter",
    "SystemFailure",
    "SystemOutput",
    "SystemOutputError",
    "SystemReply",
    "SystemResult",
    "SystemSpec",
    "check_predictions",
    "count_reasons",
    "default_setup_name",
    "load_system",
    "match_ranking",
    "normalize",
    "quoted",
    "redact_url",
    "spec_from_flags",
    "spec_from_sweep",
    "spec_from_target",
]
