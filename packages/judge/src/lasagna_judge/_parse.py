"""Reading a score out of a judge's raw text, when schema-enforced output failed.

Three steps, stopping at the first that finds a score:
1. JSON: every JSON object in the text (code fences or not) that has a numeric "score";
2. a `score: n` pattern (`"score": 3`, `Score = 3`, `**Score:** 3`, `score of 3`), or
   `n/4` / `n out of 4` with the rubric's top score as the denominator;
3. a standalone number in the rubric's scale, when the text names only one such value (or
   its last line is that number alone).
Values from steps 1 and 2 that fall outside the scale follow the rubric's out-of-scale rule;
step 3 only ever sees in-scale numbers. When nothing is found the caller records `unparsed`:
a guess is never made.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Literal

from lasagna_judge._rubrics import Rubric

ParsePath = Literal["json", "regex"]

_SCORE_KEYS = ("score", "grade", "rating")
_REASONING_KEYS = ("reasoning", "explanation", "rationale", "reason", "justification")
_NUMBER = r"([-+]?\d+(?:\.\d+)?)"
# "score" then separators (quotes, markdown emphasis, ':' or '=', "is"/"of"), then a number.
_SCORE_PATTERN = re.compile(
    r"\bscore\b[\"'`*_]*\s*(?:[:=]|\bis\b|\bof\b)?[\s\"'`*_:]*(?:\bis\b|\bof\b)?\s*" + _NUMBER,
    re.IGNORECASE,
)
# A number that is a whole token: not part of a longer number, a word, a money amount or a
# percentage ("2023", "v4", "$4", "4%", "4.5" and "1,4" are not standalone 4s).
_STANDALONE = re.compile(r"(?<![\w.,$€£/+-])(\d+)(?![\w%$€£]|[.,]\d|/\d)")
_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n?(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class ParsedScore:
    """A score found in raw text: the allowed score, the step that found it, the value
    as written, and any reasoning the text gave alongside."""

    score: int
    path: ParsePath
    value: float
    reasoning: str = ""


def parse_score(text: str, rubric: Rubric) -> ParsedScore | None:
    """The score in a judge's raw reply, or None when there is none to be found."""
    if not text or not text.strip():
        return None
    return _from_json(text, rubric) or _from_pattern(text, rubric) or _standalone(text, rubric)


def strip_code_fences(text: str) -> str:
    """The contents of the fenced blocks in `text` joined by newlines, or `text` itself."""
    blocks = _FENCE.findall(text)
    return "\n".join(blocks) if blocks else text


def _json_objects(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object that decodes, fenced blocks first, in order."""
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    for source in dict.fromkeys((strip_code_fences(text), text)):  # fenced first, no repeat
        i = source.find("{")
        while i != -1:
            try:
                obj, end = decoder.raw_decode(source, i)
            except json.JSONDecodeError:
                i = source.find("{", i + 1)
                continue
            except RecursionError:  # nested past what can be read: no object starts later
                break
            if isinstance(obj, dict):
                found.append(obj)
            i = source.find("{", end)
    return found


def _number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        match = re.fullmatch(r"\s*" + _NUMBER + r"\s*(?:/\s*\d+)?\s*", value)
        if not match:
            return None
        number = float(match.group(1))
    else:
        return None
    return number if math.isfinite(number) else None


def _from_json(text: str, rubric: Rubric) -> ParsedScore | None:
    for obj in _json_objects(text):
        keys = {str(k).lower(): v for k, v in obj.items()}
        for key in _SCORE_KEYS:
            value = _number(keys.get(key))
            if value is not None:
                reasoning = next(
                    (keys[k] for k in _REASONING_KEYS if isinstance(keys.get(k), str)), ""
                )
                return ParsedScore(rubric.coerce(value), "json", value, reasoning.strip())
    return None


def _from_pattern(text: str, rubric: Rubric) -> ParsedScore | None:
    # The last match wins: judges tend to reason first and give the verdict at the end.
    out_of = re.compile(_NUMBER + rf"\s*(?:/|\bout of\b)\s*{rubric.highest}(?!\d|\.\d)", re.I)
    candidates: list[tuple[int, float]] = []
    for pattern in (_SCORE_PATTERN, out_of):
        for match in pattern.finditer(text):
            value = float(match.group(1))
            if math.isfinite(value):
                candidates.append((match.start(), value))
    if not candidates:
        return None
    value = max(candidates)[1]
    return ParsedScore(rubric.coerce(value), "regex", value)


def _standalone(text: str, rubric: Rubric) -> ParsedScore | None:
    values = [int(m.group(1)) for m in _STANDALONE.finditer(text)]
    in_scale = [v for v in values if rubric.in_scale(v)]
    if not in_scale:
        return None
    if len(set(in_scale)) == 1:
        return ParsedScore(in_scale[0], "regex", in_scale[0])
    # Several different in-scale numbers: only a last line that is a number alone decides.
    last_line = text.strip().splitlines()[-1].strip().strip("*_`\"'.")
    if last_line.isdigit() and rubric.in_scale(int(last_line)):
        return ParsedScore(int(last_line), "regex", int(last_line))
    return None
