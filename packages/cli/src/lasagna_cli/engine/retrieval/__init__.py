"""The retrievers a setup names (BM25, dense in-process, Chroma) and the one ranking path that
indexes each corpus once per setting.

Import from the modules; this package re-exports nothing (no import cycles through it)."""
