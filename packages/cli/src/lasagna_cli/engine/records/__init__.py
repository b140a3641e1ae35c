"""A run folder on disk: the one task record, files that are whole or absent, the one writer,
the folder's lock and lasagna's JSON layout.

The names below load on first use (no import cycle through the package)."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lasagna_cli.engine.records._folder_lock import FolderLock
    from lasagna_cli.engine.records._store import (
        check_output_file,
        check_writable,
        default_output,
        new_run_folder,
        remove_stale_temp_files,
        write_json_atomic,
    )

_NAMES = {
    "FolderLock": "_folder_lock",
    "check_output_file": "_store",
    "check_writable": "_store",
    "default_output": "_store",
    "new_run_folder": "_store",
    "remove_stale_temp_files": "_store",
    "write_json_atomic": "_store",
}

__all__ = [
    "FolderLock",
    "check_output_file",
    "check_writable",
    "default_output",
    "new_run_folder",
    "remove_stale_temp_files",
    "write_json_atomic",
]


def __getattr__(name: str) -> Any:
    module = _NAMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
