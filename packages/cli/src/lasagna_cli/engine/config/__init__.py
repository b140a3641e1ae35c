"""What a run measures, on what, with what: the typed configuration and the doors that make it
(`benchmark run`'s flags, sweep files and their `benchmarks:` entries, `chunking:`).

Import from the modules; this package re-exports nothing (no import cycles through it)."""
