"""`synthesize()` called where an event loop is already running (a Jupyter cell, an async
web handler): it runs on a thread of its own and returns the same rows as outside one."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from lasagna_judge import make_llm
from lasagna_judge.testing import FakeLLMServer
from lasagna_synth import SynthError, generate, plan, synthesize


def docs(folder: Path) -> Path:
    folder.mkdir()
    for topic in ("harbour", "ferry", "lighthouse"):
        body = " ".join(f"{topic}{i}" for i in range(60))
        (folder / f"{topic}.md").write_text(f"The {topic} fact. {body}", encoding="utf-8")
    return folder


def reply(request: dict[str, Any]) -> str:
    user = request["messages"][-1]["content"]
    if "Write one" in user:  # a question of each passage's own: a repeated one is dropped
        topic = user.split("<passage>\n", 1)[1].split()[1]
        return json.dumps({"question": f"What is the {topic} fact?", "answer": "The fact"})
    return json.dumps({"reason": "stated", "supported": "yes"})


def test_synthesize_inside_a_running_loop_gives_the_rows_it_gives_outside(
    tmp_path: Path,
) -> None:
    folder = docs(tmp_path / "docs")
    threads: list[str] = []

    def progress(done: int, total: int, reason: str | None) -> None:
        threads.append(threading.current_thread().name)

    with FakeLLMServer(reply=reply) as server:

        def llm() -> Any:
            return make_llm("openai/fake", base_url=server.base_url, api_key="k", cache=False)

        outside = synthesize(folder, n=3, mix="factoid=1", seed=1, llm=llm())

        async def cell() -> list[dict[str, Any]]:  # what a notebook cell is
            return synthesize(folder, n=3, mix="factoid=1", seed=1, llm=llm(), on_progress=progress)

        inside = asyncio.run(cell())

        async def awaited() -> list[dict[str, Any]]:  # the non-blocking way, as documented
            async with llm() as client:
                result = await generate(plan(folder, n=3, mix="factoid=1", seed=1), client)
            return result.rows

        not_blocking = asyncio.run(awaited())
    assert inside == outside == not_blocking and len(inside) == 3
    assert set(threads) == {"lasagna-synthesize"}


def test_an_error_inside_a_running_loop_reaches_the_caller(tmp_path: Path) -> None:
    folder = docs(tmp_path / "docs")
    with FakeLLMServer(reply="not JSON") as server:
        llm = make_llm("openai/fake", base_url=server.base_url, api_key="k", cache=False)

        async def cell() -> None:
            synthesize(folder, n=2, mix="factoid=1", seed=1, llm=llm)

        with pytest.raises(SynthError, match=r"^no question was kept: 2 unparseable"):
            asyncio.run(cell())
