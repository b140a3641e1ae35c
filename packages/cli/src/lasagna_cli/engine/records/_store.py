"""Result files that are either whole or absent, where each task's record lives, and where a
run writes when -o is not given (`new_run_folder`, `default_output`).

Every finished task is one JSON file, written by lasagna-synth's one atomic writer
(temporary file in the same folder, rename; the runner flushes its records to disk in groups
of about a second), so a reader or a resumed run never sees half a result, even after
SIGKILL; after a power cut, a record of the last second may be missing or empty, and a
resumed run runs that task again. A killed writer can leave its temporary file behind;
`open_folder` clears them when a run starts, once it holds the folder (`_folder_lock`).

A `RecordStore` says where a task's record lives and how it is encoded: `RunStore` is
lasagna's layout (`<out>/tasks/<dataset>/<setup>/<item>.json`, the record as it is), kag's
sweep layout is in `kag/_results.py`. The runner is the one writer of either.

A store that is `batched` (`RunStore`) also takes the records of tasks that call no model
(retrieval only, or a predictions file's answers with no judge) a batch at a time:
`batch-<n>.jsonl` in the setup's folder, one line `{"file": "<item>.json", "record": {...}}`
per task, written by the same atomic writer, so a batch too is whole or absent: a batch
costs one file's creation and fsync where its tasks' own files would cost one each. Where a
task's record is (`folder_records`): its own file if there is one, else the highest-numbered
batch holding it; the runner, having written a batch, removes the older files of its tasks.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from lasagna_cli.engine._errors import EngineUsageError
from lasagna_cli.engine.records._fast_json import loads, loads_lines
from lasagna_cli.engine.records._folder_lock import FolderLock
from lasagna_cli.engine.records._json_layout import dumps_indented
from lasagna_synth import TEMP_PREFIX, atomic_writer, sync_filesystem, write_bytes_atomic

Record = dict[str, Any]
"""A task record (`_records`): plain JSON, so it crosses processes and machines as it is."""

__all__ = [
    "TEMP_PREFIX",
    "Record",
    "RecordStore",
    "RunStore",
    "TaskKey",
    "all_records",
    "check_output_file",
    "check_writable",
    "dump_json",
    "dump_task_json",
    "folder_records",
    "is_finished",
    "iter_records",
    "open_folder",
    "read_json",
    "read_records",
    "remove_stale_temp_files",
    "sync_filesystem",
    "write_batch",
    "write_bytes_atomic",
    "write_json_atomic",
]

BATCH_PREFIX, BATCH_SUFFIX = "batch-", ".jsonl"


def dump_json(obj: Any) -> bytes:
    """lasagna's JSON files a person opens (a manifest, results.json): keys sorted, UTF-8,
    indented, long lists one item a line (`dumps_indented`), one trailing newline."""
    return (dumps_indented(obj) + "\n").encode("utf-8")


task_json = json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode
"""One value as a per-task result file encodes it: keys sorted, UTF-8, one line, without
building an encoder per call (a sweep encodes a few values a task). One line because there
are thousands of these files, read by tools (`jq .` indents them), and json's C encoder
runs only without indent."""


def dump_task_json(obj: Any) -> bytes:
    """The encoding of a per-task result file: one line."""
    return (task_json(obj) + "\n").encode("utf-8")


def write_json_atomic(path: Path, obj: Any) -> None:
    write_bytes_atomic(path, dump_json(obj))


def is_finished(path: Path) -> bool:
    """A task is finished when its result file exists and is not empty."""
    try:
        return path.stat().st_size > 0
    except (FileNotFoundError, NotADirectoryError):
        return False


def read_json(path: str | Path) -> Any | None:
    """The parsed file at `path`, or None when it is missing, empty or not JSON."""
    try:
        with open(path, "rb") as handle:
            return loads(handle.read())
    except (FileNotFoundError, NotADirectoryError, ValueError):
        return None


def iter_temp_files(root: Path) -> Iterator[Path]:
    if root.is_dir():
        yield from root.rglob(f"{TEMP_PREFIX}*")


def remove_stale_temp_files(root: Path) -> int:
    """Delete temporary files a killed run left under `root`; returns how many."""
    removed = 0
    for temp in iter_temp_files(root):
        try:
            temp.unlink()
            removed += 1
        except FileNotFoundError:
            pass
    return removed


def check_writable(folder: Path, label: str, what: str = "the folder") -> None:
    """Make `folder` (and its parents) and write a file in it as every result is written
    (temporary file, rename), before any work that could be lost: a place that cannot be
    written is a usage error naming it as `label` (how the user gave it: "-o runs/x")."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise EngineUsageError(
            f"{label}: cannot create {what} ({exc.strerror}); choose another"
        ) from None
    probe = folder / f"{TEMP_PREFIX}probe-{os.getpid()}"
    try:
        with atomic_writer(probe) as handle:
            handle.write(b"")
        probe.unlink()
    except OSError as exc:
        raise EngineUsageError(
            f"{label}: cannot write files in {what} ({exc.strerror}); make it writable or "
            "choose another"
        ) from None


def check_output_file(path: Path, label: str, what: str = "the folder") -> None:
    """`check_writable` for the folder of a file a command writes (a link's target's
    folder); a device or pipe named, or linked to, is written into, so it alone must be; a
    folder named is refused (the file would replace it)."""
    try:
        mode: int | None = os.stat(path).st_mode
    except OSError:
        mode = None
    if mode is not None and stat.S_ISDIR(mode):
        raise EngineUsageError(f"{label}: expected a file, found a folder; give a file's path")
    if mode is not None and not stat.S_ISREG(mode):
        if not os.access(path, os.W_OK):
            raise EngineUsageError(f"{label}: cannot write to it (permission denied)")
        return
    check_writable(Path(os.path.realpath(path)).parent, label, what)


