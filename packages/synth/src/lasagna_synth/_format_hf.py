"""Hugging Face `datasets` tables: a `save_to_disk` folder, a Parquet file or an Arrow file.

- A folder saved by `Dataset.save_to_disk` holds `state.json` (its Arrow files in order,
  `_data_files`), `dataset_info.json` and `data-*.arrow` (Arrow IPC streams); one saved by
  `DatasetDict.save_to_disk` holds `dataset_dict.json` (the split names) and a folder like
  that per split. A Dataset is one table: its rows are the split `test`, as a JSONL file's
  are (the split it was saved from is noted); a DatasetDict's splits keep their names.
- `.parquet` (`Dataset.to_parquet`) and `.arrow` files are one table each.
- (`Dataset.to_json` writes JSONL: read as any JSONL file, with null meaning absent.)

The columns are read as lasagna's, RAGAS's or DeepEval's fields, or SQuAD's (HF's `squad`
and `squad_v2`), detected as for JSONL (`_format_records`). pyarrow reads them: it is the
`hf` extra, and a missing one is refused with the install command. The digest that names
the data is over the files read, each as its relative path and sha256, in the order read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lasagna_metrics import parse_json
from lasagna_synth._naming import file_sha256, folder_sha256
from lasagna_synth._validate import DataError

HF_SUFFIXES = (".parquet", ".arrow")
DEFAULT_SPLIT = "test"


def is_hf_folder(folder: Path) -> bool:
    """A folder written by `save_to_disk` (a Dataset or a DatasetDict)."""
    return (folder / "dataset_dict.json").is_file() or (folder / "state.json").is_file()


def _pyarrow() -> Any:
    from lasagna_synth._extras import missing_extra, missing_modules

    if missing_modules("pyarrow"):
        raise missing_extra("reading Parquet and Arrow files (Hugging Face datasets)", "hf")
    import pyarrow  # type: ignore[import-untyped]
    import pyarrow.ipc  # type: ignore[import-untyped]
    import pyarrow.parquet  # type: ignore[import-untyped]

    return pyarrow


def _rows_of_table(path: Path, label: str) -> list[dict[str, Any]]:
    pa = _pyarrow()
    try:
        if path.suffix.lower() == ".parquet":
            table = pa.parquet.read_table(path)
        else:
            with pa.memory_map(str(path)) as source:
                try:
                    table = pa.ipc.open_stream(source).read_all()
                except pa.ArrowInvalid:
                    source.seek(0)
                    table = pa.ipc.open_file(source).read_all()
    except (OSError, pa.ArrowException) as exc:
        raise DataError(label, [f"{label}: cannot read it as a table: {exc}"]) from None
    rows: list[dict[str, Any]] = table.to_pylist()
    return rows


def _json(path: Path, label: str) -> dict[str, Any]:
    try:
        value = parse_json(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(label, [f"{label}: not readable as JSON ({exc})"]) from None
    if not isinstance(value, dict):
        raise DataError(label, [f"{label}: expected a JSON object"])
    return value


def _dataset_files(folder: Path, label: str) -> tuple[list[Path], list[Path], str | None]:
    """A Dataset folder's (metadata files, Arrow files in order, the split it was saved
    from)."""
    state_path = folder / "state.json"
    state = _json(state_path, f"{label}/state.json")
    listed = state.get("_data_files")
    found = (
        [entry.get("filename") for entry in listed if isinstance(entry, dict)]
        if isinstance(listed, list)
        else []
    )
    names = [str(n) for n in found if isinstance(n, str)]
    if not names or len(names) != len(found):
        names = sorted(p.name for p in folder.glob("*.arrow"))
    arrows = [folder / str(name) for name in names]
    missing = [a.name for a in arrows if not a.is_file()]
    if missing or not arrows:
        raise DataError(
            label,
            [
                f"{label}: a dataset saved with save_to_disk needs its Arrow files; missing "
                f"{', '.join(missing) or 'data-*.arrow'}"
            ],
        )
    meta = [state_path]
    if (folder / "dataset_info.json").is_file():
        meta.append(folder / "dataset_info.json")
    split = state.get("_split")
    return meta, arrows, str(split) if isinstance(split, str) and split else None


def read_hf_folder(folder: Path) -> tuple[dict[str, list[dict[str, Any]]], str, list[str]]:
    """A save_to_disk folder: (rows per split, sha256 over the files read, notes)."""
    label = folder.name
    notes: list[str] = []
    files: list[Path] = []
    splits: dict[str, list[dict[str, Any]]] = {}
    if (folder / "dataset_dict.json").is_file():
        dict_file = folder / "dataset_dict.json"
        names = _json(dict_file, f"{label}/dataset_dict.json").get("splits")
        if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
            raise DataError(label, [f'{label}/dataset_dict.json: expected "splits": [names]'])
        files.append(dict_file)
        for name in names:
            meta, arrows, _ = _dataset_files(folder / name, f"{label}/{name}")
            files += meta + arrows
            splits[name] = [row for a in arrows for row in _rows_of_table(a, f"{label}/{name}")]
        notes.append(f"read as a Hugging Face DatasetDict saved to disk: splits {', '.join(names)}")
    else:
        meta, arrows, saved_from = _dataset_files(folder, label)
        files += meta + arrows
        splits[DEFAULT_SPLIT] = [row for a in arrows for row in _rows_of_table(a, label)]
        was = f" (saved from its split {saved_from})" if saved_from else ""
        notes.append(
            f"read as a Hugging Face Dataset saved to disk{was}: its rows are the split "
            f"{DEFAULT_SPLIT}"
        )
    return splits, folder_sha256(folder, files), notes


def read_hf_file(path: Path) -> tuple[dict[str, list[dict[str, Any]]], str, list[str]]:
    """A .parquet or .arrow file: (its rows as the split test, its sha256, notes)."""
    kind = "Parquet" if path.suffix.lower() == ".parquet" else "Arrow"
    rows = _rows_of_table(path, path.name)
    return {DEFAULT_SPLIT: rows}, file_sha256(path), [f"read as a {kind} table"]
