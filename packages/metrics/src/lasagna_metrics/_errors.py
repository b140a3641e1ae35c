"""The one base error of lasagna-metrics."""


class MetricsError(ValueError):
    """Bad input to a metric: the message says what was expected, what was found, what to do."""
