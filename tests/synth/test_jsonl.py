"""write_jsonl and the adapters' subsets: files that are whole or absent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lasagna_synth import write_jsonl
from lasagna_synth._atomic import write_bytes_atomic

rows = st.lists(
    st.dictionaries(st.text(max_size=5), st.one_of(st.text(), st.integers(), st.none())),
    max_size=5,
)


@settings(max_examples=50, deadline=None)
@given(rows)
def test_rows_round_trip_one_utf8_line_each(tmp_path_factory: Any, given_rows: list[Any]) -> None:
    path = tmp_path_factory.mktemp("out") / "sub" / "rows.jsonl"
    assert write_jsonl(given_rows, path) == path
    lines = path.read_bytes().decode("utf-8").split("\n")
    assert lines.pop() == ""  # every line ends with "\n", the last one too
    assert lines == [json.dumps(row, ensure_ascii=False) for row in given_rows]
    assert [json.loads(line) for line in lines] == given_rows
    assert sorted(p.name for p in path.parent.iterdir()) == ["rows.jsonl"]


def test_a_failure_midway_keeps_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    write_jsonl([{"q": "old"}], path)

    def failing() -> Any:
        yield {"q": "new"}
        raise KeyboardInterrupt  # Ctrl-C while rows are still being generated

    with pytest.raises(KeyboardInterrupt):
        write_jsonl(failing(), path)
    assert path.read_text(encoding="utf-8") == '{"q": "old"}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["rows.jsonl"]
    with pytest.raises(TypeError):
        write_jsonl([{"q": object()}], path)
    assert [p.name for p in tmp_path.iterdir()] == ["rows.jsonl"]


def test_bytes_replace_the_file_whole(tmp_path: Path) -> None:
    path = tmp_path / "a" / "corpus.jsonl"
    write_bytes_atomic(path, b"one\r\n")
    write_bytes_atomic(path, b"two\r\n")
    assert path.read_bytes() == b"two\r\n"
    assert [p.name for p in path.parent.iterdir()] == ["corpus.jsonl"]
