"""Deterministic metrics for RAG benchmarks. Standard library only."""

from lasagna_metrics._errors import MetricsError

__all__ = ["MetricsError"]
