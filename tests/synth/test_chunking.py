"""Chunking: the fixed 200-word rule exactly, and whole-sentence packing."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lasagna_synth import Document, SynthUsageError, chunk_documents


def doc(text: str, doc_id: str = "d.md") -> Document:
    return Document(doc_id, text, "text")


def reference_fixed(text: str, size: int) -> list[str]:
    """The rule as written: words are runs of non-whitespace; windows of `size` words, no
    overlap; a passage spans the original text from its first word to its last; windows
    under 20 words are dropped."""
    spans = [m.span() for m in re.finditer(r"\S+", text)]
    passages = []
    for i in range(0, len(spans), size):
        window = spans[i : i + size]
        if len(window) >= 20:
            passages.append(text[window[0][0] : window[-1][1]])
    return passages


def test_fixed_windows_keep_the_original_text(make: type) -> None:
    text = "  " + make.words(150) + "\n\n\t" + make.words(250, start=150) + "  \n"
    passages = chunk_documents([doc(text)], "fixed", 200)
    assert [p.id for p in passages] == ["d.md#0", "d.md#1"]
    assert [len(p.text.split()) for p in passages] == [200, 200]
    assert passages[0].text.startswith("w0 ") and passages[0].text.endswith(" w199")
    assert "\n\n\t" in passages[0].text  # whitespace inside a window is kept as written
    assert passages[1].text == make.words(200, start=200)
    assert [(p.doc_id, p.index) for p in passages] == [("d.md", 0), ("d.md", 1)]


def test_fixed_last_window_under_20_words_is_dropped(make: type) -> None:
    assert len(chunk_documents([doc(make.words(219))], "fixed", 200)) == 1
    kept = chunk_documents([doc(make.words(220))], "fixed", 200)
    assert [len(p.text.split()) for p in kept] == [200, 20]
    assert chunk_documents([doc(make.words(19))], "fixed", 200) == []


def test_passage_ids_and_corpus_order_across_documents(make: type) -> None:
    docs = [doc(make.words(450), "a/x.md"), doc(make.words(5), "b.md"), doc(make.words(30), "c.md")]
    passages = chunk_documents(docs, "fixed", 200)
    assert [p.id for p in passages] == ["a/x.md#0", "a/x.md#1", "a/x.md#2", "c.md#0"]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.text(
                alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters=""),
                min_size=1,
                max_size=8,
            ),
            st.sampled_from([" ", "\n", "\t", "  ", "\u00a0", "\u2003", "\r\n", "\x0b"]),
        ),
        max_size=400,
    ),
    st.integers(min_value=20, max_value=120),
)
def test_fixed_matches_the_rule_on_any_text(pieces: list[tuple[str, str]], size: int) -> None:
    text = "".join(word + space for word, space in pieces)
    got = [p.text for p in chunk_documents([doc(text)], "fixed", size)]
    assert got == reference_fixed(text, size)


def test_sentences_pack_whole_sentences_up_to_the_budget() -> None:
    sentences = [f"Sentence number {i} has exactly eight words here." for i in range(60)]
    text = " ".join(sentences)
    passages = chunk_documents([doc(text)], "sentences", 50)
    assert all(len(p.text.split()) <= 50 for p in passages)
    # 6 sentences of 8 words fit in 50; every passage starts and ends on a sentence boundary
    assert [len(p.text.split()) for p in passages] == [48] * 10
    assert all(p.text.startswith("Sentence number") and p.text.endswith("here.") for p in passages)
    assert " ".join(p.text for p in passages) == text


def test_sentence_splitter_is_punkt_english_from_the_package(no_network: None) -> None:
    from nltk.tokenize.punkt import PunktSentenceTokenizer

    from lasagna_synth._punkt import sentence_spans

    text = "Dr. Quist designed the tower in 1862. It is 31 m tall. Mr. Averill kept it."
    assert [text[a:b] for a, b in sentence_spans(text)] == [
        "Dr. Quist designed the tower in 1862.",
        "It is 31 m tall.",
        "Mr. Averill kept it.",
    ]
    # an untrained Punkt splits after "Dr." and "Mr.": the packaged English model is in use
    assert len(PunktSentenceTokenizer().tokenize(text)) == 5


def test_a_sentence_longer_than_the_budget_is_cut_into_windows(make: type) -> None:
    text = "Short opening sentence of the document here for you. " + make.words(130) + "."
    passages = chunk_documents([doc(text)], "sentences", 50)
    assert [len(p.text.split()) for p in passages] == [50, 50, 30]
    assert passages[0].text.startswith("w0")


def test_bad_chunking_arguments_are_usage_errors() -> None:
    with pytest.raises(SynthUsageError, match="unknown chunker 'lines': expected one of words"):
        chunk_documents([doc("x")], "lines", 200)  # type: ignore[arg-type]
    with pytest.raises(SynthUsageError, match="less than the chunk size"):
        chunk_documents([doc("x")], "fixed", 50, overlap=50)
    with pytest.raises(SynthUsageError, match="give at least 20"):
        chunk_documents([doc("x")], "fixed", 10)
