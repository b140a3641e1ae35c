"""One sanitiser for what files and documents put on a terminal.

A file name or a document's text can carry escape sequences: printed raw, `ESC[2J` clears
the screen, `ESC]0;...BEL` sets the window's title, and a bare carriage return hides what
came before it on the line. Every file name, skip reason and document text a command prints
(and every line of the engine's reports that quotes them) goes through `shown` first, which
writes each control character (C0, DEL, C1, and the bidirectional overrides that reorder
what is read) as a visible escape, as `repr` would: `\\x1b[2J`, `\\r`, `\\u202e`. Newlines
are kept where a caller asks (a multi-line message).
"""

from __future__ import annotations

import re

_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_CONTROL_OR_NEWLINE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group(0)
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def shown(text: str, *, keep_newlines: bool = False) -> str:
    """`text` with every control character written as a visible escape (tabs too; newlines
    only unless `keep_newlines`)."""
    return (_CONTROL if keep_newlines else _CONTROL_OR_NEWLINE).sub(_escape, text)
