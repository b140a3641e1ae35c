"""From a configuration to its tasks: data loaded, questions chosen, tracks settled, and the one
prompt builder whose digest enters each task's fingerprint.

Import from the modules; this package re-exports nothing (no import cycles through it)."""
