"""`benchmark run --dry-run`: the plan and what it will ask of each model, before any call.

From the very tasks a run would make (`plan_tasks`), for each role and model: the calls
(one answer per answer section; one grade per gradable answer and judge; the claim calls of
`--diagnostics`, `claim_calls` of the passages read, with or without a reference), the input
tokens estimated, and the output tokens at most. Tokens are cl100k_base counts
(`lasagna_synth.count_tokens`, the synth dry run's yardstick) of the real prompts: the
answer prompt with the corpus's mean passage standing for each of the top-k passages (the
passages are known only once retrieval ran), the judge's rubric prompt with an answer of the
generator's cap. What is assumed is said: a grade's reply at `GRADE_REPLY_TOKENS`, a claim
extraction's at lasagna-judge's cap (1,024), a check's at its cap for `ASSUMED_CLAIMS`.
Nothing is called, no index is built, nothing is written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from lasagna_cli.engine.config._config import RunConfig
from lasagna_cli.engine.datasets import DatasetLoader, duplicates_note
from lasagna_cli.engine.plan._plan import build_plan
from lasagna_cli.engine.plan._prompts import build_messages
from lasagna_cli.engine.run._diagnostics import DIAGNOSED_SECTION, claim_calls
from lasagna_cli.engine.run._options import RunOptions
from lasagna_cli.engine.run._runner import plan_tasks
from lasagna_cli.engine.run._scoring import gradable, judge_references
from lasagna_cli.engine.run._tasks import MAX_ANSWER_TOKENS

#: A grade's reply (one or two sentences of reasoning and the score), assumed.
GRADE_REPLY_TOKENS = 64
#: Claims per answer assumed for a check's reply cap (16 tokens a claim, and 64).
ASSUMED_CLAIMS = 8
EXTRACT_MAX_TOKENS = 1024  # lasagna_judge._claims's cap on an extraction's reply


@dataclass
class RoleCalls:
    """One role's calls to one model."""

    role: str
    """"generator", "judge" or "claims" (the judge's --diagnostics calls)."""
    model: str
    calls: int = 0
    input_tokens: int = 0
    max_output_tokens: int = 0


@dataclass
class DryRun:
    plan: list[tuple[str, str, int]] = field(default_factory=list)
    """(benchmark, setup, questions), in the plan's order."""
    roles: list[RoleCalls] = field(default_factory=list)
    system_calls: int = 0
    """Questions a user's --system is asked (its cost is its own)."""
    notes: list[str] = field(default_factory=list)
    """What the plan's questions leave out (a file's duplicate questions, scored once)."""


def priced(
    roles: Sequence[RoleCalls], price_of: Callable[[str], tuple[float, float] | None]
) -> tuple[float, list[str]]:
    """The most the calls cost at `price_of(model)` (USD per 1M input, output tokens), and the
    models without a price (left out of the sum, never counted as free)."""
    total, unpriced = 0.0, []
    for row in roles:
        price = price_of(row.model)
        if price is None:
            unpriced.append(row.model)
            continue
        total += (row.input_tokens * price[0] + row.max_output_tokens * price[1]) / 1e6
    return total, sorted(set(unpriced))