@contextmanager
def open_folder(folder: Path, label: str, what: str = "the folder") -> Iterator[int]:
    """Create the folder a run writes to (`check_writable`), hold it for this process
    (`FolderLock`: another process in it is refused) for the block, and clear the
    temporary files a killed run left in it; yields how many."""
    check_writable(folder, label, what)
    with FolderLock(folder, label):
        yield remove_stale_temp_files(folder)


class TaskKey(Protocol):
    """What names a task's record: its dataset's folder, its setup, its item."""

    @property
    def folder(self) -> str: ...

    @property
    def setup_name(self) -> str: ...

    @property
    def item(self) -> str: ...

    @property
    def dataset_name(self) -> str: ...


class RecordStore(Protocol):
    """Where the records of a run's tasks live, and their encoding on disk."""

    root: Path
    batched: bool
    """Whether records of tasks that call no model may share one batch file."""

    def path(self, task: TaskKey) -> Path: ...

    def encode(self, record: Record) -> bytes: ...

    def decode(self, data: Any) -> Record | None:
        """A parsed file as a record; None when it is not one of this store's."""
        ...


class RunStore:
    """lasagna's layout: `<root>/tasks/<dataset>_<split>/<setup>/<item>.json`, one line of
    JSON each. The dataset folder carries the dataset's content hash, so an edited file
    writes to a new folder and resuming never restores a result computed on the old one."""

    batched = True

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, task: TaskKey) -> Path:
        return self.root / f"tasks/{task.folder}/{slug(task.setup_name)}/{slug(task.item)}.json"

    def encode(self, record: Record) -> bytes:
        return dump_task_json(record)

    def decode(self, data: Any) -> Record | None:
        if isinstance(data, dict) and str(data.get("format", "")).startswith("lasagna-task/"):
            return data
        return None


def slug(text: str) -> str:
    """A file-system-safe name; a short hash keeps two names that slug alike apart."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "x"
    if safe == text and len(text) <= 100:
        return text
    return f"{safe[:80]}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"


def read_record(store: RecordStore, path: str | Path) -> Record | None:
    """The record at `path`, or None when it is missing, not JSON or not a record."""
    data = read_json(path)
    return store.decode(data) if data is not None else None


def batch_number(name: str) -> int | None:
    """n of a batch file's name `batch-<n>.jsonl`, None for any other name."""
    if name.startswith(BATCH_PREFIX) and name.endswith(BATCH_SUFFIX):
        number = name[len(BATCH_PREFIX) : -len(BATCH_SUFFIX)]
        return int(number) if number.isdigit() else None
    return None


def write_batch(folder: Path, number: int, entries: Sequence[tuple[str, bytes]]) -> None:
    """The batch `number` of `folder`: each (file name, encoded record), atomically."""
    lines = [b'{"file": %s, "record": %s}\n' % (dump_task_json(n).strip(), data.strip())
             for n, data in entries]  # fmt: skip
    write_bytes_atomic(folder / f"{BATCH_PREFIX}{number:06d}{BATCH_SUFFIX}", b"".join(lines))


def folder_records(store: RecordStore, folder: Path) -> dict[str, Record]:
    """Every record in one setup's folder by its file name: a task's own file, else the
    highest-numbered batch that holds it."""
    try:
        names = os.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return {}
    found: dict[str, Record] = {}
    batches = sorted((n, name) for name in names if (n := batch_number(name)) is not None)
    for _, name in batches:
        try:
            data = (folder / name).read_bytes()
        except FileNotFoundError:
            continue
        for entry in loads_lines(data):
            record = store.decode(entry.get("record")) if isinstance(entry, dict) else None
            if record is not None:
                found[str(entry.get("file"))] = record
    where = str(folder)
    for name in names:
        if name.endswith(".json") and not name.startswith(TEMP_PREFIX):
            record = read_record(store, os.path.join(where, name))  # no Path: 20,000 of them
            if record is not None:
                found[name] = record
    return found


def read_records(store: RecordStore, paths: Sequence[Path]) -> list[Record | None]:
    """The record of each task path (`read_record`), batches included when the store has
    them; each folder is listed and read once."""
    if not store.batched:
        return [read_record(store, path) for path in paths]
    folders: dict[Path, dict[str, Record]] = {}
    out: list[Record | None] = []
    for path in paths:
        if path.parent not in folders:
            folders[path.parent] = folder_records(store, path.parent)
        out.append(folders[path.parent].get(path.name))
    return out


def _task_folders(store: RecordStore) -> list[Path]:
    return sorted(p for p in (store.root / "tasks").glob("*/*") if p.is_dir())


def iter_records(store: RecordStore) -> Iterator[tuple[Path, Record]]:
    """Every record under a run folder's `tasks/`, with the path of its task, in path order."""
    for folder in _task_folders(store):
        for name, record in sorted(folder_records(store, folder).items()):
            yield folder / name, record


def all_records(store: RecordStore) -> Iterator[Record]:
    """The records of `iter_records`, in its order, without their paths (a report reads
    tens of thousands of records, whose paths alone would cost it time)."""
    for folder in _task_folders(store):
        records = folder_records(store, folder)
        for name in sorted(records):
            yield records[name]


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
        raise EngineUsageError(
            f"--resume: no earlier run of {path} under {RUNS_FOLDER}/; give its folder with -o"
        )
    folder = RUNS_FOLDER / f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}"
    number = 1
    while folder.exists():  # two runs in one second
        number += 1
        folder = RUNS_FOLDER / f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}-{number}"
    return folder
