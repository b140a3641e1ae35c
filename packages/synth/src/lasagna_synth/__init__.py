"""Documents to passages to verified benchmark questions, and the benchmark row formats."""

from lasagna_synth._errors import SynthError

__all__ = ["SynthError"]
