"""Adapters for public benchmarks: one module per benchmark, and the registry."""
