"""Rubrics as data: what a judge is asked, and which scores it may give.

A rubric is an id, a version, a system text, a user prompt template and a scale. Grades
record the id and version, so changing a built-in rubric's text means bumping its version.
The built-ins live as TOML files in `lasagna_judge/rubrics/`; users load their own from a
TOML or YAML file with the same fields.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from lasagna_judge._errors import JudgeError

OutOfScale = Literal["lowest", "nearest"]

BUILTIN_RUBRICS = ("binary", "scale")
"""The rubrics `load_rubric` knows by name: `binary` (0 or 4) and `scale` (0 to 4)."""

# The placeholders a prompt template may use; {references} and {prediction} are required.
PLACEHOLDERS = ("question", "references", "prediction")
_REQUIRED_PLACEHOLDERS = ("references", "prediction")
_PLACEHOLDER_RE = re.compile(r"\{(question|references|prediction)\}")

_REQUIRED_FIELDS = ("id", "version", "scale", "prompt")
_OPTIONAL_FIELDS = ("system", "out_of_scale", "description")
_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


@dataclass(frozen=True)
class Rubric:
    """How to ask for a grade and which scores are allowed.

    `scale` is the sorted set of allowed scores. `out_of_scale` says what a score outside
    it becomes: "lowest" (anything that is not an allowed score is the lowest one: binary's
    "anything but 4 is 0") or "nearest" (the closest allowed score, so values beyond either
    end are clamped).
    """

    id: str
    version: str
    prompt: str
    scale: tuple[int, ...]
    system: str = ""
    out_of_scale: OutOfScale = "nearest"
    description: str = ""

    def __post_init__(self) -> None:
        problems = _check(self)
        if problems:
            raise JudgeError(f"invalid rubric {self.id!r}: {'; '.join(problems)}")

    @property
    def lowest(self) -> int:
        return self.scale[0]

    @property
    def highest(self) -> int:
        return self.scale[-1]

    def coerce(self, value: float) -> int:
        """The allowed score a parsed value stands for, by the rubric's out-of-scale rule."""
        if value != value:  # NaN is no score at all; the caller never passes one
            raise JudgeError("a score cannot be NaN")
        if value in self.scale:
            return int(value)
        if self.out_of_scale == "lowest":
            return self.lowest
        if value <= self.lowest:
            return self.lowest
        if value >= self.highest:
            return self.highest
        # Nearest allowed score; a tie goes to the lower one, the conservative reading.
        return min(self.scale, key=lambda allowed: (abs(allowed - value), allowed))

    def in_scale(self, value: float) -> bool:
        return value in self.scale


def _check(rubric: Rubric) -> list[str]:
    problems: list[str] = []
    if not isinstance(rubric.id, str) or not _ID_RE.match(rubric.id):
        problems.append(f"id must be letters, digits, '.', '_' or '-' (found {rubric.id!r})")
    if not isinstance(rubric.version, str) or not rubric.version.strip():
        problems.append(f"version must be a non-empty string (found {rubric.version!r})")
    scale = rubric.scale
    if (
        not isinstance(scale, tuple)
        or len(scale) < 2
        or not all(isinstance(s, int) and not isinstance(s, bool) for s in scale)
        or list(scale) != sorted(set(scale))
    ):
        problems.append(
            f"scale must be at least two distinct whole numbers in increasing order "
            f"(found {list(scale) if isinstance(scale, tuple) else scale!r})"
        )
    if rubric.out_of_scale not in ("lowest", "nearest"):
        problems.append(
            f"out_of_scale must be 'lowest' or 'nearest' (found {rubric.out_of_scale!r})"
        )
    if not isinstance(rubric.prompt, str):
        problems.append(f"prompt must be a string (found {type(rubric.prompt).__name__})")
    else:
        used = set(_PLACEHOLDER_RE.findall(rubric.prompt))
        missing = [p for p in _REQUIRED_PLACEHOLDERS if p not in used]
        if missing:
            problems.append(
                "prompt must contain the placeholders " + ", ".join("{" + p + "}" for p in missing)
            )
    if not isinstance(rubric.system, str):
        problems.append(f"system must be a string (found {type(rubric.system).__name__})")
    if not isinstance(rubric.description, str):
        problems.append(f"description must be a string (found {type(rubric.description).__name__})")
    return problems


