"""A run folder on disk: the one task record, files that are whole or absent, the one writer,
the folder's lock and lasagna's JSON layout.

Import from the modules; this package re-exports nothing (no import cycles through it)."""
