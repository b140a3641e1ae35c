"""LoCoMo: very long conversations between two people, and questions about them.

Raw file: locomo10.json, a list of samples, each with `sample_id`, `conversation`
(`speaker_a`, `speaker_b`, `session_<n>` lists of turns with `dia_id` like "D1:3",
`session_<n>_date_time`) and `qa` items (`question`, `answer`, `evidence` dia ids,
`category` 1-5).

Rules:
- one Markdown document per conversation: a heading per session with its date, one line per
  turn ending in its dialogue id (`**Caroline**: Hey Mel! [D1:1]`); a shared image's caption
  is kept in the turn, before the id;
- category 5 (adversarial: it has `adversarial_answer` and no `answer`) is skipped;
- an empty answer becomes "Not mentioned"; answers are converted to strings (some are ints)
  and kept as written, spaces and all, as OpenViking's adapter keeps them;
- evidence = the dialogue ids. A handful of raw items hold several ids in one string
  ("D8:6; D9:17") or a stray colon ("D:11:26"); they are split and repaired, and an item
  with no readable id is dropped; the notes count both. OpenViking's adapter keeps the raw
  items (its Recall tests them as written): they are in `metadata["openviking_evidence"]`
  where they differ;
- a question's id is its `id` when it has one (written subsets add it), else
  `<sample_id>/q<position in the raw qa list>`, so ids survive sampling.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from lasagna_cli.engine.benchmarks._base import BenchmarkAdapter
from lasagna_cli.engine.benchmarks._files import dump_json, expect, read_json, write_text_atomic
from lasagna_cli.engine.benchmarks._model import (
    MISSING_ANSWER,
    BenchmarkDocument,
    BenchmarkQuestion,
    BenchmarkSpec,
    LoadedBenchmark,
    ReadOptions,
    Subset,
)

FILE_NAME = "locomo10.json"

SPEC = BenchmarkSpec(
    name="locomo",
    title="LoCoMo",
    description=(
        "Very long-term conversational memory: 10 multi-session conversations (about 300 "
        "turns each) and 1,986 questions whose evidence is the dialogue turns that answer them."
    ),
    licence="CC BY-NC 4.0 (non-commercial)",
    citation=(
        "Maharana, Lee, Tulyakov, Bansal, Barbieri, Fang. Evaluating Very Long-Term "
        "Conversational Memory of LLM Agents. ACL 2024. arXiv:2402.17753"
    ),
    homepage="https://github.com/snap-research/LoCoMo",
    splits=("test",),
    default_split="test",
    categories={
        "1": "multi-hop: the answer joins facts from several turns",
        "2": "temporal: when something happened",
        "3": "open-domain: inference beyond what is said",
        "4": "single-hop: one turn answers it",
        "5": "adversarial: unanswerable by design (skipped)",
    },
    instructions={
        "1": (
            "Answer with the facts the conversation states, in its own words where possible. "
            "When several items answer the question, list them separated by commas."
        ),
        "2": (
            "Answer when it happened. Read the DATE line of each session and work out relative "
            'times ("last week", "two years ago") from it; give the date as the context states '
            "it."
        ),
        "3": (
            "Infer the answer from the facts in the conversation only. Give the conclusion "
            'alone (for example "Likely yes"), with no explanation, and invent nothing.'
        ),
        "4": (
            "Answer with what the speakers mean, not only the words they use, quoting the "
            "conversation where possible."
        ),
    },
    default_instruction="Answer the question from the conversation above, inventing nothing.",
    rubric="binary",
    files_help=(
        f"Get {FILE_NAME} from https://github.com/snap-research/LoCoMo (data/{FILE_NAME}) "
        "and pass its folder (or the file) as --data-dir."
    ),
)

_SESSION = re.compile(r"session_(\d+)")
_DIA_ID = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")


def _samples(path: Path) -> list[dict[str, Any]]:
    data = read_json(path, benchmark=SPEC.name)
    samples = [data] if isinstance(data, dict) else data
    expect(
        isinstance(samples, list),
        f"locomo: {path} should hold a list of conversations, found {type(data).__name__}; "
        f"is it {FILE_NAME}?",
    )
    for i, sample in enumerate(samples):
        expect(
            isinstance(sample, dict)
            and isinstance(sample.get("sample_id"), str)
            and isinstance(sample.get("conversation"), dict)
            and isinstance(sample.get("qa"), list),
            f"locomo: {path} item {i} should be an object with sample_id, conversation and "
            f"qa; found {sorted(sample) if isinstance(sample, dict) else type(sample).__name__}",
        )
    return samples


def _sessions(conversation: dict[str, Any]) -> list[int]:
    numbers = []
    for key, value in conversation.items():
        match = _SESSION.fullmatch(key)
        if match and isinstance(value, list):
            numbers.append(int(match.group(1)))
    return sorted(numbers)


def conversation_markdown(sample_id: str, conversation: dict[str, Any]) -> str:
    speakers = [conversation.get(k) for k in ("speaker_a", "speaker_b")]
    names = " and ".join(s for s in speakers if isinstance(s, str) and s)
    lines = [f"# Conversation {sample_id}" + (f" between {names}" if names else "")]
    for number in _sessions(conversation):
        lines.append("")
        lines.append(f"## Session {number}")
        date = conversation.get(f"session_{number}_date_time")
        if date:
            lines.append(f"DATE: {date}")
        for turn in conversation[f"session_{number}"]:
            if not isinstance(turn, dict):
                continue
            speaker = turn.get("speaker") or "Unknown"
            text = str(turn.get("text") or "").strip()
            caption = turn.get("blip_caption")
            if caption:
                text = f"{text} (shares an image: {caption})".strip()
            dia_id = turn.get("dia_id")
            suffix = f" [{dia_id}]" if dia_id else ""
            lines.append(f"**{speaker}**: {text}{suffix}")
    return "\n".join(lines) + "\n"


def _turn_ids(conversation: dict[str, Any]) -> set[str]:
    ids = set()
    for number in _sessions(conversation):
        for turn in conversation[f"session_{number}"]:
            if isinstance(turn, dict) and isinstance(turn.get("dia_id"), str):
                ids.add(turn["dia_id"])
    return ids


def _question_id(sample_id: str, position: int, qa: dict[str, Any]) -> str:
    raw = qa.get("id")
    return str(raw) if raw not in (None, "") else f"{sample_id}/q{position}"


def _references(answer: Any) -> tuple[str, ...]:
    """The answers as written (OpenViking's adapter keeps them so); none -> Not mentioned."""
    if answer is None or answer == "":
        return (MISSING_ANSWER,)
    values = answer if isinstance(answer, list) else [answer]
    return tuple(str(v) for v in values) or (MISSING_ANSWER,)


class _EvidenceStats:
    def __init__(self) -> None:
        self.repaired = 0
        self.dropped = 0
        self.unknown = 0


def _evidence(raw: Any, known: set[str], stats: _EvidenceStats) -> tuple[str, ...]:
    # A list of ids, as the file has them; a bare string is read as one item, not dropped.
    items = raw if isinstance(raw, list) else [raw] if isinstance(raw, str) else []
    ids: list[str] = []
    for item in items:
        found = [f"D{a}:{b}" for a, b in _DIA_ID.findall(str(item))]
        if not found:
            stats.dropped += 1
            continue
        if found != [item]:
            stats.repaired += 1
        for dia_id in found:
            if dia_id not in ids:
                ids.append(dia_id)
                if dia_id not in known:
                    stats.unknown += 1
    return tuple(ids)


class LocomoAdapter(BenchmarkAdapter):
    spec = SPEC

    def load(self, source: Path, split: str, options: ReadOptions) -> LoadedBenchmark:
        path = self.find(source, split, [FILE_NAME])
        documents: list[BenchmarkDocument] = []
        questions: list[BenchmarkQuestion] = []
        skipped = 0
        stats = _EvidenceStats()
        for sample in _samples(path):
            sample_id = sample["sample_id"]
            conversation = sample["conversation"]
            documents.append(
                BenchmarkDocument(
                    id=sample_id,
                    title=f"Conversation {sample_id}",
                    text=conversation_markdown(sample_id, conversation),
                )
            )
            known = _turn_ids(conversation)
            for position, qa in enumerate(sample["qa"]):
                expect(
                    isinstance(qa, dict) and isinstance(qa.get("question"), str),
                    f"locomo: {sample_id} qa item {position} has no question text",
                )
                category = str(qa.get("category"))
                if category == "5":
                    skipped += 1
                    continue
                evidence = _evidence(qa.get("evidence"), known, stats)
                raw = qa.get("evidence")
                # OpenViking's adapter keeps the raw items, its Recall tests them as written
                theirs = tuple(str(e) for e in raw) if isinstance(raw, list) else evidence
                questions.append(
                    BenchmarkQuestion(
                        id=_question_id(sample_id, position, qa),
                        question=qa["question"],
                        references=_references(qa.get("answer")),
                        evidence=evidence,
                        category=category,
                        doc_ids=(sample_id,),
                        metadata={"openviking_evidence": theirs} if theirs != evidence else {},
                    )
                )
        notes = []
        if stats.repaired or stats.dropped:
            notes.append(
                f"evidence: {stats.repaired} raw items split or repaired into dialogue ids, "
                f"{stats.dropped} with no readable id dropped"
            )
        if stats.unknown:
            notes.append(f"evidence: {stats.unknown} ids name no turn of their conversation")
        return self.loaded(
            split,
            documents,
            questions,
            [path],
            skipped={"category 5 (adversarial)": skipped},
            notes=notes,
        )

    def write_subset(self, source: Path, split: str, out_dir: Path, keep: Subset) -> list[Path]:
        path = self.find(source, split, [FILE_NAME])
        kept = []
        for sample in _samples(path):
            if sample["sample_id"] not in keep.doc_ids:
                continue
            qas = []
            for position, qa in enumerate(sample["qa"]):
                qa_id = _question_id(sample["sample_id"], position, qa)
                if qa_id in keep.question_ids:
                    qas.append({"id": qa_id, **qa})
            kept.append({**sample, "qa": qas})
        target = out_dir / FILE_NAME
        write_text_atomic(target, dump_json(kept))
        return [target]
