"""PDF text through pdfminer.six, the text layer unstructured's "fast" strategy reads too.

unstructured's own PDF partitioner imports unstructured-inference and OpenCV at module
level, which bring torch and onnxruntime; so PDFs are read here, with pdfminer's layout
analysis (text boxes in reading order, columns kept apart). Rotated characters (arXiv's
margin stamp, vertical table headers) are left out, and typographic ligatures are spelled
out so that words match what a reader types.
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

_LIGATURES = str.maketrans(
    {"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "st", "ﬆ": "st"}
)


def read_pdf(path: Path) -> str:
    """The upright text of every page, boxes separated by blank lines."""
    from pdfminer.high_level import extract_pages
    from pdfminer.layout import LAParams, LTAnno, LTChar, LTTextContainer, LTTextLine

    pdfminer_log = logging.getLogger("pdfminer")
    level = pdfminer_log.level
    pdfminer_log.setLevel(logging.ERROR)  # its warnings are about the file, not for the user
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pages: list[str] = []
            for page in extract_pages(path, laparams=LAParams()):
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
