"""`lasagna metrics ...`: deterministic scoring of prediction files."""

from __future__ import annotations

from lasagna_cli._groups import metrics_app


@metrics_app.callback()
def _metrics() -> None:
    """Score predictions with deterministic metrics (SQuAD EM/F1, ...)."""
