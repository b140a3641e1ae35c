"""Where a run writes when -o is not given: a new folder under runs/ per run."""

from __future__ import annotations

import re
from pathlib import Path

from lasagna_cli.commands._errors import USAGE_ERROR, CliError

RUNS_FOLDER = Path("runs")


def _run_stem(path: str, *, keep_suffix: bool = True) -> str:
    """The file or folder name, safe as a folder name; with its suffix by default, so
    pasta.csv and pasta.jsonl stay apart."""
    name = Path(path.rstrip("/\\")).resolve().name
    if not keep_suffix:
        name = Path(name).stem
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name) or "run"


def default_output(path: str) -> Path:
    """runs/<name of PATH>: one fixed folder (the staged pipeline's steps share it)."""
    return RUNS_FOLDER / _run_stem(path, keep_suffix=False)


def new_run_folder(path: str, *, resume: bool) -> Path:
    """runs/<file name>-<date-time>: a new folder per run; with --resume, the latest one."""
    import time

    stem = _run_stem(path)
    if resume:
        earlier = sorted(
            (f for f in RUNS_FOLDER.glob(f"{stem}-*") if (f / "manifest.json").is_file()),
            key=lambda f: f.name,
        )
        if earlier:
            return earlier[-1]
        raise CliError(
            f"--resume: no earlier run of {path} under {RUNS_FOLDER}/; give its folder with -o",
            USAGE_ERROR,
        )
    folder = RUNS_FOLDER / f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}"
    number = 1
    while folder.exists():  # two runs in one second
        number += 1
        folder = RUNS_FOLDER / f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}-{number}"
    return folder
