r"""A LangChain retriever (and a small chain) over the examples corpus, to benchmark with
`lasagna benchmark run --system`.

The corpus is examples/data/pasta-beir, turned into LangChain Documents by
`lasagna_synth.corpus_to_documents` (each Document's id is the corpus id). The retriever
scores documents by TF-IDF-weighted shared words: a stand-in for your vector store.

    uv run lasagna benchmark run examples/data/pasta-beir \
        --system examples.systems.langchain_retriever:make_retriever
    uv run lasagna benchmark run examples/data/pasta.jsonl \
        --system examples.systems.langchain_retriever:make_chain
"""

from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable, RunnableLambda, RunnableParallel

from lasagna_synth import corpus_to_documents, load_data

DATA = Path(__file__).resolve().parents[1] / "data" / "pasta-beir"


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


class KeywordRetriever(BaseRetriever):
    """The `k` documents sharing the most (IDF-weighted) words with the query."""

    documents: list[Document]
    k: int = 5

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        bags = [set(_words(d.page_content)) for d in self.documents]
        df = Counter(w for bag in bags for w in bag)
        n = len(self.documents)
        asked = set(_words(query))
        scores = [sum(math.log(1 + n / df[w]) for w in asked & bag) for bag in bags]
        order = sorted(range(n), key=lambda i: (-scores[i], i))
        return [self.documents[i] for i in order[: self.k] if scores[i] > 0]


def make_retriever() -> KeywordRetriever:
    """A factory: the retriever over the corpus, built when lasagna loads it."""
    return KeywordRetriever(documents=corpus_to_documents(load_data(DATA)))


def _answer(inputs: dict[str, Any]) -> dict[str, Any]:
    # A stand-in for `prompt | llm | StrOutputParser()`: the first sentence of the best
    # document. lasagna reads "answer" and, as the ranking, "context".
    context: list[Document] = inputs["context"]
    if not context:
        return {"answer": "Not mentioned", "context": context}
    title, _, body = context[0].page_content.partition("\n\n")
    first = re.split(r"(?<=[.!?])\s+", (body or title).strip())[0]
    return {"answer": first, "context": context}


def make_chain() -> Runnable[str, dict[str, Any]]:
    """question -> {"answer", "context"}: the shape of LangChain's retrieval chains."""
    retriever = make_retriever()
    return RunnableParallel(context=retriever, question=lambda q: q) | RunnableLambda(_answer)
