"""Secrets kept out of error messages: an API key, a header's value. A server may quote
what it was sent (`401: invalid token sk-...`), and an error line goes to stderr and into
result files; every secret is replaced by `***` wherever it stands."""

from __future__ import annotations

from collections.abc import Iterable

#: Shorter values are not secrets worth the cost of hiding them ("1", "yes") and would
#: blank out ordinary words of a message.
MIN_SECRET_CHARS = 4


def secrets_of(values: Iterable[str]) -> tuple[str, ...]:
    """The values to redact, longest first (so a key is hidden whole before a part of it),
    each credential also without its scheme ("Bearer abc" hides "abc" too: a server may
    quote the token alone)."""
    found: set[str] = set()
    for value in values:
        value = value.strip()
        found.add(value)
        scheme, _, token = value.partition(" ")
        if token and scheme.isalpha():
            found.add(token.strip())
    return tuple(sorted((s for s in found if len(s) >= MIN_SECRET_CHARS), key=len, reverse=True))


def redact(text: str, secrets: Iterable[str]) -> str:
    """`text` with each of `secrets` replaced by `***`."""
    for secret in secrets:
        text = text.replace(secret, "***")
    return text
