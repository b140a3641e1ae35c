"""Systems under test: the user's own RAG system, benchmarked by the runner's metrics.

Four ways in, one shape out (`SystemOutput`: an answer and/or a ranked list of retrieved
items):

- `_predictions`: a JSONL file of outputs produced elsewhere, checked against the data's ids.
- `_callable`: `package.module:attr` (or `path/to/file.py:attr`), a function (sync or async)
  or a factory returning one; LangChain retrievers and runnables through `_langchain`.
- `_http`: an endpoint that takes `{"question", "id", "top_k"}` and replies
  `{"answer", "retrieved"}`, with concurrency, timeouts and retries on 429/5xx.
- `_output`: what a system may return, and the checks on it; `_match`: retrieved ids or
  passage texts mapped to the corpus.
- `_spec`: how a setup names its system (flags, sweep files), described without secrets.
- `_adapter`: the interface every live system has (`ask`, `describe`, `aclose`).
- `_run`: the glue with `lasagna benchmark run`: loading, the first-question probe that
  settles the tracks, and one task's record.
- `_sweep`: a system as a setup of `lasagna benchmark sweep`.
"""
