"""`lasagna benchmark sweep` and `stats`: generation setups x question sets, resumable.

- `_datasets`: the DATASETS.json file (dataset -> question -> {input, output?}).
- `_config`: config.toml (providers, databases, retrievers).
- `_setups`: SETUPS.toml, rendered with MiniJinja, checked against the config.
- `_prompts`: filling {{INPUT}}, {{RETRIEVAL}} and {{CHOICE}} per task.
- `_corpus`: databases loaded and indexed once per sweep.
- `_runner`: the tasks, the result files, the progress.
- `_stats`: grading and summarising result folders.
"""
