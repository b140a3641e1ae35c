"""PDF text through pdfminer.six, the text layer unstructured's "fast" strategy reads too.

unstructured's own PDF partitioner imports unstructured-inference and OpenCV at module
level, which bring torch and onnxruntime; so PDFs are read here, with pdfminer's layout
analysis (text boxes in reading order, columns kept apart). Rotated characters (arXiv's
margin stamp, vertical table headers) are left out, and typographic ligatures are spelled
out so that words match what a reader types.

pdfminer inflates a stream whole, however big, and lays out every character of a page
before it hands the page over. So a PDF is first checked with pypdf, under its limits
(`pypdf.apply_configuration`): every stream but an image's (pdfminer never decodes those)
decoded once, and their sizes added up against `ReadLimits.inflated_bytes`. Then pdfminer
reads it through a device that counts pages and characters against their bounds, and drops
the drawn paths, which the text does not need (a page of millions of lines would otherwise
stay in memory as objects).
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path
from typing import Any, BinaryIO

from lasagna_synth._limits import ReadLimits, megabytes

_LIGATURES = str.maketrans(
    {"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "st", "ﬆ": "st"}
)


def check_pdf(file: BinaryIO, limits: ReadLimits) -> None:
    """Raise `OverLimit` when the PDF's streams, images aside, inflate past the bound (pypdf
    decodes each under the same bound, its `LimitReachedError` is one too)."""
    from pypdf import PdfReader, apply_configuration
    from pypdf.errors import LimitReachedError
    from pypdf.filters import decode_stream_data
    from pypdf.generic import IndirectObject, StreamObject

    cap = limits.inflated_bytes
    bounds: dict[str, Any] = {
        name: cap
        for name in (
            "zlib_maximum_output_length",
            "lzw_maximum_output_length",
            "run_length_maximum_output_length",
            "array_based_stream_maximum_output_length",
            "brotli_maximum_output_length",
            "jbig2_maximum_output_length",
        )
    }
    too_big = limits.refuse(f"streams inflating to over {megabytes(cap)}, the limit")
    pypdf_log = logging.getLogger("pypdf")
    level = pypdf_log.level
    pypdf_log.setLevel(logging.CRITICAL)  # its warnings are about the file, not for the user
    try:
        with warnings.catch_warnings(), apply_configuration(**bounds):
            warnings.simplefilter("ignore")
            reader = PdfReader(file)
            if reader.is_encrypted:
                reader.decrypt("")  # pdfminer's password too
            total = 0
            for generation, numbers in list(reader.xref.items()):
                for number in list(numbers):
                    found: Any = reader.get_object(IndirectObject(number, generation, reader))
                    if not isinstance(found, StreamObject) or found.get("/Subtype") == "/Image":
                        continue
                    filtered = "/Filter" in found
                    total += len(decode_stream_data(found) if filtered else found.get_data())
                    if total > cap:
                        raise too_big
    except LimitReachedError:
        raise too_big from None
    finally:
        pypdf_log.setLevel(level)
        file.seek(0)


def _bounded_device(resources: Any, laparams: Any, limits: ReadLimits) -> Any:
    """pdfminer's page aggregator, counting pages and characters against `limits`."""
    from pdfminer.converter import PDFPageAggregator

    class Bounded(PDFPageAggregator):
        pages = 0
        chars = 0
        page_chars = 0

        def begin_page(self, page: Any, ctm: Any) -> None:
            self.pages += 1
            self.page_chars = 0
            if self.pages > limits.pdf_pages:
                raise limits.refuse(f"over {limits.pdf_pages:,} pages", f"{limits.pdf_pages:,}")
            super().begin_page(page, ctm)

        def render_char(self, *args: Any, **kwargs: Any) -> float:
            self.chars += 1
            self.page_chars += 1
            if self.page_chars > limits.pdf_page_chars:
                raise limits.refuse(
                    f"a page of over {limits.pdf_page_chars:,} characters",
                    f"{limits.pdf_page_chars:,}",
                )
            if self.chars > limits.pdf_chars:
                raise limits.refuse(
                    f"over {limits.pdf_chars:,} characters", f"{limits.pdf_chars:,}"
                )
            return float(super().render_char(*args, **kwargs))

        def render_image(self, name: str, stream: Any) -> None:  # an object, as a character is
            self.chars += 1
            if self.chars > limits.pdf_chars:
                raise limits.refuse(
                    f"over {limits.pdf_chars:,} characters and images", f"{limits.pdf_chars:,}"
                )
            super().render_image(name, stream)

        def paint_path(self, *args: Any, **kwargs: Any) -> None:
            return None  # lines and shapes: not text

    return Bounded(resources, laparams=laparams)


def _pages(file: BinaryIO, limits: ReadLimits) -> Any:
    """pdfminer's `extract_pages`, through the bounded device."""
    from pdfminer.layout import LAParams
    from pdfminer.pdfinterp import PDFPageInterpreter, PDFResourceManager
    from pdfminer.pdfpage import PDFPage

    resources = PDFResourceManager(caching=True)
    device = _bounded_device(resources, LAParams(), limits)
    interpreter = PDFPageInterpreter(resources, device)
    for page in PDFPage.get_pages(file, caching=True):
        interpreter.process_page(page)
        yield device.get_result()


def read_pdf(file: BinaryIO, path: Path, limits: ReadLimits) -> str:
    """The upright text of every page, boxes separated by blank lines."""
    from pdfminer.layout import LTAnno, LTChar, LTTextContainer, LTTextLine

    check_pdf(file, limits)
    pdfminer_log = logging.getLogger("pdfminer")
    level = pdfminer_log.level
    pdfminer_log.setLevel(logging.ERROR)  # its warnings are about the file, not for the user
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pages: list[str] = []
            for page in _pages(file, limits):
                boxes: list[str] = []
                for element in page:
                    if not isinstance(element, LTTextContainer):
                        continue
                    lines: list[str] = []
                    for line in element:
                        if not isinstance(line, LTTextLine):
                            continue
                        text = "".join(
                            obj.get_text()
                            for obj in line
                            if isinstance(obj, LTAnno) or (isinstance(obj, LTChar) and obj.upright)
                        ).strip()
                        if text:
                            lines.append(text)
                    if lines:
                        boxes.append("\n".join(lines))
                if boxes:
                    pages.append("\n\n".join(boxes))
    finally:
        pdfminer_log.setLevel(level)
    return "\n\n".join(pages).translate(_LIGATURES)
