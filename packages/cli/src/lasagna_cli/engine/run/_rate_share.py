"""Rate limits (requests and tokens a minute) given to a whole run, and the share of them
this process may use: all of it on the driver, 1/N on each of a Ray run's N workers, so
that the run as a whole stays under the limit it was given."""

from __future__ import annotations

import math

from lasagna_cli.engine._errors import EngineUsageError

_share = 1.0


def rate_share() -> float:
    """The share of the run's limits this process's models may use (1.0: all)."""
    return _share


def set_rate_share(share: float) -> None:
    """Set by a Ray worker for its process: 1 / the run's workers."""
    global _share
    if not 0 < share <= 1:
        raise ValueError(f"a share of the rate limits is in (0, 1], got {share}")
    _share = share


def shared(limit: float | None) -> float | None:
    """This process's part of a run's limit (None: no limit)."""
    return None if limit is None else limit * _share


def check_rate(value: object, where: str) -> float | None:
    """A limit a minute as a file or a flag gives it: a number > 0, or None for none; the
    error says what was found."""
    if value is None:
        return None
    number: float | None = None
    if isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip().replace("_", ""))
        except ValueError:
            number = None
    if number is None or not math.isfinite(number) or number <= 0:
        raise EngineUsageError(
            f"{where}: expected a number a minute > 0 (e.g. 500), got {value!r}; leave it "
            "out for no limit (the pace still adapts to the provider's 429s)"
        )
    return number
