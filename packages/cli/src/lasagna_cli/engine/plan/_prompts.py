"""The one prompt builder: a question and its passages to chat messages, pure functions.

Three styles (`PromptSpec.style`):
- "answer" (`benchmark run`): a short-answer system prompt, then the numbered passages
  and the question, or the question alone (closed-book); a missing answer is written
  "Not mentioned".
- "template" (kag's SETUPS.toml): `user` (kag's `system_prompt`, the one user message kag
  sends) and, when not empty, `system` (lasagna's: a setup giving both `system_prompt` and
  `prompt`), each rendered whole by MiniJinja as kag renders it: strict undefined, INPUT
  (the question) always, CHOICE (an MCQ's options as "key: value" lines) only for an MCQ
  question, RETRIEVAL (the passages, separated by blank lines) only when some were found,
  so `{{ RETRIEVAL | default('...') }}` works. A template that uses a variable the task
  lacks fails that task, as in kag. When a setup shows no CHOICE and its prompt is the
  default, an MCQ question's options follow the input, so a plain setup answers MCQ sets.
- "benchmark" (the staged pipeline): a registered benchmark's own prompt, one user message
  (the passages, the category's instruction, the "Not mentioned" rule, the question), as
  OpenViking's RAG benchmark asks it.
`max_passage_chars` cuts each passage in the prompt (OpenViking keeps 8,000 characters).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import replace
from functools import cache
from typing import TYPE_CHECKING, Any

from lasagna_cli.engine._data import Question
from lasagna_cli.engine.config._config import PromptSpec
from lasagna_cli.engine.run._scoring import NO_ANSWER

if TYPE_CHECKING:
    from lasagna_cli.engine.benchmarks import BenchmarkSpec

PROMPT_ID = "answer-v1"
SYSTEM_PROMPT = (
    "You answer questions briefly. Reply with the answer only: a short phrase, no "
    "explanation, no full sentence."
)
RAG_TEMPLATE = (
    "Passages:\n{passages}\n\nQuestion: {question}\n\nAnswer from the passages only. If they "
    f'do not contain the answer, reply exactly "{NO_ANSWER}".'
)
CLOSED_BOOK_TEMPLATE = (
    f'Question: {{question}}\n\nIf you do not know the answer, reply exactly "{NO_ANSWER}".'
)
DEFAULT_TEMPLATE = "{{INPUT}}"
DEFAULT_MCQ_TEMPLATE = DEFAULT_TEMPLATE + "\n\n{{CHOICE}}"
PLACEHOLDERS = ("INPUT", "RETRIEVAL", "CHOICE")

Messages = list[dict[str, str]]


def answer_prompt_sha256() -> str:
    """Identifies the "answer" prompts: recorded with every generated answer."""
    text = "\x1f".join((SYSTEM_PROMPT, RAG_TEMPLATE, CLOSED_BOOK_TEMPLATE))
    return hashlib.sha256(text.encode()).hexdigest()


@cache
def prompt_sha256(spec: PromptSpec) -> str:
    """What identifies a setup's prompts (part of every task's fingerprint)."""
    if spec.style == "answer":
        return answer_prompt_sha256()
    if spec.style == "template":
        text = "\x1f".join(("template", spec.system, spec.user))
    else:
        bench = _benchmark(spec)
        filled = [
            bench.build_prompt("{question}", c, ["{context}"]) for c in sorted(bench.categories)
        ]
        filled.append(bench.build_prompt("{question}", "", ["{context}"]))
        overrides = [f"{category}={text}" for category, text in spec.instructions]
        text = "\x1f".join(("benchmark", str(spec.max_passage_chars), *filled, *overrides))
    return hashlib.sha256(text.encode()).hexdigest()


def _benchmark(spec: PromptSpec) -> BenchmarkSpec:
    from lasagna_cli.engine.benchmarks import get_benchmark_spec

    assert spec.benchmark is not None
    bench = get_benchmark_spec(spec.benchmark)
    if not spec.instructions:
        return bench
    given = dict(spec.instructions)
    default = given.pop("*", bench.default_instruction)
    return replace(bench, instructions={**bench.instructions, **given}, default_instruction=default)


class PromptRenderError(Exception):
    """A template that could not be rendered for one task (its message is kag's)."""

    recorded_as_is = True  # the task's error record is the message alone, as kag's


def uses(spec: PromptSpec, placeholder: str) -> bool:
    """Whether a template expression or statement of the prompts names `placeholder`."""
    pattern = re.compile(r"\{[{%][^}]*\b" + placeholder + r"\b")
    return bool(pattern.search(spec.system) or pattern.search(spec.user))


def needs(spec: PromptSpec, placeholder: str) -> bool:
    """Whether rendering fails without `placeholder`: used bare, not behind
    `| default(...)` or `is defined` (kag's umls_prompt.md shows RETRIEVAL with a default,
    so a setup without retrieval may use it)."""
    values = {p: "x" for p in PLACEHOLDERS if p != placeholder}
    try:
        for text in (spec.system, spec.user):
            render_template(text, values)
    except PromptRenderError:
        return True
    return False


@cache
def _environment() -> Any:
    import minijinja

    # Rust's MiniJinja as kag uses it: strict undefined, no Python methods, no escaping.
    environment = minijinja.Environment(undefined_behavior="strict")
    environment.pycompat = False
    return environment


def render_template(template: str, values: dict[str, str]) -> str:
    """`template` rendered by MiniJinja with `values` (a value is never rendered again)."""
    import minijinja

    if "{" not in template:
        return template
    try:
        return str(_environment().render_str(template, **values))
    except minijinja.TemplateError as exc:
        detail = str(getattr(exc, "message", None) or str(exc).splitlines()[0])
        raise PromptRenderError(
            "Failed to render the prompt template: ensure all variables used in the "
            f"template are provided: {detail}"
        ) from None


def format_choices(question: Question) -> str:
    """An MCQ's options as kag writes CHOICE: "key: text" lines in the order of the keys
    (kag keeps them in a sorted map)."""
    if question.options is None:
        return ""
    return "\n".join(f"{key}: {question.options[key]}" for key in sorted(question.options))


def _cut(spec: PromptSpec, passages: Sequence[str]) -> list[str]:
    limit = spec.max_passage_chars
    return [p[:limit] for p in passages] if limit is not None else list(passages)


def build_messages(
    spec: PromptSpec, question: Question, passages: Sequence[str] | None
) -> Messages:
    """The chat messages for one question; `passages` None is closed-book."""
    if spec.style == "answer":
        if passages is None:
            user = CLOSED_BOOK_TEMPLATE.format(question=question.text)
        else:
            numbered = "\n\n".join(f"[{i}] {t}" for i, t in enumerate(_cut(spec, passages), 1))
            user = RAG_TEMPLATE.format(
                passages=numbered or "(no passage was retrieved)", question=question.text
            )
        return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]
    if spec.style == "benchmark":
        prompt = _benchmark(spec).build_prompt(
            question.text, question.category, _cut(spec, passages or ())
        )
        return [{"role": "user", "content": prompt}]
    values = {"INPUT": question.text}
    if question.options is not None:
        values["CHOICE"] = format_choices(question)
    retrieved = "\n\n".join(p.strip() for p in _cut(spec, passages or ()))
    if retrieved:  # kag defines RETRIEVAL only for a retrieval that found something
        values["RETRIEVAL"] = retrieved
    user = spec.user
    if question.is_mcq and user == DEFAULT_TEMPLATE and not uses(spec, "CHOICE"):
        user = DEFAULT_MCQ_TEMPLATE
    messages = []
    if spec.system.strip():
        messages.append({"role": "system", "content": render_template(spec.system, values)})
    messages.append({"role": "user", "content": render_template(user, values)})
    return messages


def system_input(spec: PromptSpec, question: Question) -> str:
    """What a user's system is asked: the question, or a template setup's prompt filled
    (with the MCQ options, no passages: the system retrieves for itself)."""
    if spec.style != "template":
        return question.text
    return build_messages(spec, question, ())[-1]["content"]
