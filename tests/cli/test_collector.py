"""The collector's settings while tasks run: raised for the block, restored after it."""

import gc

import pytest

from lasagna_cli.engine._gc import YOUNG_THRESHOLD, fewer_collections


def test_fewer_collections_is_undone_even_by_an_error() -> None:
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), fewer_collections():
        assert gc.get_threshold() == (YOUNG_THRESHOLD, *before[1:])
        raise RuntimeError("a run that fails")
    assert gc.get_threshold() == before
