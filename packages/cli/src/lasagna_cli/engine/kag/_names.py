"""Component names, shared by every file the sweep reads."""

from __future__ import annotations

import re
from collections.abc import Iterable

_COMPONENT = re.compile(r"[a-z0-9][a-z0-9-]*\Z")
MAX_NAME_LENGTH = 100


def is_component_name(name: object) -> bool:
    """Lowercase letters, digits and hyphens, starting with a letter or digit.

    Names become folder and file names, so nothing else (no dots, slashes, spaces or
    capitals that differ only in case on some filesystems) is allowed.
    """
    return isinstance(name, str) and len(name) <= MAX_NAME_LENGTH and bool(_COMPONENT.match(name))


def suggest_name(name: object) -> str:
    """A component name close to `name`, for the error message."""
    text = re.sub(r"[^a-z0-9-]+", "-", str(name).lower()).strip("-")
    return text[:MAX_NAME_LENGTH] or "q1"


def one_of(choices: Iterable[str]) -> str:
    names = sorted(choices)
    return ", ".join(names) if names else "(none)"
