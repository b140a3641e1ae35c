"""LASAGNA_MAX_DOCUMENT_MB: how much one document may take, for users with big files.

Every command that reads documents (`synthesize`, `validate-data`, `run --corpus`, kag's
databases) reads them within lasagna-synth's `ReadLimits`; this is where the variable turns
into those limits, which `lasagna`'s root callback sets for the whole command
(`lasagna_synth.using_read_limits`), so no layer between a command and the loader carries
them. docs/reference/reading.md lists the bounds.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from lasagna_cli.commands._errors import USAGE_ERROR, CliError

ENV = "LASAGNA_MAX_DOCUMENT_MB"
DEFAULT_MB = 64


def limits_from_env(env: Mapping[str, str]) -> float:
    """The megabytes LASAGNA_MAX_DOCUMENT_MB gives (64 when unset); a bad value is a usage
    error."""
    raw = env.get("LASAGNA_MAX_DOCUMENT_MB", "").strip()
    if not raw:
        return DEFAULT_MB
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (value > 0 and math.isfinite(value)):
        raise CliError(
            f"{ENV}: expected a number of megabytes above 0, found {raw[:40]!r}; e.g. "
            f"{ENV}=256 reads documents of up to 256 MB (default {DEFAULT_MB})",
            USAGE_ERROR,
        )
    return value


@contextmanager
def document_limits(env: Mapping[str, str] | None = None) -> Iterator[None]:
    """Inside the block, documents are read within the limits LASAGNA_MAX_DOCUMENT_MB sets;
    a file over one is skipped with a reason that names the variable."""
    from lasagna_synth._limits import ReadLimits, using_read_limits

    max_mb = limits_from_env(os.environ if env is None else env)
    limits = ReadLimits(max_mb=max_mb, hint=f"{ENV}=<MB> raises it (now {max_mb:g})")
    with using_read_limits(limits):
        yield
