"""The row formats of other tools, field by field, with what each field means.

RAGAS, DeepEval and lasagna name the same things differently, and the same names mean
different things: RAGAS v0.1's `answer` and `contexts` are the system's answer and
retrieved passages, where lasagna's are the reference answer and the gold passages. So a
field is always read by its meaning in the format the file is in:

| meaning | lasagna | RAGAS v0.1 | RAGAS v0.2+ | DeepEval |
|---|---|---|---|---|
| the question | question | question | user_input | input |
| reference answers | answer, answers | ground_truth, ground_truths | reference | expected_output |
| gold passages | context, contexts | (none) | reference_contexts | context |
| the system's answer | (none) | answer | response | actual_output |
| the system's retrieved passages | (none) | contexts | retrieved_contexts | retrieval_context |

The system's outputs are never read as references or gold passages: they are kept apart,
per row id, for `load_data_and_outputs` (a predictions source). `id` and `metadata` are
read in every format (DeepEval's `additional_metadata` is its metadata). A file's format is
the one whose own fields it uses (`format=` overrides); a did-you-mean only suggests a
field of the file's format, and a field of another format is named as such, with its
meaning, never matched by spelling to a field that means something else.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

Role = Literal[
    "id",
    "question",
    "reference",
    "gold",
    "doc_names",
    "metadata",
    "evidence",
    "corpus",
    "answer_out",
    "retrieved_out",
    "extra_metadata",
    "ignored",
]

#: What a role is, in messages and notes.
MEANINGS: dict[Role, str] = {
    "id": "the row's id",
    "question": "the question",
    "reference": "reference answers",
    "gold": "gold passages (what retrieval must find)",
    "doc_names": "names of the gold passages",
    "metadata": "metadata",
    "evidence": "spans of the corpus documents the gold passages were cut from",
    "corpus": "the folder of documents the rows were written from",
    "answer_out": "the system's answer (an output, not a reference)",
    "retrieved_out": "the system's retrieved passages (an output, not gold passages)",
    "extra_metadata": "kept in metadata",
    "ignored": "not read",
}

SHORT: dict[Role, str] = {
    **MEANINGS,
    "gold": "gold passages",
    "answer_out": "the system's answer",
    "retrieved_out": "the system's retrieved passages",
}

FormatName = Literal["lasagna", "ragas-v0.1", "ragas-v0.2", "deepeval", "squad-columns"]


@dataclass(frozen=True)
class FieldFormat:
    name: FormatName
    label: str
    fields: Mapping[str, Role]
    markers: frozenset[str]  # fields no other format has: they identify it

    def with_role(self, role: Role) -> list[str]:
        return [f for f, r in self.fields.items() if r == role]


LASAGNA = FieldFormat(
    "lasagna",
    "lasagna's own format",
    {
        "id": "id",
        "question": "question",
        "answer": "reference",
        "answers": "reference",
        "context": "gold",
        "contexts": "gold",
        "expected_docs": "doc_names",
        "evidence": "evidence",
        "corpus": "corpus",
        "metadata": "metadata",
    },
    frozenset(),
)
RAGAS_V01 = FieldFormat(
    "ragas-v0.1",
    "RAGAS v0.1 rows",
    {
        "id": "id",
        "question": "question",
        "answer": "answer_out",
        "contexts": "retrieved_out",
        "ground_truth": "reference",
        "ground_truths": "reference",
        "metadata": "metadata",
    },
    frozenset({"ground_truth", "ground_truths"}),
)
RAGAS_V02 = FieldFormat(
    "ragas-v0.2",
    "RAGAS v0.2+ rows",
    {
        "id": "id",
        "user_input": "question",
        "response": "answer_out",
        "retrieved_contexts": "retrieved_out",
        "reference": "reference",
        "reference_contexts": "gold",
        "metadata": "metadata",
        # what RAGAS's test set generation adds beside the sample
        "synthesizer_name": "extra_metadata",
        "persona_name": "extra_metadata",
        "query_style": "extra_metadata",
        "query_length": "extra_metadata",
        "rubrics": "extra_metadata",
        "multi_responses": "ignored",
    },
    frozenset(
        {
            "user_input",
            "response",
            "retrieved_contexts",
            "reference",
            "reference_contexts",
            "synthesizer_name",
            "persona_name",
            "query_style",
            "query_length",
            "multi_responses",
        }
    ),
)
DEEPEVAL = FieldFormat(
    "deepeval",
    "DeepEval goldens/test cases",
    {
        "id": "id",
        "input": "question",
        "actual_output": "answer_out",
        "expected_output": "reference",
        "context": "gold",
        "retrieval_context": "retrieved_out",
        "additional_metadata": "metadata",
        "name": "extra_metadata",
        "comments": "extra_metadata",
        "source_file": "extra_metadata",
        "tools_called": "ignored",
        "expected_tools": "ignored",
    },
    frozenset(
        {"input", "actual_output", "expected_output", "retrieval_context", "additional_metadata"}
    ),
)
# Hugging Face's squad / squad_v2 columns: answers is {"text": [...], "answer_start": [...]}.
SQUAD_COLUMNS = FieldFormat(
    "squad-columns",
    "SQuAD columns (Hugging Face's squad, squad_v2)",
    {
        "id": "id",
        "question": "question",
        "answers": "reference",
        "context": "gold",
        "title": "extra_metadata",
        "metadata": "metadata",
    },
    frozenset(),
)
# lasagna's CSV: the columns of its JSONL that a cell can hold.
CSV_FORMAT = FieldFormat(
    "lasagna",
    "lasagna's CSV",
    {"id": "id", "question": "question", "answer": "reference", "contexts": "gold"},
    frozenset(),
)
FIELD_FORMATS = (LASAGNA, RAGAS_V01, RAGAS_V02, DEEPEVAL)
_BY_NAME = {f.name: f for f in (*FIELD_FORMATS, SQUAD_COLUMNS)}

#: The values of `format=` (the CLI's `--data-format`): "hf" names the container (a dataset
#: saved to disk, Parquet, Arrow, or its JSONL export); the fields in it are detected.
DATA_FORMATS = ("lasagna", "ragas", "deepeval", "hf")
"""The formats `load_data(format=...)` and `--data-format` read."""


def format_option(given: str) -> str:
    return f'format="{given}" (--data-format {given} on the command line)'


def detect(keys: Iterable[str], records_have_squad_answers: bool) -> list[FieldFormat]:
    """The formats whose own fields `keys` use: none (lasagna's), one, or several (mixed)."""
    present = set(keys)
    found = [f for f in (RAGAS_V01, RAGAS_V02, DEEPEVAL) if f.markers & present]
    if not found and records_have_squad_answers:
        return [SQUAD_COLUMNS]
    return found


def choose(given: str | None, keys: Iterable[str], squad_answers: bool) -> FieldFormat | str:
    """The field format of a file, or the message saying why it cannot be told."""
    present = set(keys)
    found = detect(present, squad_answers)
    if given in (None, "hf"):
        if len(found) > 1:
            parts = "; ".join(
                f"{f.label} ({', '.join(sorted(f.markers & present))})" for f in found
            )
            return (
                f"the rows mix the fields of {parts}; one file holds one format: fix the file, "
                f"or name its format with {format_option('ragas')} or {format_option('deepeval')}"
            )
        return found[0] if found else LASAGNA
    if given == "lasagna":
        return LASAGNA
    if given == "deepeval":
        return DEEPEVAL
    if given == "ragas":
        if RAGAS_V02.markers & present:
            return RAGAS_V02
        if present & {"question", "answer", "contexts", "ground_truth", "ground_truths"}:
            return RAGAS_V01
        return RAGAS_V02
    raise ValueError(given)


def by_name(name: FormatName) -> FieldFormat:
    return _BY_NAME[name]


def public_name(fmt: FieldFormat) -> str:
    """The `format=` value that reads a file as `fmt`."""
    return {"ragas-v0.1": "ragas", "ragas-v0.2": "ragas", "squad-columns": "hf"}.get(
        fmt.name, fmt.name
    )


def _elsewhere(key: str, fmt: FieldFormat) -> dict[Role, list[FieldFormat]]:
    """The meanings `key` has in the formats other than `fmt` that have it."""
    found: dict[Role, list[FieldFormat]] = {}
    for other in (*FIELD_FORMATS, SQUAD_COLUMNS):
        role = other.fields.get(key)
        if other is not fmt and role is not None and role not in ("ignored", "extra_metadata"):
            found.setdefault(role, []).append(other)
    return found


def _describe(key: str, fmt: FieldFormat, elsewhere: dict[Role, list[FieldFormat]]) -> str:
    """What `key` means in the formats that have it, and which field of `fmt` means that."""
    text = f'"{key}" means ' + ", ".join(
        f"{MEANINGS[role]} in {' and '.join(o.label for o in others)}"
        for role, others in elsewhere.items()
    )
    here = []
    for role in elsewhere:
        ours = " or ".join(f'"{f}"' for f in fmt.with_role(role)) or "none"
        if role in ("answer_out", "retrieved_out") and ours == "none":
            ours += " (outputs go in a predictions file)"
        here.append(f"{SHORT[role]}: {ours}")
    text += f"; in {fmt.label}, " + ", ".join(here)
    if fmt is not CSV_FORMAT:
        options = {public_name(o): o.label for others in elsewhere.values() for o in others}
        options.pop(public_name(fmt), None)
        options.pop("hf", None)  # SQuAD's columns are told by their shape, not by a format
        for name, label in options.items():
            text += f"; or read the file as {label} with {format_option(name)}"
    return text


def field_hint(key: str, fmt: FieldFormat) -> str:
    """What to say after `unknown field "key"` in a file of format `fmt`.

    A field that means one thing wherever it is a field, where `fmt` has a field of that
    meaning: a did-you-mean to that field. A field of other formats otherwise: what it
    means there, and which field here (if any) means the same. Anything else: a
    did-you-mean by spelling, among `fmt`'s fields, unless the nearest known field belongs
    to another format (then that field is described). Never a field of another meaning.
    """
    elsewhere = _elsewhere(key, fmt)
    if elsewhere:
        (role, _), *rest = elsewhere.items()
        same = fmt.with_role(role)
        if not rest and same:
            best = difflib.get_close_matches(key, same, n=1, cutoff=0.0)
            return f' (did you mean "{best[0] if best else same[0]}"?)'
        return f" ({_describe(key, fmt, elsewhere)})"
    every = list(dict.fromkeys(k for f in (*FIELD_FORMATS, SQUAD_COLUMNS) for k in f.fields))
    close = difflib.get_close_matches(key, every, n=1, cutoff=0.6)
    if not close:
        return ""
    if close[0] in fmt.fields:
        return f' (did you mean "{close[0]}"?)'
    return field_hint(close[0], fmt).replace(" (", f' (perhaps "{close[0]}": ', 1)
