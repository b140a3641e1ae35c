"""`benchmark synthesize` keeps no placeholder and no duplicate: a set from httpx's
documentation (../shared/data), written by the fake server scripted to answer as a small
model does (echoes of the schema's description, template fillers, one-word questions, the
same question again and again), holds none of them, and its summary counts each by reason."""

from __future__ import annotations

import hashlib
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from tests._fake_env import run_benchmark

from lasagna_judge.testing import FakeLLMServer

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
HTTPX_DOCS = SHARED_DATA / "corpora" / "httpx-docs"
needs_httpx_docs = pytest.mark.skipif(
    not HTTPX_DOCS.is_dir(), reason="needs ../shared/data/corpora/httpx-docs"
)

# What the scripted model writes, by a digest of the prompt: the same prompt always gets
# the same reply, so a rerun and the cache agree.
PLACEHOLDERS = [
    # the schema's description, as local/smollm2 wrote it six times in one run
    ("A question and its short reference answer.", "The short answer, as stated in the passages."),
    ("What is the answer to the question", "a"),
    ("{question}", "{answer}"),
]
TOO_SHORT = ("HTTP/2?", "yes")
SAME = ["What is HTTPX?", "what is httpx"]  # one question, as normalisation sees it
NEAR = ["What is the default timeout in HTTPX?", "What was the default timeout of HTTPX?"]


def bucket(user: str) -> int:
    return hashlib.sha256(user.encode()).digest()[0] % 10


class ScriptedModel:
    """Writes junk for 6 prompts in 10 (by their digest) and a question of the prompt's own
    otherwise; checks say every question is supported (or unanswered)."""

    def __init__(self) -> None:
        self.written: dict[str, str] = {}  # prompt -> the question written

    def __call__(self, request: dict[str, Any]) -> str:
        user = request["messages"][-1]["content"]
        if "Write one" not in user:
            if "Reference answer:" in user:
                return json.dumps({"reason": "stated", "supported": "yes"})
            return json.dumps({"reason": "not stated", "answered": "no"})
        which = bucket(user)
        twin = hashlib.sha256(user.encode()).digest()[1] % 2
        if which < len(PLACEHOLDERS):
            question, answer = PLACEHOLDERS[which]
        elif which == 3:
            question, answer = TOO_SHORT
        elif which == 4:
            question, answer = SAME[twin], "a Python HTTP client"
        elif which == 5:
            question, answer = NEAR[twin], "five seconds"
        else:
            docs = " and ".join(re.findall(r"from (\S+?):", user))
            topic = hashlib.sha256(user.encode()).hexdigest()[:8]  # one of the prompt's own
            question, answer = f"What does {docs} say about topic {topic}?", "as stated"
        self.written[user] = question
        if "on the subject" in user:
            return json.dumps({"question": question})
        return json.dumps({"question": question, "answer": answer})


def expected_drops(written: list[str]) -> dict[str, int]:
    """What the summary must count, from the questions the model wrote."""
    junk = {q for q, _ in PLACEHOLDERS}
    near = [q for q in written if q in NEAR]
    return {
        "placeholder": sum(q in junk for q in written),
        "too-short": written.count(TOO_SHORT[0]),
        # every copy of the one question but the first
        "duplicate": max(0, sum(q in SAME for q in written) - 1)
        + sum(max(0, near.count(q) - 1) for q in NEAR),
        # the second wording of the near pair, when both were written
        "near-duplicate": int(all(q in near for q in NEAR)),
    }


@needs_httpx_docs
def test_a_set_from_httpx_docs_keeps_no_placeholder_and_no_duplicate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "qa.jsonl"
    args = ["synthesize", str(HTTPX_DOCS), "--n", "60", "--model", "openai/small"]
    model = ScriptedModel()
    draw = random.Random(1)
    with FakeLLMServer(reply=model, latency=lambda: draw.uniform(0, 0.01)) as server:
        result = run_benchmark(tmp_path, server, *args, "--out", str(out), "--concurrency", "8")
    assert result.exit_code == 0, result.output
    written = list(model.written.values())
    assert len(written) == 60
    drops = expected_drops(written)
    # the script must exercise every rule, or this test proves nothing
    assert all(n > 0 for n in drops.values()), drops

    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    kept = [row["question"] for row in rows]
    assert not {q for q, _ in PLACEHOLDERS} & set(kept)
    assert TOO_SHORT[0] not in kept
    assert sum(q in SAME for q in kept) == 1
    assert sum(q in NEAR for q in kept) == 1
    assert len({q.lower() for q in kept}) == len(kept)  # the rest were distinct already
    assert len(rows) == 60 - sum(drops.values())

    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"Wrote {len(rows)} rows to {out}: ")
    assert lines[1] == (
        f"Dropped {sum(drops.values())}: unparseable 0, placeholder {drops['placeholder']}, "
        f"too-short {drops['too-short']}, unsupported 0, answered 0, unclear 0, "
        f"duplicate {drops['duplicate']}, near-duplicate {drops['near-duplicate']}, error 0"
    )

    # The kept copy is the first in plan order, whatever order the calls finished in: a
    # rerun that calls everything again, fewer at a time and at other speeds, writes the
    # same bytes.
    again = tmp_path / "again.jsonl"
    draw = random.Random(2)
    with FakeLLMServer(reply=ScriptedModel(), latency=lambda: draw.uniform(0, 0.01)) as server:
        rerun = run_benchmark(
            tmp_path, server, *args, "--out", str(again), "--concurrency", "3", "--no-cache"
        )
    assert rerun.exit_code == 0, rerun.output
    assert again.read_bytes() == out.read_bytes()
    # ... and that copy is the first planned item that wrote it
    from lasagna_synth import plan
    from lasagna_synth._prompts import write_messages

    by_item = {
        item.id: model.written[
            write_messages(item.question_type, item.passages, item.use)[-1]["content"]
        ]
        for item in plan(HTTPX_DOCS, n=60, seed=42).items
    }
    for copies in (SAME, NEAR):
        first = next(item for item, question in by_item.items() if question in copies)
        assert [row["id"] for row in rows if row["question"] in copies] == [first]

    # and validate-data finds nothing to warn of in it
    valid = run_benchmark(tmp_path, server, "validate-data", str(out))
    assert valid.exit_code == 0, valid.output
    assert "Warning" not in valid.stdout
