"""Fixtures of the judge tests: a fake OpenAI-compatible server on 127.0.0.1 (real HTTP)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from lasagna_judge.testing import FakeLLMServer


@pytest.fixture
def fake_llm_server() -> Iterator[FakeLLMServer]:
    """A running FakeLLMServer; set `.reply` and `.latency` in the test. Its default reply
    is the simplest output that satisfies the requested schema ("ok" for plain calls)."""
    with FakeLLMServer() as server:
        yield server
