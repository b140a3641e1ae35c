"""The pieces behind `--system` and `--predictions`: return shapes, corpus matching, specs."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lasagna_cli.engine._errors import EngineUsageError
from lasagna_cli.engine.systems._errors import SystemOutputError
from lasagna_cli.engine.systems._match import UNMATCHED_PREFIX, CorpusMatcher, match_ranking
from lasagna_cli.engine.systems._output import Retrieved, SystemOutput, normalize
from lasagna_cli.engine.systems._spec import default_setup_name, redact_url, spec_from_flags
from lasagna_cli.engine.systems._spec_sweep import spec_from_sweep

CORPUS = {
    "lasagna": "Lasagna\n\nLasagna is layered pasta.",
    "ragu": "Ragù simmers for two hours.",
    "pesto": "Pesto comes  from\nLiguria.",
}


def flags(**given: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "system": None,
        "predictions": None,
        "allow_missing": False,
        "timeout": None,
        "retries": None,
        "headers": [],
        "env": os.environ,
    }
    return {**base, **given}


# ------------------------------------------------------------------------------ shapes


def test_a_string_is_an_answer_and_a_list_is_a_ranking() -> None:
    assert normalize("Liguria", "s") == SystemOutput("Liguria", None)
    assert normalize(["a", "b"], "s") == SystemOutput(
        None, (Retrieved(("a",), "a"), Retrieved(("b",), "b"))
    )
    assert normalize({"answer": "", "retrieved": []}, "s") == SystemOutput("", ())
    assert normalize({"answer": 42}, "s").answer == "42"


def test_mapping_items_documents_and_scored_pairs_are_ranked_items() -> None:
    from langchain_core.documents import Document

    out = normalize(
        {
            "answer": "x",
            "context": [
                Document(id="d1", page_content="one", metadata={"doc_id": "m1"}),
                Document(page_content="two", metadata={"passage_id": "p2"}),
                ({"id": 7, "text": "seven"}, 0.9),
                {"text": "only text"},
            ],
        },
        "s",
    )
    assert out.retrieved == (
        Retrieved(("d1", "m1"), "one"),
        Retrieved(("p2",), "two"),
        Retrieved(("7",), "seven"),
        Retrieved((), "only text"),
    )
    assert out.provides() == {"retrieval", "generation"}


def test_langchain_messages_are_answers() -> None:
    from langchain_core.messages import AIMessage

    assert normalize(AIMessage(content="Liguria"), "s").answer == "Liguria"
    assert normalize({"answer": AIMessage(content="x")}, "s").answer == "x"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (42, "returned an int (42); expected a string (the answer)"),
        (None, "returned None"),
        (
            {"anwser": "x"},
            'without "answer" or "retrieved" (keys: "anwser") (did you mean "answer"?)',
        ),
        ({"answer": ["x"]}, "expected a string, got a list"),
        ({"retrieved": "doc1"}, "expected a ranked list (best first)"),
        ({"retrieved": [None]}, "a ranked item must be a document id or passage text"),
        ({"retrieved": [{"score": 1}]}, 'a ranked item needs "id" or "text"; got the keys score'),
        ({"retrieved": [], "context": []}, "returned both 'retrieved' and 'context'"),
    ],
)
def test_shapes_that_cannot_be_scored_say_what_was_expected(value: object, message: str) -> None:
    with pytest.raises(SystemOutputError) as caught:
        normalize(value, "--system m:f")
    assert message in str(caught.value)
    assert str(caught.value).startswith("--system m:f")


# ---------------------------------------------------------------------------- matching


def test_ids_then_texts_then_unknown_keep_their_ranks() -> None:
    matcher = CorpusMatcher(CORPUS, titled=True)
    found = match_ranking(
        [
            Retrieved(("nope",), "Pesto comes from Liguria."),  # text, whitespace ignored
            Retrieved(("ragu",), None),
            Retrieved(("x",), "Lasagna is layered pasta."),  # BEIR body without its title
            Retrieved(("zzz",), "zzz"),  # unknown: stays at rank 4
            Retrieved(("pesto",), None),  # a duplicate: dropped
            Retrieved((), "Lasagna\n\nLasagna is layered pasta."),  # duplicate by full text
        ],
        matcher,
    )
    assert found.ids[:3] == ["pesto", "ragu", "lasagna"]
    assert found.ids[3].startswith(UNMATCHED_PREFIX)
    assert len(found.ids) == 4 and found.duplicates == 2
    assert found.unmatched == [{"rank": 4, "id": found.ids[3], "given": "zzz"}]
    assert found.texts[0] == CORPUS["pesto"] and found.texts[3] == "zzz"


def test_a_titled_text_matches_a_corpus_without_titles() -> None:
    matcher = CorpusMatcher({"d": "Lasagna is layered pasta."})
    assert matcher.doc_id(Retrieved((), "Lasagna\n\nLasagna is layered pasta.")) == "d"
    assert matcher.doc_id(Retrieved((), "Lasagna is layered")) is None


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_a_ranking_of_texts_scores_as_the_same_ranking_of_ids(data: st.DataObject) -> None:
    """Whatever mix of ids, texts and unknown passages a system returns, the metrics are
    those of the corresponding id ranking with unknown items as non-relevant ids."""
    from lasagna_metrics import ndcg_at_k, recall_at_k, reciprocal_rank

    ids = [f"d{i}" for i in range(12)]
    corpus = {d: f"passage number {d} with words" for d in ids}
    ranking = data.draw(st.lists(st.sampled_from([*ids, "u1", "u2"]), max_size=15, unique=True))
    forms = data.draw(st.lists(st.booleans(), min_size=len(ranking), max_size=len(ranking)))
    judgments = {
        d: data.draw(st.integers(0, 3))
        for d in data.draw(st.sets(st.sampled_from(ids), min_size=1))
    }
    if not any(g > 0 for g in judgments.values()):
        judgments[ids[0]] = 1
    items = [
        Retrieved((d,), d) if as_id or d.startswith("u") else Retrieved((), corpus[d])
        for d, as_id in zip(ranking, forms, strict=True)
    ]
    found = match_ranking(items, CorpusMatcher(corpus))
    reference = [d if not d.startswith("u") else f"other-{d}" for d in ranking]
    assert len(found.ids) == len(reference)
    for metric in (
        lambda r: ndcg_at_k(r, judgments, 10),
        lambda r: recall_at_k(r, judgments, 5),
        lambda r: reciprocal_rank(r, judgments),
    ):
        assert metric(found.ids) == pytest.approx(metric(reference), abs=1e-12)


# ------------------------------------------------------------------------------- specs


def test_specs_from_flags() -> None:
    assert spec_from_flags(**flags()) is None
    spec = spec_from_flags(**flags(system="pkg.mod:make"))
    assert spec is not None and spec.kind == "callable" and default_setup_name(spec) == "mod.make"
    spec = spec_from_flags(**flags(system="http://127.0.0.1:8080/rag/answer", retries=0))
    assert spec is not None and spec.kind == "http" and spec.retries == 0
    assert default_setup_name(spec) == "http-127.0.0.1-8080-rag-answer"
    spec = spec_from_flags(**flags(predictions="runs/my-rag.jsonl", allow_missing=True))
    assert spec is not None and spec.allow_missing and default_setup_name(spec) == "my-rag"
    spec = spec_from_flags(**flags(system="examples/sys.py:answer"))
    assert spec is not None and default_setup_name(spec) == "sys.answer"
    assert spec.timeout is None and "timeout_s" not in spec.describe()
    spec = spec_from_flags(**flags(system="pkg.mod:answer", timeout=2.5))
    assert spec is not None and spec.timeout == 2.5 and spec.describe()["timeout_s"] == 2.5


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"system": "a:b", "predictions": "p.jsonl"}, "--system and --predictions name two"),
        ({"allow_missing": True}, "--allow-missing is for --predictions"),
        ({"system": "a:b", "allow_missing": True}, "--allow-missing is for --predictions"),
        ({"system": "a:b", "retries": 3}, "--system-retries is for an http(s):// --system"),
        ({"system": "a:b", "timeout": 0.0}, "--system-timeout: expected a number"),
        ({"retries": 2}, "--system-retries needs --system http(s)://"),
        ({"system": "mymodule"}, "expected package.module:attr"),
        ({"system": "preds.jsonl"}, "a file of outputs is given with --predictions"),
        ({"system": "ftp://host/x"}, "expected an http(s)://host[:port]/path URL"),
        ({"system": "http://h:99999/x"}, "the port of http://h:99999/x is not a number"),
        ({"system": "http://h/x", "timeout": 0.0}, "--system-timeout: expected a number"),
        ({"system": "http://h/x", "headers": ["no colon"]}, "expected 'Name: value'"),
    ],
)
def test_bad_flags_are_one_usage_line(given: dict[str, Any], message: str) -> None:
    with pytest.raises(EngineUsageError) as caught:
        spec_from_flags(**flags(**given))
    assert message in str(caught.value)


def test_header_values_come_from_the_environment_and_are_never_described(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RAG_TOKEN", "s3cret-token")
    spec = spec_from_flags(
        **flags(
            system="https://rag.example/answer?key=abc&x",
            headers=["Authorization: Bearer ${RAG_TOKEN}"],
        )
    )
    assert spec is not None
    assert spec.headers == (("Authorization", "Bearer s3cret-token"),)
    in_url = spec_from_flags(**flags(system="https://user:pw@rag.example/answer?key=abc&x"))
    assert in_url is not None
    for found in (spec, in_url):
        described = repr(found.describe()) + repr(found) + found.label
        assert "s3cret" not in described and "pw" not in described and "abc" not in described
    assert in_url.describe()["url"] == "https://user:***@rag.example/answer?key=***&x"
    # Both at once would be refused by the HTTP client mid-run: one line, before anything.
    with pytest.raises(EngineUsageError, match="keep one of the two"):
        spec_from_flags(
            **flags(system="https://user:pw@rag.example/a", headers=["authorization: x"])
        )
    assert spec.describe()["headers"] == ["Authorization"]
    monkeypatch.delenv("RAG_TOKEN")
    with pytest.raises(EngineUsageError, match="RAG_TOKEN is not set"):
        spec_from_flags(**flags(system="http://h/x", headers=["A: ${RAG_TOKEN}"]))


def test_redact_url_keeps_what_is_not_secret() -> None:
    assert redact_url("http://127.0.0.1:8765/answer") == "http://127.0.0.1:8765/answer"
    assert redact_url("http://bob@h/p") == "http://bob@h/p"


def test_sweep_system_values(tmp_path: Path) -> None:
    spec = spec_from_sweep({"predictions": "p.jsonl", "allow_missing": True}, "s", tmp_path, {})
    assert spec.path == tmp_path / "p.jsonl" and spec.allow_missing
    spec = spec_from_sweep(
        {"url": "http://h/x", "timeout": 2, "retries": 1, "backoff": 0.01}, "s", tmp_path, {}
    )
    assert (spec.timeout, spec.retries, spec.backoff) == (2.0, 1, 0.01)
    assert spec_from_sweep("m:f", "s", tmp_path, {}).kind == "callable"
    assert spec_from_sweep("m:f", "s", tmp_path, {}).timeout is None  # no limit unless asked
    assert spec_from_sweep({"callable": "m:f", "timeout": 3}, "s", tmp_path, {}).timeout == 3.0
    assert spec_from_sweep({"url": "http://h/x"}, "s", tmp_path, {}).describe()["timeout_s"] == 60
    for value, message in [
        ({"predictons": "p.jsonl"}, 'unknown key "predictons" (did you mean "predictions"?)'),
        ({"url": "http://h/x", "callable": "m:f"}, "give exactly one of"),
        ({"callable": "m:f", "retries": 3}, "applies to a `url:` system only"),
        ({"predictions": "p.jsonl", "timeout": 3}, "applies to a `callable:` or `url:` system"),
        ({"url": "http://h/x", "allow_missing": True}, "applies to a `predictions:` file only"),
        ({"url": "http://h/x", "headers": ["A: b"]}, "expected a mapping of header names"),
        (3, "expected package.module:attr"),
    ]:
        with pytest.raises(EngineUsageError) as caught:
            spec_from_sweep(value, "s", tmp_path, {})
        assert message in str(caught.value), value


def test_shuffled_rankings_keep_their_order() -> None:
    rng = random.Random(3)
    ids = list(CORPUS)
    for _ in range(20):
        rng.shuffle(ids)
        found = match_ranking([Retrieved((d,), None) for d in ids], CorpusMatcher(CORPUS))
        assert found.ids == ids


# ---------------------------------------------------------------------- worker threads


def test_worker_threads_are_reused_one_per_call_in_flight() -> None:
    import asyncio
    import threading
    import time

    from lasagna_cli.engine.systems._callable import WorkerThreads

    async def main() -> tuple[list[int], int, bool]:
        workers = WorkerThreads()
        limit = asyncio.Semaphore(8)
        daemons = set()

        def work(i: int) -> int:
            daemons.add(threading.current_thread().daemon)
            time.sleep(0.001)
            if i == 7:
                raise ValueError("seven")
            return i

        async def one(i: int) -> int:
            async with limit:
                try:
                    return int(await workers.run(lambda: work(i)))
                except ValueError:
                    return -1

        found = await asyncio.gather(*(one(i) for i in range(300)))
        workers.close()
        return found, workers.started, daemons == {True}

    found, started, all_daemons = asyncio.run(main())
    assert found == [-1 if i == 7 else i for i in range(300)]
    assert started == 8  # never more threads than calls in flight
    assert all_daemons
