"""The benchmark engine: a library layer (no typer, no rich, no environment variables, no exit codes)."""  # noqa: E501
