"""Tasks in, records out: the runner, its executors (local and Ray), each task's steps (the
user's systems, retrieval, the model, scoring, diagnostics) and the run's limits.

Import from the modules; this package re-exports nothing (no import cycles through it)."""
