"""parse_json: what json.loads lets through (a RecursionError, strings that cannot be written
as UTF-8) comes out as the JSONDecodeError every reader already reports in one line."""

from __future__ import annotations

import json

import pytest

from lasagna_metrics import parse_json


def test_json_nested_100000_deep_is_bad_json_not_a_recursion_error() -> None:
    with pytest.raises(json.JSONDecodeError, match="nested too deep"):
        parse_json("[" * 100_000 + "]" * 100_000)
    with pytest.raises(json.JSONDecodeError, match="nested too deep"):
        parse_json(b'{"a": ' * 100_000)


@pytest.mark.parametrize(
    ("text", "column"),
    [
        (r'{"q": "a\ud800b"}', 9),  # a high half alone
        (r'{"q": "a\udc00"}', 9),  # a low half alone
        (r'{"q": "\ude00\ud83d"}', 8),  # both halves, in the wrong order
        (r'{"q": "\\\ud800"}', 10),  # an escaped backslash, then a lone escape
        (r'{"q": "\\ud800\udc00"}', 15),  # "\\" then the letters "ud800": the low is alone
    ],
)
def test_a_lone_surrogate_escape_is_refused_where_it_stands(text: str, column: int) -> None:
    with pytest.raises(json.JSONDecodeError, match="lone UTF-16 surrogate") as caught:
        parse_json(text)
    assert caught.value.colno == column  # at the escape's backslash


@pytest.mark.parametrize(
    "text",
    [
        r'{"q": "\ud83d\ude00"}',  # an emoji as json.dumps writes it
        r'{"q": "\\ud800"}',  # a backslash and the letters "ud800"
        r'{"q": "\u00e9\\\\ud800"}',
        '{"q": "caf\u00e9"}',
    ],
)
def test_valid_json_reads_as_json_loads_reads_it(text: str) -> None:
    assert parse_json(text) == json.loads(text)
    assert parse_json(text.encode("utf-8")) == json.loads(text)
    json.dumps(parse_json(text), ensure_ascii=False).encode("utf-8")  # writable as UTF-8


def test_the_hook_is_passed_on() -> None:
    assert parse_json('{"a": 1}', object_pairs_hook=lambda pairs: pairs) == [("a", 1)]
