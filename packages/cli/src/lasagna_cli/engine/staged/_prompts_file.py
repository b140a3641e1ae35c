"""A dataset's prompt overrides for the staged pipeline, named by OpenViking's config
(`prompts: FILE`, lasagna's own key)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lasagna_cli.engine._errors import EngineError, EngineUsageError, did_you_mean


@dataclass(frozen=True)
class Prompts:
    """A dataset's prompt overrides: per-category answer instructions ("*": the default
    one) and the judge's rubric file."""

    path: Path
    instructions: tuple[tuple[str, str], ...]
    judge_rubric: Path | None
    sha256: str

    def describe(self) -> dict[str, Any]:
        return {
            "file": str(self.path),
            "sha256": self.sha256,
            "instructions": dict(self.instructions),
            "judge_rubric": str(self.judge_rubric) if self.judge_rubric else None,
        }


_PROMPT_KEYS = ("instructions", "default_instruction", "judge_rubric")


def load_prompts(path: Path, benchmark: str) -> Prompts:
    """A prompts file (YAML):

        instructions:                  # category -> the answer instruction (any subset)
          "1": "Extract the exact factual answer from the conversation."
        default_instruction: "..."     # for categories without their own
        judge_rubric: "locomo_judge.toml"   # a lasagna rubric file, beside this file

    Every key and category is checked: a typo is an error, never a silent default."""
    import hashlib

    import yaml

    from lasagna_cli.engine.benchmarks import get_benchmark_spec
    from lasagna_judge import load_yaml

    try:
        raw = path.read_bytes()
        data = load_yaml(raw.decode("utf-8"))
    except FileNotFoundError:
        raise EngineUsageError(f"prompts: {path}: no such file") from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise EngineError(f"prompts: {path}: cannot read it ({str(exc).splitlines()[0]})") from None
    if not isinstance(data, dict) or not data:
        raise EngineError(f"prompts: {path}: expected a mapping with {', '.join(_PROMPT_KEYS)}")
    for key in data:
        if key not in _PROMPT_KEYS:
            raise EngineError(
                f"prompts: {path}: unknown key {key!r}{did_you_mean(str(key), _PROMPT_KEYS)}; "
                f"expected {', '.join(_PROMPT_KEYS)}"
            )
    categories = get_benchmark_spec(benchmark).categories
    given = data.get("instructions") or {}
    if not isinstance(given, dict):
        raise EngineError(f"prompts: {path}: expected `instructions` to map categories to text")
    pairs = []
    for category, text in given.items():
        if str(category) not in categories:
            raise EngineError(
                f"prompts: {path}: instructions: {benchmark} has no category {category!r}"
                f"{did_you_mean(str(category), categories)}; its categories are "
                f"{', '.join(categories)}"
            )
        if not isinstance(text, str) or not text.strip():
            raise EngineError(f"prompts: {path}: instructions.{category}: expected text")
        pairs.append((str(category), text.strip()))
    default = data.get("default_instruction")
    if default is not None:
        if not isinstance(default, str) or not default.strip():
            raise EngineError(f"prompts: {path}: expected `default_instruction` to be text")
        pairs.append(("*", default.strip()))
    rubric = data.get("judge_rubric")
    if rubric is not None and not isinstance(rubric, str):
        raise EngineError(f"prompts: {path}: expected `judge_rubric` to be a file name")
    return Prompts(
        path=path,
        instructions=tuple(sorted(pairs)),
        judge_rubric=path.parent / rubric if rubric else None,
        sha256=hashlib.sha256(raw).hexdigest(),
    )
