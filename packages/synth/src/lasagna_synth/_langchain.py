"""Passages to and from `langchain_core.documents.Document`, so that a LangChain retriever
can index the same passages a question set was written from, or the corpus a benchmark
searches (and then be benchmarked by `lasagna benchmark run --system`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from lasagna_synth._corpus import Passage
from lasagna_synth._errors import SynthError

if TYPE_CHECKING:
    from langchain_core.documents import Document as LangChainDocument

    from lasagna_synth._rows import BenchmarkData


def passage_to_document(passage: Passage) -> LangChainDocument:
    """A LangChain Document with the passage's text; its ids go into `id` and metadata."""
    from langchain_core.documents import Document

    return Document(
        id=passage.id,
        page_content=passage.text,
        metadata={"passage_id": passage.id, "doc_id": passage.doc_id, "index": passage.index},
    )


def document_to_passage(document: LangChainDocument) -> Passage:
    """The passage a Document holds: metadata `passage_id`, `doc_id` and `index` (as
    `passage_to_document` writes them), or, failing those, `id` and `source`."""
    metadata = document.metadata or {}
    passage_id = metadata.get("passage_id") or document.id
    if not passage_id:
        raise SynthError(
            "a LangChain Document without an id cannot become a passage: expected "
            "metadata['passage_id'] or Document.id"
        )
    passage_id = str(passage_id)
    doc_id = metadata.get("doc_id") or metadata.get("source") or passage_id.rpartition("#")[0]
    if not doc_id:
        raise SynthError(
            f"Document {passage_id!r} names no document: expected metadata['doc_id'], "
            "metadata['source'] or an id of the form <doc>#<i>"
        )
    index = metadata.get("index")
    if index is None:
        tail = passage_id.rpartition("#")[2]
        index = int(tail) if tail.isdigit() else 0
    return Passage(passage_id, str(doc_id), int(index), document.page_content)


def corpus_to_documents(corpus: BenchmarkData | Mapping[str, str]) -> list[LangChainDocument]:
    """A benchmark's corpus (`load_data(...)`, or its `{doc_id: text}`) as LangChain
    Documents in corpus order: `id` and `metadata["corpus_id"]` are the corpus id, so the
    runner scores a retriever over them by id, with no text matching."""
    from langchain_core.documents import Document

    texts = corpus if isinstance(corpus, Mapping) else corpus.corpus
    return [
        Document(id=doc_id, page_content=text, metadata={"corpus_id": doc_id})
        for doc_id, text in texts.items()
    ]
