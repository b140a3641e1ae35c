"""The `lasagna` commands: they parse flags and files, build LLM objects from the
environment, call the engine, draw progress and tables, and map the engine's exceptions to
exit codes. Nothing in `lasagna_cli.engine` imports from here."""
