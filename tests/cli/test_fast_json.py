"""The fast reader of run files gives what lasagna_metrics.parse_json gives: the same value,
or the same refusal (orjson first, the standard library for whatever orjson refuses or
would read otherwise)."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lasagna_cli.engine.records._fast_json import loads, loads_lines
from lasagna_metrics import parse_json

CASES = [
    b'{"a": 1, "a": 2}',
    b"[1e400, -1e400]",
    b"123456789012345678901234567890",
    b'{"n": -18446744073709551617, "m": 18446744073709551616}',
    b"[9223372036854775807, -9223372036854775808]",
    b'"\\ud83d\\ude00"',
    b"[NaN, Infinity, -Infinity]",
    b'{"seconds": 0.00012179100303910673, "id": "12345678901234567890123"}',
    b"[-0, -0.0, 1E5, 1.0e-400]",
    b'"\\u0000"',
    b"\xef\xbb\xbf{}",
]
REFUSED = [b'"\\ud800"', b'{"\\udc00": 1}', b"[1,]", b'"a\x01"', b'"\xff"', b"[" * 5000, b""]


def same(a: object, b: object) -> bool:
    return json.dumps(a) == json.dumps(b) and type(a) is type(b)


@pytest.mark.parametrize("data", CASES)
def test_the_same_values(data: bytes) -> None:
    assert same(loads(data), parse_json(data))


@pytest.mark.parametrize("data", REFUSED)
def test_the_same_refusals(data: bytes) -> None:
    with pytest.raises(ValueError):
        parse_json(data)
    with pytest.raises(ValueError):
        loads(data)


def test_text_refuses_a_byte_order_mark_as_a_text_read_does() -> None:
    data = b"\xef\xbb\xbf{}"
    with pytest.raises(ValueError):
        parse_json(data.decode("utf-8"))
    with pytest.raises(ValueError):
        loads(data, text=True)


def test_a_big_integer_stays_an_integer() -> None:
    value = loads(b'{"count": 123456789012345678901}')
    assert value == {"count": 123456789012345678901} and isinstance(value["count"], int)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
    max_leaves=20,
)


@given(JSON)
def test_any_document(value: object) -> None:
    data = json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")
    try:
        expected = parse_json(data)
    except ValueError:
        with pytest.raises(ValueError):
            loads(data)
        return
    found = loads(data)
    assert same(found, expected) or (
        isinstance(found, float) and math.isnan(found) and math.isnan(expected)
    )


def test_lines_are_read_each_as_loads_reads_it() -> None:
    # A batch of records scanned once for long integers: a line with one is still exact,
    # and so are the lines around it; a line that is not JSON is left out.
    lines = [*CASES[:-1], *REFUSED[:-2], b'{"n": 12345678901234567890123}', b"", b"  ", b"[1]"]
    data = b"\n".join(lines) + b"\r\n" + b'{"last": 18446744073709551616}'
    expected = []
    for line in [*lines, b'{"last": 18446744073709551616}']:
        try:
            expected.append(loads(line))
        except ValueError:
            continue
    found = list(loads_lines(data))
    assert len(found) == len(expected) == len(CASES) + 2
    assert all(same(a, b) for a, b in zip(found, expected, strict=True))
    assert found[-1] == {"last": 18446744073709551616} and isinstance(found[-1]["last"], int)


@given(st.lists(JSON, max_size=6))
def test_any_batch(values: list[object]) -> None:
    lines = [json.dumps(v, ensure_ascii=False).encode("utf-8", "surrogatepass") for v in values]
    expected = []
    for line in lines:
        try:
            expected.append(loads(line))
        except ValueError:
            continue
    found = list(loads_lines(b"\n".join(lines)))
    assert len(found) == len(expected)
    for a, b in zip(found, expected, strict=True):
        assert same(a, b) or (isinstance(a, float) and math.isnan(a) and math.isnan(b))
