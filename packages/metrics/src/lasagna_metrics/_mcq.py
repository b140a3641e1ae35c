"""Multiple-choice grading: which option did an answer pick, and was it the right one?"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from lasagna_metrics._errors import MetricsError

Options = Mapping[str, str] | Iterable[str]


def _option_ids(options: Options) -> list[str]:
    if isinstance(options, str):
        raise MetricsError(
            "options: expected option ids (a mapping of id to text, or a list of ids), found "
            "a string; pass e.g. {'a': 'Vitamin A', 'b': 'Vitamin C'} or ['a', 'b']"
        )
    ids = list(options.keys() if isinstance(options, Mapping) else options)
    for option_id in ids:
        if not isinstance(option_id, str) or not option_id.strip():
            raise MetricsError(
                f"options: expected non-empty string ids, found {option_id!r}; "
                "use ids such as 'a', 'b' or '1', '2'"
            )
    return ids


def _key(text: str) -> str:
    return text.strip().casefold()


def _id_alternation(ids: list[str]) -> str:
    # Longest first, so that "10" wins over "1".
    return "|".join(re.escape(i.strip()) for i in sorted(ids, key=len, reverse=True))


def _marked(alt: str) -> str:
    # An id in brackets, or followed by ")", ".", ":", "," or a dash: "(b)", "b)", "b:".
    return (
        r"(?:\(\s*(" + alt + r")\s*\)|\[\s*(" + alt + r")\s*\]"
        r"|(" + alt + r")(?:\)|[.:,](?!\w)|\s+[-\u2013\u2014]\s))"
    )


def _list_items(alt: str) -> re.Pattern[str]:
    # A marked id at the start of a line, after an optional bullet or "Option": how a reply
    # that echoes the options lays them out ("a: two\nb: three").
    return re.compile(
        r"^[ \t]*(?:[-*\u2022][ \t]+)?(?:(?:option|choice)[ \t]+)?" + _marked(alt),
        re.IGNORECASE | re.MULTILINE,
    )


def _inline_items(text: str, alt: str, options: Options) -> set[str]:
    # Options echoed on one line, "(a) two (b) three": a bracketed id followed by its own
    # text. A bracketed id in an explanation ("(b) Vitamin C; (a) is wrong") is not one.
    if not isinstance(options, Mapping):
        return set()
    texts = {_key(i): _key(body) for i, body in options.items() if isinstance(body, str)}
    found = set()
    pattern = r"\(\s*(" + alt + r")\s*\)|\[\s*(" + alt + r")\s*\]"
    for match in re.finditer(pattern, text, re.IGNORECASE):
        key = _named(match)
        body = texts.get(key)
        if body and _key(text[match.end() :]).startswith(body):
            found.add(key)
    return found


def _named(match: re.Match[str]) -> str:
    return _key(next(g for g in match.groups() if g is not None))


def _phrases(alt: str) -> re.Pattern[str]:
    return re.compile(
        r"\b(?:(?:answer|option|choice)(?:\s+(?:is|would\s+be|should\s+be))?\s*[:=]?"
        r"|i\s+(?:choose|pick|select)(?:\s+option)?)\s*"
        r"(?:\(\s*(?P<bracketed>" + alt + r")\s*\)|(?P<bare>" + alt + r")(?!\w))",
        re.IGNORECASE,
    )


def extract_choice(answer: str, options: Options) -> str | None:
    """The option id that a (possibly verbose) answer picks, or None when it names none.

    Tried in order, all case-insensitive, returning the id as spelled in `options`:
    1. the trimmed answer is an option id ("b", " B ");
    2. the answer starts with a marked id: "(b) Vitamin C", "b) Vitamin C", "[b]", "b.", "b:";
    3. a phrase names it anywhere: "The answer is (b) Vitamin C", "Answer: b",
       "the correct option is B.", "I choose c";
    4. the trimmed answer equals one option's text, when `options` maps ids to texts
       ("vitamin c" picks the option whose text is "Vitamin C").
    An id alone in running text ("a" as an article) is not taken as a choice, and neither is
    a reply that names several options without committing to one, such as the options
    echoed back ("a: two\nb: three\nc: four", "(a) two (b) three"): rule 2 then does not
    apply, and a phrase counts only outside the listed options ("... \nAnswer: b" picks b).
    """
    if not isinstance(answer, str):
        raise MetricsError(
            f"answer: expected a string, found {type(answer).__name__}; convert it to text"
        )
    ids = _option_ids(options)
    if not ids:
        return None
    by_key = {_key(i): i for i in ids}
    text = answer.strip()
    if _key(text) in by_key:
        return by_key[_key(text)]
    alt = _id_alternation(ids)
    # A reply that lists several options (line by line, or on one line) has not chosen one
    # by its first line: only a phrase outside the list can still commit to one.
    items = list(_list_items(alt).finditer(text))
    listed = {_named(m) for m in items} | _inline_items(text, alt, options)
    lists_several = len(listed) > 1
    start = re.match(_marked(alt), text, re.IGNORECASE)
    if start and not lists_several:
        return by_key[_named(start)]
    for phrase in _phrases(alt).finditer(text):
        if lists_several and any(i.start() <= phrase.start() < i.end() for i in items):
            continue  # "Option a: two" is a list item, not a commitment
        bracketed, bare = phrase.group("bracketed"), phrase.group("bare")
        if bracketed is not None:
            return by_key[_key(bracketed)]
        # A bare id counts when punctuation or the end follows it ("Answer: b."), or when it
        # is a capital letter ("The answer is B because ..."), not the article in
        # "the answer is a vitamin".
        rest = text[phrase.end() :]
        if re.match(r"\s*(?:$|[.,;:!)\]])", rest) or (bare.isalpha() and bare.isupper()):
            return by_key[_key(bare)]
    if isinstance(options, Mapping):
        bare_text = _key(text).rstrip(".!")
        matches = [
            i for i, body in options.items() if isinstance(body, str) and _key(body) == bare_text
        ]
        if len(matches) == 1:
            return matches[0]
    return None


def grade_mcq(answer: str, correct: str, options: Options | None = None) -> bool:
    """True when the answer picks the correct option id.

    Without `options`, this is kag's rule: the trimmed answer equals the id, ignoring case.
    With `options`, the choice is first read out of a verbose answer by `extract_choice`
    ("The answer is (b) Vitamin C"). An answer naming no option is incorrect; call
    `extract_choice` directly to count such answers apart.
    """
    if not isinstance(correct, str) or not correct.strip():
        raise MetricsError(f"correct: expected the correct option id, found {correct!r}; e.g. 'b'")
    if not isinstance(answer, str):
        raise MetricsError(
            f"answer: expected a string, found {type(answer).__name__}; convert it to text"
        )
    if options is None:
        return _key(answer) == _key(correct)
    ids = _option_ids(options)
    if not isinstance(options, Mapping):
        options = ids  # an iterator would be spent by now
    if _key(correct) not in {_key(i) for i in ids}:
        raise MetricsError(
            f"correct: {correct!r} is not one of the option ids {ids}; "
            "check the answer key against the options"
        )
    choice = extract_choice(answer, options)
    return choice is not None and _key(choice) == _key(correct)
