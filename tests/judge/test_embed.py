"""Embedders: the fake server's /v1/embeddings drives the HTTP path (batching, retries,
the cache, tokens, a changed dimension); WordLlama runs in-process with the network off."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from lasagna_judge import JudgeError, LLMCallError, make_embedder, parse_embedder
from lasagna_judge.testing import FakeLLMServer, Fault, hashed_embedding

np = pytest.importorskip("numpy")


def embed(embedder: Any, texts: list[str]) -> Any:
    async def main() -> Any:
        async with embedder:
            return await embedder.embed(texts)

    return asyncio.run(main())


def test_vectors_come_back_in_order_unit_length_in_batches(tmp_path: Path) -> None:
    texts = ["pasta with tomato", "tomato soup", "car engine", "pasta with tomato", ""]
    with FakeLLMServer(embedding_dimension=16) as server:
        embedder = make_embedder(
            "openai/emb", base_url=server.base_url, api_key="sk-test", cache=False, batch_size=2
        )
        vectors = embed(embedder, texts)
        assert server.calls == 2  # 4 distinct texts, 2 a request
        assert server.paths == ["/v1/embeddings", "/v1/embeddings"]
        assert server.headers[0]["authorization"] == "Bearer sk-test"
    assert vectors.shape == (5, 16) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    expected = np.asarray(hashed_embedding("tomato soup", 16), dtype=np.float32)
    assert np.allclose(vectors[1], expected / np.linalg.norm(expected), atol=1e-6)
    assert (vectors[0] == vectors[3]).all()
    assert embedder.usage.input_tokens == 7  # the fake server counts words
    assert embedder.dimension == 16
    assert "sk-test" not in repr(embedder) + repr(embedder.identity())


def test_a_rerun_embeds_nothing_twice(tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    with FakeLLMServer() as server:
        first = embed(
            make_embedder("openai/emb", base_url=server.base_url, api_key="k", cache=cache),
            ["a b", "c d"],
        )
        calls = server.calls
        again = make_embedder("openai/emb", base_url=server.base_url, api_key="k", cache=cache)
        second = embed(again, ["c d", "a b", "e f"])
        assert server.calls == calls + 1 and again.cached == 2
        assert server.requests[-1]["input"] == ["e f"]
    assert (second[0] == first[1]).all() and (second[1] == first[0]).all()


def test_a_rate_limit_is_retried_with_its_retry_after() -> None:
    with FakeLLMServer() as server:
        server.embedding_faults = [Fault(status=429, retry_after=0.01), Fault(status=503)]
        embedder = make_embedder(
            "openai/emb", base_url=server.base_url, api_key="k", cache=False, max_retries=3
        )
        vectors = embed(embedder, ["one"])
        assert server.calls == 3 and vectors.shape == (1, 32)


def test_a_server_that_changes_dimension_is_an_error_not_a_mix() -> None:
    with FakeLLMServer(embedding_dimension=8) as server:
        embedder = make_embedder(
            "openai/emb", base_url=server.base_url, api_key="k", cache=False, batch_size=1
        )

        async def main() -> None:
            async with embedder:
                await embedder.embed(["first"])
                server.embedding_dimension = 12
                await embedder.embed(["second"])

        with pytest.raises(JudgeError, match="vectors of 12 dimensions, expected 8"):
            asyncio.run(main())


def test_an_unreachable_server_fails_with_what_was_tried() -> None:
    embedder = make_embedder(
        "openai/emb", base_url="http://127.0.0.1:9/v1", api_key="k", cache=False, max_retries=0
    )
    with pytest.raises(LLMCallError, match="openai/emb: the call failed after 1 attempt"):
        embed(embedder, ["text"])


def test_names_and_settings_are_checked_first() -> None:
    with pytest.raises(JudgeError, match="expected an embedder named provider/model"):
        parse_embedder("wordllama")
    with pytest.raises(JudgeError, match="needs an API key"):
        make_embedder("openai/text-embedding-3-small")
    with pytest.raises(JudgeError, match="batch_size must be at least 1"):
        make_embedder("openai/e", base_url="http://127.0.0.1:9/v1", batch_size=0)


def test_wordllama_runs_in_process_with_no_network() -> None:
    # pytest-socket allows only loopback here: a download would fail the test.
    embedder = make_embedder("local/wordllama")
    vectors = embed(embedder, ["pasta with tomato sauce", "spaghetti and tomatoes", "a jet engine"])
    assert vectors.shape == (3, 256) and embedder.dimension == 256
    assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[2])
    assert embedder.usage.input_tokens > 0 and embedder.identity()["endpoint"] is None
