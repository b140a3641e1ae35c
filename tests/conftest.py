"""Fixtures shared by every member's tests. Only the standard library and pytest here:
each member's tests must also run with only that member installed."""
