"""Filling a setup's prompts for one question: pure functions, no I/O.

{{INPUT}} is the question's input, {{CHOICE}} the MCQ options as "key: value" lines (empty
for a free-form question) and {{RETRIEVAL}} the retrieved passages, separated by blank
lines. When a setup shows no {{CHOICE}} and its prompt is the default, an MCQ question's
options follow the input, so a plain setup can answer MCQ sets too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from lasagna_cli._sweep._datasets import Question
from lasagna_cli._sweep._setups import DEFAULT_PROMPT, Setup

_PLACEHOLDER = re.compile(r"\{\{(INPUT|RETRIEVAL|CHOICE)\}\}")
DEFAULT_MCQ_PROMPT = DEFAULT_PROMPT + "\n\n{{CHOICE}}"


def format_choices(question: Question) -> str:
    if question.options is None:
        return ""
    return "\n".join(f"{key}: {text}" for key, text in question.options.items())


def format_passages(passages: Sequence[str]) -> str:
    return "\n\n".join(passage.strip() for passage in passages)


def fill(template: str, values: dict[str, str]) -> str:
    """One pass, so a question that itself contains "{{CHOICE}}" is not filled again."""
    if "{{" not in template:
        return template
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def build_messages(
    setup: Setup, question: Question, passages: Sequence[str] = ()
) -> list[dict[str, str]]:
    """The chat messages of one task: the system prompt (when not empty), then the user's."""
    values = {
        "INPUT": question.input,
        "CHOICE": format_choices(question),
        "RETRIEVAL": format_passages(passages),
    }
    prompt = setup.prompt
    if question.is_mcq and prompt == DEFAULT_PROMPT and not setup.uses("CHOICE"):
        prompt = DEFAULT_MCQ_PROMPT
    messages = []
    if setup.system_prompt.strip():
        messages.append({"role": "system", "content": fill(setup.system_prompt, values)})
    messages.append({"role": "user", "content": fill(prompt, values)})
    return messages
