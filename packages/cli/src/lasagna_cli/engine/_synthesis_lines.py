"""What `benchmark synthesize` checks before any work (`check_synthesis`) and reports: the
dry run's plan, and a finished run's summary (what was written and dropped, the calls and
tokens spent) or why nothing was written (`check_synthesized`). The lines quote file names
and reasons as found: the command escapes them for the terminal."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from lasagna_cli.engine._counts import counted
from lasagna_cli.engine._errors import EngineError, EngineUsageError, did_you_mean

if TYPE_CHECKING:
    from lasagna_judge import LLM
    from lasagna_synth import Chunker, Mix, Plan, Synthesis

_LISTED = 20  # documents and skipped files listed by name in the dry run
_PREVIEW = 10  # planned questions shown in the dry run
REMINDER = "Synthetic questions are for development: report results on human-written questions."


class SynthesisOptions(NamedTuple):
    """`benchmark synthesize`'s options, checked (`check_synthesis`)."""

    questions: int
    """--n."""
    seed: int
    concurrency: int | None
    """--concurrency, None when not given."""
    chunk_words: int
    mix: Mix
    chunker: Chunker


def _whole_number(text: str, flag: str, minimum: int | None = None) -> int:
    try:
        value = int(text.strip().replace("_", ""))
    except ValueError:
        raise EngineUsageError(f"{flag}: expected a whole number, got {text!r}") from None
    if minimum is not None and value < minimum:
        raise EngineUsageError(f"{flag}: expected a whole number >= {minimum}, got {value}")
    return value


def check_synthesis(
    corpus: str,
    out: Path,
    *,
    n: str,
    seed: str,
    concurrency: str | None,
    out_format: str,
    formats: Sequence[str],
    mix: str,
    chunker: str,
    chunk_words: str,
    dry_run: bool,
    overwrite: bool,
) -> SynthesisOptions:
    """The options parsed, checked in this order: the whole numbers (--n, --seed,
    --concurrency, --chunk-words), the format (one of `formats`), the mix, the chunking, the
    corpus (there), `out` (not a folder; but for a dry run, not there unless `overwrite`):
    an EngineUsageError (or lasagna-synth's SynthUsageError) says the first wrong one."""
    from lasagna_synth import check_chunking, parse_mix

    count, plan_seed = _whole_number(n, "--n", 1), _whole_number(seed, "--seed")
    bound = None if concurrency is None else _whole_number(concurrency, "--concurrency", 1)
    words = _whole_number(chunk_words, "--chunk-words", 1)
    if out_format not in formats:
        raise EngineUsageError(
            f"--format: expected one of {', '.join(formats)}, found {out_format!r}"
            f"{did_you_mean(out_format, formats)}"
        )
    parsed = parse_mix(mix), check_chunking(chunker, words)
    if not Path(corpus).exists():
        raise EngineUsageError(
            f"corpus not found: {corpus!r}: expected a folder of documents or one file"
        )
    if out.is_dir():
        raise EngineUsageError(f"--out {out} is a folder: give the path of a .jsonl file")
    if not dry_run and out.exists() and not overwrite:
        raise EngineUsageError(
            f"{out} exists: pass --overwrite to replace it, or choose another --out"
        )
    return SynthesisOptions(count, plan_seed, bound, words, *parsed)


