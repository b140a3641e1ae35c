"""The one base error of lasagna-synth."""


class SynthError(Exception):
    """Bad documents, plan or data: the message says what was expected, found and what to do."""