def dry_run(config: RunConfig, loader: DatasetLoader) -> DryRun:
    """The plan of `config` and its calls by role (see the module); the data is read."""
    from lasagna_cli.engine.run._scoring import load_judge_rubric
    from lasagna_judge import build_prompt
    from lasagna_synth import count_tokens

    loader.probe(config.benchmarks)
    plan = build_plan(config, loader)
    rubric = load_judge_rubric(config.rubric) if config.judge is not None else None
    options = RunOptions(
        judge=config.judge, jury=config.jury, rubric=rubric, diagnostics=config.diagnostics
    )
    tasks = plan_tasks(plan, options)
    judges = config.judges
    found = DryRun()
    for bench in plan:
        if bench.dataset.duplicates:
            found.notes.append(f"{bench.entry.where}: {duplicates_note(bench.dataset.duplicates)}")
    rows: dict[tuple[str, str], RoleCalls] = {}
    means: dict[int, int] = {}
    counts: dict[tuple[str, str], int] = {}

    def add(role: str, model: str, calls: int, tokens_in: int, tokens_out: int) -> None:
        row = rows.setdefault((role, model), RoleCalls(role, model))
        row.calls += calls
        row.input_tokens += tokens_in
        row.max_output_tokens += tokens_out

    def mean_passage(corpus: Any) -> int:
        if id(corpus) not in means:
            texts = list(corpus.texts.values()) if corpus is not None else []
            means[id(corpus)] = count_tokens(texts) // len(texts) if texts else 0
        return means[id(corpus)]

    for task in tasks:
        bench, planned, question = plan[task.position], task.planned, task.question
        key = (bench.name, task.setup_name)
        counts[key] = counts.get(key, 0) + 1
        if not planned.answers:
            continue
        if planned.setup.system is not None:
            found.system_calls += 1
            continue
        generator = planned.setup.generator
        assert generator is not None
        cap = generator.max_tokens or MAX_ANSWER_TOKENS
        spec = planned.setup.retriever
        sections = [(n, m) for n, m in (("generation", planned.generation_mode),) if m]
        if "closed-book" in planned.tracks:
            sections.append(("closed-book", "closed-book"))
        for name, mode in sections:
            top_k = spec.top_k if mode == "rag" and spec is not None else 0
            passage = mean_passage(bench.dataset.corpus_for(task.setup.chunking)) if top_k else 0
            messages = build_messages(task.setup.prompt, question, [""] * top_k if top_k else None)
            prompt = count_tokens(m["content"] for m in messages)
            add("generator", generator.name, 1, prompt + top_k * passage, cap)
            if rubric is not None and gradable(question):
                grading = build_prompt(
                    rubric,
                    question=question.text,
                    references=judge_references(question),
                    prediction="",
                )
                tokens = count_tokens(m["content"] for m in grading.messages) + cap
                for judge in judges:
                    add("judge", judge, 1, tokens, GRADE_REPLY_TOKENS)
            if config.diagnostics and name == DIAGNOSED_SECTION and question.options is None:
                with_reference = not question.unanswerable and bool(question.references)
                calls = claim_calls(top_k, with_reference)
                asked = count_tokens([question.text]) + cap
                # Extractions read the answer (and reference); checks also a passage each.
                tokens_in = calls * asked + 2 * top_k * passage
                extractions = 2 if with_reference else 1
                tokens_out = extractions * EXTRACT_MAX_TOKENS
                tokens_out += (calls - extractions) * (16 * ASSUMED_CLAIMS + 64)
                add("claims", judges[0], calls, tokens_in, tokens_out)
    found.plan = [(b, s, n) for (b, s), n in counts.items()]
    found.roles = list(rows.values())
    return found


def dry_run_lines(
    config: RunConfig, loader: DatasetLoader, prices: dict[str, tuple[float, float]] | None
) -> list[str]:
    """What `benchmark run --dry-run` prints: `config`'s plan (`dry_run`) and its calls;
    with `prices` (--prices), what the calls cost at most, and through --batch."""
    from lasagna_judge import price_for

    found = dry_run(config, loader)
    price_of = (lambda model: price_for(prices, model)) if prices is not None else None
    lines = ["dry run: no model called, nothing written", "plan (benchmark x setup: questions):"]
    lines += [f"  {b} x {s}: {n:,}" for b, s, n in found.plan]
    total = sum(n for _, _, n in found.plan)
    lines.append(f"  {total:,} tasks")
    lines += [f"  note: {note}" for note in found.notes]
    if found.system_calls:
        lines.append(f"your --system: asked {found.system_calls:,} times")
    if not found.roles:
        lines.append("model calls: none (retrieval only)")
    lines += role_lines(found.roles, price_of)
    batch = batch_price_line(found.roles, price_of) if price_of is not None else None
    return lines if batch is None else [*lines, batch]


#: Roles whose calls are a ceiling: claim checks (fewer when fewer passages match), the
#: bias check (only answers whose grade parsed are sampled).
AT_MOST = ("claims", "bias check")


def role_lines(
    roles: Sequence[RoleCalls], price_of: Callable[[str], tuple[float, float] | None] | None
) -> list[str]:
    """A dry run's line per role and model, and the most they cost at `price_of`."""
    lines = []
    for row in roles:
        bound = " at most" if row.role in AT_MOST else ""
        lines.append(
            f"{row.role} {row.model}: {row.calls:,} calls{bound}"
            f", ~{row.input_tokens:,} input tokens, "
            f"at most {row.max_output_tokens:,} output tokens (cl100k_base)"
        )
    if price_of is not None and roles:
        cost, unpriced = priced(roles, price_of)
        lines.append(
            f"cost at most: ${cost:.4f}"
            + (f" (no price for {', '.join(unpriced)}: not counted)" if unpriced else "")
        )
    return lines


def batch_price_line(
    roles: Sequence[RoleCalls], price_of: Callable[[str], tuple[float, float] | None]
) -> str | None:
    """A dry run's line of what its calls cost at most through --batch (the models whose
    provider has a batch API); None when none has."""
    from lasagna_judge import BATCH_PRICE, has_batch_api

    batchable = [r for r in roles if has_batch_api(r.model)]
    if not batchable:
        return None
    most, _ = priced(batchable, price_of)
    return (
        f"with --batch: at most ${most * BATCH_PRICE:,.4f} for the calls of "
        f"{', '.join(sorted({r.model for r in batchable}))} (the batch price: "
        f"{BATCH_PRICE:.0%} of the per-token price)"
    )