def synthesis_plan_lines(
    plan: Plan,
    out: Path,
    overwrite: bool,
    model: str | None,
    prices: Mapping[str, tuple[float, float]] | None,
) -> list[str]:
    """What the dry run prints, its calls and tokens estimated (`lasagna_synth.estimate`) and
    priced for `model` from `prices`: the same folder and seed always give the same lines."""
    from lasagna_synth import QUESTION_TYPES, describe_chunker, estimate

    figures = estimate(plan, model=model, prices=prices)

    per_doc = Counter(p.doc_id for p in plan.passages)
    kinds = Counter(Path(d.id).suffix.lower() or d.kind for d in plan.documents)
    lines = ["Dry run: no LLM is called and nothing is written.", ""]
    lines.append(
        f"Documents:  {len(plan.documents):,} read from {plan.root} ("
        + ", ".join(f"{kind} {n:,}" for kind, n in sorted(kinds.items()))
        + ")"
    )
    width = max((len(d.id) for d in plan.documents[:_LISTED]), default=0)
    for document in plan.documents[:_LISTED]:
        lines.append(f"  {document.id:<{width}}  {counted(per_doc[document.id], 'passage')}")
    if len(plan.documents) > _LISTED:
        lines.append(f"  ... and {len(plan.documents) - _LISTED:,} more")
    if plan.skipped:
        lines.append(f"Skipped:    {len(plan.skipped):,}")
        for skipped in plan.skipped[:_LISTED]:
            lines.append(f"  {skipped.path}: {skipped.reason}")
        if len(plan.skipped) > _LISTED:
            rest = Counter(s.reason for s in plan.skipped[_LISTED:])
            lines.append(
                f"  ... and {len(plan.skipped) - _LISTED:,} more: "
                + "; ".join(f"{reason} ({n:,})" for reason, n in rest.most_common())
            )
    lines.append(
        f"Passages:   {len(plan.passages):,} from {counted(len(per_doc), 'document')} "
        f"({describe_chunker(plan.chunker, plan.chunk_words)})"
    )
    lines.append(
        f"Questions:  {plan.n:,} ("
        + ", ".join(f"{t} {plan.counts[t]:,}" for t in QUESTION_TYPES)
        + f"), seed {plan.seed}"
    )
    for i, item in enumerate(plan.items[:_PREVIEW]):
        label = "Plan:" if i == 0 else ""
        sources = " + ".join(p.id for p in item.passages)
        lines.append(f"{label:<12}{item.id}  {item.question_type:<12}  {sources}")
    if len(plan.items) > _PREVIEW:
        lines.append(f"{'':<12}... and {len(plan.items) - _PREVIEW:,} more")
    lines.append(f"LLM calls:  {figures.calls:,} (2 per question: one writes it, one checks it)")
    lines.append(
        f"Tokens in:  {figures.input_tokens:,}, counted exactly with the {figures.encoding} "
        "tokenizer over the filled prompts and schemas"
    )
    lines.append(
        "            (checks without the question they will quote; unanswerable checks with "
        "the source's nearest passages)"
    )
    lines.append(f"Tokens out: at most {figures.max_output_tokens:,} (each call's max_tokens cap)")
    cost = figures.max_cost_usd
    if cost is not None and figures.price is not None:
        per_input, per_output = figures.price
        lines.append(
            f"Cost:       at most ${cost:,.4f} for {figures.model} at ${per_input:g} in / "
            f"${per_output:g} out per 1M tokens"
        )
        if str(figures.model).partition("/")[0] in ("openai", "anthropic"):
            from lasagna_judge import BATCH_PRICE

            lines.append(
                f"Batch:      at most ${cost * BATCH_PRICE:,.4f} with --batch (the batch price: "
                f"{BATCH_PRICE:.0%} of the per-token price; answers within 24 h)"
            )
    elif figures.model is None:
        lines.append("Cost:       give --model and --prices to price the run")
    else:
        lines.append(f"Cost:       no price for {figures.model}: add it to a --prices file")
    if out.exists() and not overwrite:
        lines.append(f"Note:       {out} exists: the real run needs --overwrite")
    return lines


_WRITTEN_AS = {"lasagna": "", "ragas": " as RAGAS samples", "deepeval": " as DeepEval goldens"}


def synthesis_lines(
    result: Synthesis, out: Path, spent: str, out_format: str = "lasagna"
) -> list[str]:
    """What a finished run prints; `spent` is the line on this run's calls and tokens."""
    per_type = result.rows_per_type
    dropped = sum(result.drops.values())
    lines = [
        f"Wrote {counted(len(result.rows), 'row')} to {out}{_WRITTEN_AS[out_format]}: "
        + ", ".join(f"{t} {n:,}" for t, n in per_type.items())
        + f" (model {result.model})",
        f"Dropped {dropped:,}: " + ", ".join(f"{r} {n:,}" for r, n in result.drops.items()),
    ]
    if result.drops.get("error"):
        lines.append(
            f"{counted(result.drops['error'], 'question')} failed on a call error (first: "
            f"{result.errors[0] if result.errors else 'unknown'}); run the same command again "
            "with --overwrite to retry them: finished calls come from the cache"
        )
    lines.append(spent)
    lines.append(REMINDER)
    from lasagna_judge import scripted_note

    note = scripted_note(result.model)
    if note:
        lines.insert(1, note)
    return lines


def spent_line(llm: LLM, prices: Path | None) -> str:
    """This run's calls, tokens and cost (when priced)."""
    usage, cost = llm.usage, llm.cost_usd
    line = (
        f"Calls:      {counted(llm.calls_made, 'call')} made this run (cache hits are free), "
        f"{usage.input_tokens:,} tokens in, {usage.output_tokens:,} out"
    )
    if cost is not None:
        return line + f", ${cost:,.4f}"
    if prices is not None:
        return line + f"; no price for {llm.model} in {prices}"
    return line


def check_synthesized(result: Synthesis, out: Path) -> None:
    """An EngineError when a finished synthesis writes nothing to `out`: every question
    failed on a call error, or none was kept."""
    if result.rows:
        return
    if result.drops.get("error"):
        raise EngineError(
            f"every question failed on a call error, so {out} was not written (first: "
            f"{result.errors[0] if result.errors else 'unknown'})"
        )
    raise EngineError(
        f"no question was kept ({result.dropped}), so {out} was not written"
        + (" and the existing file is left as it was" if out.exists() else "")
        + "; try another --seed or --mix, or a model that follows the instructions"
    )