def rubric_from_mapping(data: Mapping[str, Any], *, source: str = "rubric") -> Rubric:
    """Build a rubric from parsed TOML/YAML, naming any missing or unknown field."""
    if not isinstance(data, Mapping):
        raise JudgeError(
            f"{source}: expected a table of rubric fields, found {type(data).__name__}"
        )
    unknown = sorted(str(k) for k in data if k not in _REQUIRED_FIELDS + _OPTIONAL_FIELDS)
    if unknown:
        raise JudgeError(
            f"{source}: unknown rubric field(s) {', '.join(unknown)}; the fields are "
            f"{', '.join(_REQUIRED_FIELDS)} (required) and {', '.join(_OPTIONAL_FIELDS)}"
        )
    missing = [k for k in _REQUIRED_FIELDS if k not in data]
    if missing:
        raise JudgeError(
            f"{source}: missing rubric field(s) {', '.join(missing)}; a rubric needs "
            f"{', '.join(_REQUIRED_FIELDS)}"
        )
    scale = data["scale"]
    if not isinstance(scale, Sequence) or isinstance(scale, str):
        raise JudgeError(
            f"{source}: scale must be a list of whole numbers such as [0, 4], found {scale!r}"
        )
    version = data["version"]
    # `version = 1` in TOML or YAML is an easy slip; a number is as good as its text.
    if isinstance(version, int | float) and not isinstance(version, bool):
        version = str(version)
    try:
        return Rubric(
            id=data["id"],
            version=version,
            prompt=data["prompt"],
            scale=tuple(scale),
            system=data.get("system", ""),
            out_of_scale=data.get("out_of_scale", "nearest"),
            description=data.get("description", ""),
        )
    except JudgeError as exc:
        raise JudgeError(f"{source}: {exc}") from None


def load_rubric(name_or_path: str | Path) -> Rubric:
    """A built-in rubric by name ("binary", "scale") or one read from a .toml/.yaml file."""
    if isinstance(name_or_path, str) and name_or_path in BUILTIN_RUBRICS:
        data = resources.files("lasagna_judge").joinpath(f"rubrics/{name_or_path}.toml")
        return rubric_from_mapping(
            tomllib.loads(data.read_text(encoding="utf-8")), source=f"rubric {name_or_path}"
        )
    path = Path(name_or_path)
    suffix = path.suffix.lower()
    if suffix not in (".toml", ".yaml", ".yml"):
        raise JudgeError(
            f"unknown rubric {str(name_or_path)!r}: expected one of "
            f"{', '.join(BUILTIN_RUBRICS)} or a path to a .toml or .yaml file"
        )
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise JudgeError(
            f"rubric file not found: {path}; give {', '.join(BUILTIN_RUBRICS)} "
            f"or an existing .toml/.yaml file"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise JudgeError(f"cannot read rubric file {path}: {exc}") from None
    return rubric_from_mapping(_parse_file(text, suffix, path), source=str(path))


def _parse_file(text: str, suffix: str, path: Path) -> Any:
    if suffix == ".toml":
        from lasagna_judge._toml import TomlError, load_toml

        try:
            return load_toml(text)
        except TomlError as exc:
            raise JudgeError(f"{path}: not valid TOML ({exc}); fix the file") from None
    import yaml  # type: ignore[import-untyped,unused-ignore]  # lazy: only YAML rubrics need it

    from lasagna_judge._yaml import load_yaml

    try:
        return load_yaml(text)
    except yaml.YAMLError as exc:
        detail = str(exc).replace("\n", " ")
        raise JudgeError(f"{path}: not valid YAML ({detail}); fix the file") from None


@dataclass(frozen=True)
class Prompt:
    """The messages a judge is sent, and the sha256 that identifies them in a grade."""

    messages: tuple[Mapping[str, str], ...]
    sha256: str

    def as_list(self) -> list[dict[str, str]]:
        return [dict(m) for m in self.messages]


def normalize_references(references: str | Sequence[str]) -> list[str]:
    """One reference or several, as a list of non-empty strings (JudgeError otherwise)."""
    refs = [references] if isinstance(references, str) else list(references)
    if not refs:
        raise JudgeError("references: expected at least one reference answer, found none")
    for i, ref in enumerate(refs):
        if not isinstance(ref, str):
            raise JudgeError(
                f"references[{i}]: expected a string, found {type(ref).__name__} ({ref!r})"
            )
    if not any(ref.strip() for ref in refs):
        raise JudgeError("references: every reference answer is empty; give at least one")
    return refs


def join_references(references: str | Sequence[str]) -> str:
    """Several references joined by " | ", as the rubrics describe them."""
    return " | ".join(r.strip() for r in normalize_references(references) if r.strip())


def check_texts(question: object, prediction: object) -> None:
    """The JudgeError `build_prompt` raises for a question or prediction that is no string."""
    for name, value in (("question", question), ("prediction", prediction)):
        if not isinstance(value, str):
            raise JudgeError(f"{name}: expected a string, found {type(value).__name__}")


def build_prompt(
    rubric: Rubric, *, question: str, references: str | Sequence[str], prediction: str
) -> Prompt:
    """Fill the rubric's template. Pure: the same inputs give the same messages and sha256."""
    check_texts(question, prediction)
    values = {
        "question": question.strip(),
        "references": join_references(references),
        "prediction": prediction.strip(),
    }
    # One pass, so a placeholder written inside an answer is never substituted again.
    user = _PLACEHOLDER_RE.sub(lambda m: values[m.group(1)], rubric.prompt).strip()
    messages: list[Mapping[str, str]] = []
    if rubric.system.strip():
        messages.append({"role": "system", "content": rubric.system.strip()})
    messages.append({"role": "user", "content": user})
    return Prompt(messages=tuple(messages), sha256=messages_sha256(messages))


def messages_sha256(messages: Sequence[Mapping[str, str]]) -> str:
    canonical = json.dumps(
        [dict(m) for m in messages], ensure_ascii=False, sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
