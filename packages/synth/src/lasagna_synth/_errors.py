"""The errors of lasagna-synth.

SynthError            bad documents, plan or data (the CLI exits 1)
└── SynthUsageError   a bad argument: n, mix, chunker, a missing corpus path (exit 2)
"""


class SynthError(Exception):
    """Bad documents, plan or data: the message says what was expected, found and what to do."""


class SynthUsageError(SynthError):
    """A bad argument rather than bad data (the CLI reports it as a usage error)."""
