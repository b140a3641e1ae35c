"""DOCX, HTML, PPTX, XML, EML and MSG through unstructured, with no network access.

Left alone, unstructured would, on import, send a telemetry ping; on each partition call,
print a usage notice on stdout; and the first time it classifies text, download the spaCy
model `en_core_web_sm` from GitHub and install it into site-packages. The spaCy model only
labels elements (title, narrative text, ...): the text of each element does not depend on
it, and we keep only the text. So unstructured gets a blank English spaCy pipeline with a
rule-based sentencizer, built in memory: nothing to download or pin, and a large DOCX
reads several times faster, with the same text.
"""

from __future__ import annotations

import io
import os
import threading
import warnings
from importlib import import_module
from pathlib import Path
from typing import Any, BinaryIO

from lasagna_synth._errors import SynthError
from lasagna_synth._limits import ReadLimits, check_markup, check_zip

# suffix -> (module, partition function, what the document is called in messages)
PARTITIONERS: dict[str, tuple[str, str, str]] = {
    ".docx": ("unstructured.partition.docx", "partition_docx", "docx"),
    ".htm": ("unstructured.partition.html", "partition_html", "html"),
    ".html": ("unstructured.partition.html", "partition_html", "html"),
    ".xhtml": ("unstructured.partition.html", "partition_html", "html"),
    ".pptx": ("unstructured.partition.pptx", "partition_pptx", "pptx"),
    ".xml": ("unstructured.partition.xml", "partition_xml", "xml"),
    ".eml": ("unstructured.partition.email", "partition_email", "email"),
    ".msg": ("unstructured.partition.msg", "partition_msg", "msg"),
}

# suffix -> the modules its partitioner imports (all come with the `documents` extra)
REQUIRES: dict[str, tuple[str, ...]] = {
    ".docx": ("unstructured", "docx"),
    ".htm": ("unstructured", "lxml", "bs4"),
    ".html": ("unstructured", "lxml", "bs4"),
    ".xhtml": ("unstructured", "lxml", "bs4"),
    ".pptx": ("unstructured", "pptx"),
    ".xml": ("unstructured", "lxml"),
    ".eml": ("unstructured", "dateutil"),
    ".msg": ("unstructured", "oxmsg"),
}

# Repeated page furniture, not content.
_DROPPED_CATEGORIES = frozenset({"Header", "Footer", "PageNumber", "PageBreak"})

_OPT_OUT = ("DO_NOT_TRACK", "SCARF_NO_ANALYTICS")
_lock = threading.Lock()
_ready = False


def _blank_pipeline() -> Any:
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return nlp


def _refuse_download() -> None:
    raise SynthError(
        "unstructured tried to download a spaCy model; lasagna never downloads at run time: "
        "report this as a bug"
    )


def prepare_unstructured() -> None:
    """Opt out of telemetry and the notice, and give unstructured its offline spaCy pipeline."""
    global _ready
    with _lock:
        if _ready:
            return
        # unstructured reads these; any non-empty value opts out.
        if not any(os.environ.get(v, "").strip() for v in _OPT_OUT):
            os.environ["SCARF_NO_ANALYTICS"] = "true"
        os.environ["UNSTRUCTURED_DISABLE_NOTICE"] = "1"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tokenize = import_module("unstructured.nlp.tokenize")
        nlp = _blank_pipeline()
        # _run_pipeline looks `_get_nlp` up in its module at call time.
        setattr(tokenize, "_get_nlp", lambda: nlp)  # noqa: B010
        setattr(tokenize, "_install_spacy_model", _refuse_download)  # noqa: B010
        _ready = True


_ZIPPED = frozenset({"docx", "pptx"})
_MARKUP = frozenset({"html", "xml"})


def read_with_unstructured(file: BinaryIO, path: Path, limits: ReadLimits) -> str:
    """The text of the elements unstructured finds, one blank line between elements; a zip
    or markup over `limits` is refused (`OverLimit`) before unstructured reads it."""
    module_name, function_name, kind = PARTITIONERS[path.suffix.lower()]
    source: dict[str, Any] = {"file": file}
    if kind in _ZIPPED:
        check_zip(file, limits)
        file.seek(0)
    elif kind in _MARKUP:
        data = file.read()
        check_markup(data, limits)
        if kind == "html":
            from lasagna_synth._html import decode_html

            source = {"text": decode_html(data)}
        else:
            source = {"file": io.BytesIO(data)}
    prepare_unstructured()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        partition = getattr(import_module(module_name), function_name)
        elements = partition(**source)
    texts = []
    for element in elements:
        if getattr(element, "category", "") in _DROPPED_CATEGORIES:
            continue
        text = (getattr(element, "text", "") or "").strip()
        if text:
            texts.append(text)
    return "\n\n".join(texts)
