"""The `lasagna` command: synthesize, validate, run, sweep and grade RAG benchmarks."""

from importlib.metadata import version

__version__ = version("lasagna-cli")

__all__ = ["__version__"]
