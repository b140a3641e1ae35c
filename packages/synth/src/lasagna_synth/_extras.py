"""The optional readers of lasagna-synth, and the one-line error when one is missing.

`documents` (unstructured: DOCX, HTML, PPTX, XML, EML, MSG), `hf` (pyarrow: Hugging Face
datasets saved to disk, Parquet) and `langchain` (langchain-core, to build Documents).
Whether an extra is there is asked of the import system without importing anything.
"""

from __future__ import annotations

from importlib.util import find_spec

from lasagna_synth._errors import SynthUsageError

# extra -> what it is for, in messages
EXTRAS = {
    "documents": "unstructured",
    "hf": "pyarrow",
    "langchain": "langchain-core",
}
"""lasagna-synth's extras, each with the package it installs (named by import errors)."""


def missing_modules(*modules: str) -> list[str]:
    """The top-level modules of `modules` that cannot be imported (none is imported)."""
    missing = []
    for module in modules:
        try:
            found = find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(module)
    return missing


def install_hint(extra: str) -> str:
    """`pip install "lasagna-synth[documents]"` and the way to get it in lasagna's own
    repository (a dependency group of the same name)."""
    return (
        f'pip install "lasagna-synth[{extra}]" (or "lasagna-cli[{extra}]"; in lasagna\'s own '
        f"repository: uv run --group {extra} ...)"
    )


def missing_extra(what: str, extra: str) -> SynthUsageError:
    """`<what> needs the documents extra (unstructured), which is not installed: pip ...`."""
    return SynthUsageError(
        f"{what} needs the {extra} extra ({EXTRAS[extra]}), which is not installed: "
        + install_hint(extra)
    )
