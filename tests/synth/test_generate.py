"""The run against the fake OpenAI-compatible server: rows, drops by reason, faults, resume
from the cache, byte-identical reruns."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from lasagna_judge import make_llm
from lasagna_judge.testing import FakeLLMServer, Fault
from lasagna_synth import (
    DROP_REASONS,
    PROMPTS,
    SynthError,
    Synthesis,
    generate,
    plan,
    synthesize,
    write_jsonl,
)


def corpus(tmp_path: Path, make: type, extra: dict[str, str] | None = None) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    texts = {
        "harbour.md": "The harbour opened in 1781 " + make.words(60, stem="harb"),
        "lighthouse.md": "The lighthouse was lit in 1862 " + make.words(60, stem="ligh"),
        "ferry.txt": "The ferry crossing takes forty minutes " + make.words(60, stem="ferr"),
    }
    texts.update(extra or {})
    for name, text in texts.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


class FakeModel:
    """Answers like a well-behaved model, except where the passage carries a marker:
    FAULT500 (the write call fails), GARBAGE (the write call returns non-schema output),
    VERDICT_NO / VERDICT_UNCLEAR / VERDICT_YES (the check call's verdict), CHECKGARBAGE
    (the check call returns non-schema output), PLACEHOLDER (the write call echoes the
    template: "What is the answer to the question", "a")."""

    def __init__(self) -> None:
        self.broken = True

    def __call__(self, request: dict[str, Any]) -> str | Fault:
        user = request["messages"][-1]["content"]
        if "Write one" in user:
            if self.broken and "FAULT500" in user:
                return Fault(status=500)
            if "GARBAGE" in user:
                return "this is not JSON"
            if "PLACEHOLDER" in user:
                return json.dumps({"question": "What is the answer to the question", "answer": "a"})
            first = re.search(r"from (\S+?):\n<passage>\n(\S+ \S+ \S+)", user)
            assert first is not None
            doc, opening = first.groups()
            # each item its own question: the second passage and the variation number too
            second = re.search(r"Passage 2, from (\S+?):", user)
            use = re.search(r"this is question (\d+) from it", user)
            question = f"What does {doc} say about {opening}"
            question += f" and {second.group(1)}" if second else ""
            question += f" (question {use.group(1)})?" if use else "?"
            for marker in ("VERDICT_NO", "VERDICT_UNCLEAR", "VERDICT_YES", "CHECKGARBAGE"):
                if marker in user:
                    question += f" {marker}"
            if "Write one question on the subject" in user:
                return json.dumps({"question": question[:-1] + ", beyond what it states?"})
            return json.dumps({"question": question, "answer": opening})
        if "CHECKGARBAGE" in user:
            return "[]"
        verdict = "yes" if "Reference answer:" in user else "no"
        if "VERDICT_NO" in user:
            verdict = "no"
        elif "VERDICT_UNCLEAR" in user:
            verdict = "unclear"
        elif "VERDICT_YES" in user:
            verdict = "yes"
        field = "supported" if "Reference answer:" in user else "answered"
        return json.dumps({"reason": "checked", field: verdict})


def run(
    plan_: Any,
    server: FakeLLMServer,
    cache: Path | bool = False,
    timeout: float = 60.0,
    **kw: Any,
) -> Synthesis:
    async def go() -> Synthesis:
        llm = make_llm(
            "openai/fake-model",
            base_url=server.base_url,
            api_key="test",
            cache=cache,
            max_retries=0,
            concurrency=4,
            timeout=timeout,
        )
        async with llm:
            return await generate(plan_, llm, concurrency=4, **kw)

    return asyncio.run(go())


def test_rows_follow_the_issue_format(tmp_path: Path, make: type, no_network: None) -> None:
    folder = corpus(tmp_path, make)
    p = plan(folder, n=6, mix="factoid=0.5,multihop=1/3,unanswerable=1/6", seed=42)
    with FakeLLMServer(reply=FakeModel()) as server:
        result = run(p, server)
        assert server.calls == 12  # two calls per question
    assert result.drops == dict.fromkeys(DROP_REASONS, 0)
    assert result.model == "openai/fake-model"
    assert [r["id"] for r in result.rows] == [f"synth-{i:04d}" for i in range(1, 7)]
    assert result.rows_per_type == {"factoid": 3, "multihop": 2, "unanswerable": 1}
    by_id = {item.id: item for item in p.items}
    for row in result.rows:
        item = by_id[row["id"]]
        spec = PROMPTS[item.question_type]
        expected_meta = {
            "question_type": item.question_type,
            "source_doc_ids": [q.doc_id for q in item.passages],
            "passage_ids": [q.id for q in item.passages],
            "prompt_id": f"{item.question_type}-v1",
            "prompt_sha256": spec.sha256,
            "model": "openai/fake-model",
            "seed": 42,
            "synthetic": True,
            "unanswerable": item.question_type == "unanswerable",
        }
        assert row["metadata"] == expected_meta
        assert list(row["metadata"]) == list(expected_meta)
        assert row["contexts"] == [q.text for q in item.passages]
        assert row["question"].startswith(f"What does {item.passages[0].doc_id} say")
        if item.question_type == "unanswerable":
            assert list(row) == ["id", "question", "contexts", "evidence", "metadata"]
        else:
            assert list(row) == ["id", "question", "answer", "contexts", "evidence", "metadata"]
            assert row["answer"] == " ".join(item.passages[0].text.split()[:3])
        assert len(row["contexts"]) == (2 if item.question_type == "multihop" else 1)
        assert re.fullmatch(r"[0-9a-f]{64}", row["metadata"]["prompt_sha256"])


def test_unanswerable_check_sees_the_source_and_its_three_nearest_to_the_question(
    tmp_path: Path, make: type
) -> None:
    folder = corpus(tmp_path, make)
    p = plan(folder, n=1, mix="unanswerable=1", seed=1)
    (item,) = p.items
    with FakeLLMServer(reply=FakeModel()) as server:
        result = run(p, server)
        write, check = server.requests
    question = result.rows[0]["question"]
    shown = re.findall(r"Passage \d, from (\S+):", check["messages"][-1]["content"])
    neighbours = [q.doc_id for q in p.neighbours(item.passages[0], question)]
    assert shown == [item.passages[0].doc_id, *neighbours]
    assert len(neighbours) == min(3, len(p.passages) - 1)
    assert "Question: " + question in check["messages"][-1]["content"]
    assert "tools" in write and "tools" in check  # schema-enforced calls


def test_drops_are_counted_by_reason_and_one_failure_never_aborts(
    tmp_path: Path, make: type, no_network: None
) -> None:
    extra = {
        f"{name.lower()}.md": f"{name} marker text " + make.words(40, stem=name.lower()[:4])
        for name in (
            "FAULT500",
            "GARBAGE",
            "VERDICT_NO",
            "VERDICT_UNCLEAR",
            "CHECKGARBAGE",
            "PLACEHOLDER",
        )
    }
    folder = corpus(tmp_path, make, extra)
    p = plan(folder, n=9, mix="factoid=1", seed=0)  # every one of the 9 passages once
    with FakeLLMServer(reply=FakeModel()) as server:
        progress: list[tuple[int, int, str | None]] = []
        result = run(p, server, on_progress=lambda *args: progress.append(args))
    assert result.drops == {
        "unparseable": 2,  # GARBAGE (write), CHECKGARBAGE (check)
        "placeholder": 1,  # never sent to the check
        "too-short": 0,
        "unsupported": 1,
        "answered": 0,
        "unclear": 1,
        "duplicate": 0,
        "near-duplicate": 0,
        "error": 1,
    }
    assert len(result.rows) == 3
    assert {r["metadata"]["source_doc_ids"][0] for r in result.rows} == {
        "harbour.md",
        "lighthouse.md",
        "ferry.txt",
    }
    assert [(done, total) for done, total, _ in progress] == [(i, 9) for i in range(1, 10)]
    assert sorted(str(reason) for _, _, reason in progress) == sorted(
        ["None"] * 3 + ["unparseable"] * 2 + ["placeholder", "unsupported", "unclear", "error"]
    )
    assert len(result.errors) == 1 and "500" in result.errors[0]


def test_unanswerable_question_that_is_answered_is_dropped(tmp_path: Path, make: type) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("VERDICT_YES " + make.words(40), encoding="utf-8")
    p = plan(folder, n=1, mix="unanswerable=1", seed=0)
    with FakeLLMServer(reply=FakeModel()) as server:
        result = run(p, server)
    assert result.rows == [] and result.drops["answered"] == 1


def test_rate_limit_and_timeout_are_errors_not_crashes(tmp_path: Path, make: type) -> None:
    folder = corpus(tmp_path, make)
    p = plan(folder, n=3, mix="factoid=1", seed=0)
    replies: list[Any] = [Fault(delay=2.0), Fault(status=429, retry_after=0)]

    def reply(request: dict[str, Any]) -> str | Fault:
        return replies.pop(0) if replies else FakeModel()(request)

    with FakeLLMServer(reply=reply) as server:
        result = run(p, server, timeout=0.5)
    assert result.drops["error"] == 2 and len(result.rows) == 1


def test_interrupted_or_failed_runs_resume_from_the_cache_byte_identical(
    tmp_path: Path, make: type, no_network: None
) -> None:
    extra = {"flaky.md": "FAULT500 flaky text " + make.words(40, stem="flak")}
    folder = corpus(tmp_path, make, extra)
    cache = tmp_path / "cache.sqlite"
    p = plan(folder, n=12, seed=5)
    model = FakeModel()
    with FakeLLMServer(reply=model) as server:
        first = run(p, server, cache=cache)
        calls_first = server.calls
        assert first.drops["error"] >= 1
        errored = first.drops["error"]

        model.broken = False  # the server recovers: only the failed items are called again
        second = run(plan(folder, n=12, seed=5), server, cache=cache)
        assert server.calls - calls_first == 2 * errored
        assert second.drops["error"] == 0
        assert len(second.rows) == len(first.rows) + errored

        calls_second = server.calls
        third = run(plan(folder, n=12, seed=5), server, cache=cache)
        assert server.calls == calls_second  # everything from the cache
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write_jsonl(second.rows, a)
    write_jsonl(third.rows, b)
    assert a.read_bytes() == b.read_bytes()


def test_calls_run_concurrently_within_the_bound(tmp_path: Path, make: type) -> None:
    folder = corpus(tmp_path, make)
    p = plan(folder, n=12, mix="factoid=1", seed=0)
    with FakeLLMServer(reply=FakeModel(), latency=0.05) as server:
        result = run(p, server)
        assert 1 < server.max_in_flight <= 4
    assert len(result.rows) == 12


def test_synthesize_returns_rows(tmp_path: Path, make: type) -> None:
    folder = corpus(tmp_path, make)
    with FakeLLMServer(reply=FakeModel()) as server:
        llm = make_llm("openai/fake", base_url=server.base_url, api_key="k", cache=False)
        rows = synthesize(folder, n=4, mix="factoid=1", seed=3, llm=llm)
    assert [r["id"] for r in rows] == ["synth-0001", "synth-0002", "synth-0003", "synth-0004"]
    assert all(r["metadata"]["model"] == "openai/fake" for r in rows)


def test_synthesize_that_keeps_nothing_says_what_was_dropped(tmp_path: Path, make: type) -> None:
    folder = corpus(tmp_path, make)
    with FakeLLMServer(reply="not a question at all") as server:
        llm = make_llm("openai/fake", base_url=server.base_url, api_key="k", cache=False)
        with pytest.raises(SynthError, match=r"^no question was kept: 4 unparseable; try"):
            synthesize(folder, n=4, mix="factoid=1", seed=3, llm=llm)


def test_synthesize_that_keeps_nothing_gives_every_reason_and_count(
    tmp_path: Path, make: type
) -> None:
    folder = corpus(tmp_path, make)
    checks = iter(["no", "no", "unclear", "no"])

    def reply(request: dict[str, Any]) -> str | Fault:
        text = json.dumps(request)
        if "Reference answer" not in text:
            return json.dumps({"question": "What colour is the door?", "answer": "red"})
        verdict = next(checks, "no")
        return json.dumps({"reason": "Because.", "supported": verdict})

    with FakeLLMServer(reply=reply) as server:
        llm = make_llm("openai/fake", base_url=server.base_url, api_key="k", cache=False)
        with pytest.raises(SynthError, match=r"^no question was kept: 3 unsupported, 1 unclear;"):
            synthesize(folder, n=4, mix="factoid=1", seed=3, llm=llm)


def test_synthesize_that_keeps_nothing_for_call_errors_names_the_first(
    tmp_path: Path, make: type
) -> None:
    folder = corpus(tmp_path, make)
    with FakeLLMServer(reply=Fault(status=400)) as server:
        llm = make_llm("openai/fake", base_url=server.base_url, api_key="k", cache=False)
        with pytest.raises(
            SynthError, match=r"^no question was kept: 2 error \(first error: .*400"
        ):
            synthesize(folder, n=2, mix="factoid=1", seed=3, llm=llm)


@pytest.mark.parametrize("question_type", ["factoid", "multihop", "unanswerable"])
def test_prompt_ids_and_hashes_are_stable(question_type: str) -> None:
    spec = PROMPTS[question_type]  # type: ignore[index]
    assert spec.id == f"{question_type}-v1"
    assert spec.sha256 == PROMPTS[question_type].sha256  # type: ignore[index]
    assert len({s.sha256 for s in PROMPTS.values()}) == 3


def test_unanswerable_checks_wait_for_the_index_built_beside_the_first_calls(
    tmp_path: Path, make: type
) -> None:
    folder = corpus(tmp_path, make)
    p = plan(folder, n=6, mix="factoid=0.5,unanswerable=0.5", seed=5)
    assert p._index._index is None  # not built by planning
    with FakeLLMServer(reply=FakeModel()) as server:
        llm = make_llm("openai/fake", base_url=server.base_url, api_key="k", cache=False)

        async def go() -> Synthesis:
            async with llm:
                return await generate(p, llm, concurrency=4)

        result = asyncio.run(go())
        checks = [r for r in server.requests if "Question:" in json.dumps(r)]
    assert p._index._index is not None
    answered = [r for r in checks if "Do the passages above answer" in json.dumps(r)]
    assert len(answered) == 3
    for request in answered:  # each shows its source and its nearest passages (up to 3)
        assert json.dumps(request).count("<passage>") == min(4, len(p.passages))
    assert sum(result.drops.values()) + len(result.rows) == 6


def test_the_first_calls_leave_before_any_multihop_partner_is_chosen(
    tmp_path: Path, make: type
) -> None:
    # Factoid items go first; multihop partners are chosen once the index built beside
    # those calls exists. The rows are those of a plan whose partners were chosen up front.
    folder = corpus(tmp_path, make)
    lazy = plan(folder, n=8, mix="factoid=0.5,multihop=0.5", seed=3)
    partners = next(i._partners for i in lazy.items if i._partners is not None)
    model = FakeModel()
    chosen_at_call: list[int] = []

    def reply(request: dict[str, Any]) -> str | Fault:
        chosen_at_call.append(len(partners._chosen))
        return model(request)

    with FakeLLMServer(reply=reply) as server:
        result = run(lazy, server)
        writes = [
            r["messages"][-1]["content"]
            for r in server.requests
            if "Write one" in r["messages"][-1]["content"]
        ]
    assert chosen_at_call[:4] == [0, 0, 0, 0]
    assert [w.count("<passage>") for w in writes[:4]] == [1, 1, 1, 1]  # the factoid ones
    assert sorted(w.count("<passage>") for w in writes[4:]) == [2, 2, 2, 2]

    eager = plan(folder, n=8, mix="factoid=0.5,multihop=0.5", seed=3)
    assert [i.passages for i in eager.items] == [i.passages for i in lazy.items]
    with FakeLLMServer(reply=FakeModel()) as server:
        assert run(eager, server).rows == result.rows
    assert [row["id"] for row in result.rows] == [i.id for i in lazy.items]


def test_duplicates_keep_the_first_in_plan_order_whatever_order_the_calls_finish_in(
    tmp_path: Path, make: type
) -> None:
    """Every item writes one of two wordings of one question, or one other question; the
    calls finish in another order each run. The first item in plan order is the copy kept,
    and the progress counts the copies as they come, the same number the result does."""
    import functools
    import random

    folder = corpus(tmp_path, make)
    p = plan(folder, n=9, mix="factoid=1", seed=4)
    wordings = ["What is the harbour's opening year?", "what is the harbours opening year"]
    near = "What was the harbour's opening year"

    def reply(request: dict[str, Any]) -> str:
        user = request["messages"][-1]["content"]
        if "Write one" not in user:
            return json.dumps({"reason": "checked", "supported": "yes"})
        pick = sum(map(ord, user)) % 3
        question = near if pick == 2 else wordings[pick]
        return json.dumps({"question": question, "answer": "1781"})

    kept = []
    for seed in (1, 2, 3):
        latency = functools.partial(random.Random(seed).uniform, 0, 0.02)
        progress: list[str | None] = []
        with FakeLLMServer(reply=reply, latency=latency) as server:
            result = run(p, server, on_progress=functools.partial(_reason_into, progress))
        assert len(result.rows) == 1
        assert result.drops["duplicate"] + result.drops["near-duplicate"] == 8
        assert progress.count("duplicate") == result.drops["duplicate"]
        assert progress.count("near-duplicate") == result.drops["near-duplicate"]
        kept.append(result.rows)
    assert kept[0] == kept[1] == kept[2]
    assert kept[0][0]["id"] == p.items[0].id


def _reason_into(found: list[str | None], done: int, total: int, why: str | None) -> None:
    found.append(why)
