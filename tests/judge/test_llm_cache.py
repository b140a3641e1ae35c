"""The SQLite cache: a rerun makes no calls, across LLM objects and processes; failures are
not cached; keys never reach the file."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from lasagna_judge import JudgeError, LLMCallError, RetryPolicy, make_llm
from lasagna_judge._cache import ResponseCache, cache_key
from lasagna_judge.testing import FakeLLMServer, Fault

USER = [{"role": "user", "content": "Grade this."}]
FAST = RetryPolicy(max_retries=1, base_delay=0.01, max_delay=0.02)
SECRET = "sk-live-THIS-IS-A-SECRET-1234567890"


class Verdict(BaseModel):
    score: int


def test_a_cache_hit_makes_no_request_even_from_another_llm(
    fake_llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm_server.reply = '{"score": 4}'
    cache = tmp_path / "cache.sqlite"

    async def go() -> Any:
        results = []
        for _ in range(2):  # two LLM objects sharing one file
            llm = make_llm("openai/m", base_url=fake_llm_server.base_url, cache=cache)
            async with llm:
                results.append(await llm.structured(USER, Verdict))
                results.append(await llm.complete(USER))
                results.append(await llm.structured(USER, Verdict))
                results.append(llm.calls_made)
        return results

    first, text, again, calls_1, second, text_2, _, calls_2 = asyncio.run(go())
    assert fake_llm_server.calls == 2  # one structured, one complete
    assert (calls_1, calls_2) == (2, 0)
    assert not first.cached and again.cached and second.cached and text_2.cached
    assert first.value == again.value == second.value == Verdict(score=4)
    # A cached result is the recorded one: a rerun reproduces its fields exactly.
    assert (second.raw, second.usage, second.latency_s) == (first.raw, first.usage, first.latency_s)
    assert text_2.text == text.text


def test_different_requests_do_not_share_entries(
    fake_llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm_server.reply = lambda request: str(len(fake_llm_server.requests))

    async def go() -> list[str]:
        llm = make_llm("openai/m", base_url=fake_llm_server.base_url, cache=tmp_path / "c")
        async with llm:
            return [
                (await llm.complete(USER)).text,
                (await llm.complete(USER, temperature=0.5)).text,
                (await llm.complete(USER, max_tokens=5)).text,
                (await llm.complete([{"role": "user", "content": "other"}])).text,
                (await llm.complete(USER)).text,
            ]

    assert asyncio.run(go()) == ["1", "2", "3", "4", "1"]


def test_the_same_model_name_on_two_servers_does_not_share_entries(tmp_path: Path) -> None:
    cache = tmp_path / "c.sqlite"

    async def ask(base_url: str) -> Any:
        llm = make_llm("openai/same-name", base_url=base_url, cache=cache)
        async with llm:
            return await llm.complete(USER)

    with FakeLLMServer(reply="first server") as first, FakeLLMServer(reply="second") as second:
        assert asyncio.run(ask(first.base_url)).text == "first server"
        assert asyncio.run(ask(second.base_url)).text == "second"
        again = asyncio.run(ask(first.base_url + "/"))  # the same server
    assert again.cached and again.text == "first server"


def test_concurrent_identical_calls_make_one_request(
    fake_llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm_server.latency = 0.05

    async def go() -> list[bool]:
        llm = make_llm("openai/m", base_url=fake_llm_server.base_url, cache=tmp_path / "c")
        async with llm:
            results = await asyncio.gather(*(llm.complete(USER) for _ in range(10)))
        return [r.cached for r in results]

    cached = asyncio.run(go())
    assert fake_llm_server.calls == 1
    assert cached.count(False) == 1


def test_failures_are_not_cached_so_a_rerun_retries_them(
    fake_llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    cache = tmp_path / "c.sqlite"

    async def go() -> str:
        llm = make_llm(
            "openai/m",
            base_url=fake_llm_server.base_url,
            cache=cache,
            retry_policy=FAST,
            max_retries=1,
        )
        async with llm:
            return (await llm.complete(USER)).text

    fake_llm_server.reply = Fault(status=500)
    with pytest.raises(LLMCallError):
        asyncio.run(go())
    assert len(ResponseCache(cache)) == 0
    fake_llm_server.reply = "recovered"
    assert asyncio.run(go()) == "recovered"
    assert fake_llm_server.calls == 3


def test_unparsed_results_are_cached_with_their_raw_text(
    fake_llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm_server.reply = "I refuse to use JSON"

    async def go() -> Any:
        llm = make_llm("openai/m", base_url=fake_llm_server.base_url, cache=tmp_path / "c")
        async with llm:
            first = await llm.structured(USER, Verdict, max_validation_retries=1)
            second = await llm.structured(USER, Verdict, max_validation_retries=1)
            more = await llm.structured(USER, Verdict, max_validation_retries=2)
            return first, second, more

    first, second, more = asyncio.run(go())
    assert first.status == second.status == more.status == "unparsed"
    assert second.cached and second.raw == "I refuse to use JSON"
    assert not more.cached  # more re-asks is another request
    assert fake_llm_server.calls == 2 + 3


def test_the_cache_is_shared_safely_by_several_processes(
    fake_llm_server: FakeLLMServer, tmp_path: Path, spawn: Any
) -> None:
    cache = tmp_path / "shared.sqlite"
    script = textwrap.dedent(
        f"""
        import asyncio
        from lasagna_judge import make_llm

        async def main():
            llm = make_llm("openai/m", base_url={fake_llm_server.base_url!r}, cache={str(cache)!r})
            async with llm:
                await asyncio.gather(*(
                    llm.complete([{{"role": "user", "content": f"q{{i}}"}}]) for i in range(40)
                ))
                print(llm.calls_made)

        asyncio.run(main())
        """
    )
    env = {**os.environ, "PYTHONWARNINGS": "error"}
    workers = [
        spawn([sys.executable, "-c", script], stdout=subprocess.PIPE, env=env) for _ in range(3)
    ]
    outputs = [worker.communicate(timeout=120)[0] for worker in workers]
    assert all(worker.returncode == 0 for worker in workers)
    assert sum(int(out) for out in outputs) == fake_llm_server.calls
    assert len(ResponseCache(cache)) == 40
    rerun = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert rerun.stdout.strip() == "0"


def test_keys_never_reach_the_cache_errors_or_reprs(
    fake_llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    cache = tmp_path / "c.sqlite"
    fake_llm_server.reply = lambda request: (
        Fault(status=401) if "fail" in str(request) else '{"score": 1}'
    )

    async def go() -> Any:
        llm = make_llm("openai/m", base_url=fake_llm_server.base_url, api_key=SECRET, cache=cache)
        async with llm:
            ok = await llm.structured(USER, Verdict)
            text = await llm.complete(USER)
            with pytest.raises(LLMCallError) as caught:
                await llm.complete([{"role": "user", "content": "fail"}])
            return llm, ok, text, caught.value

    llm, ok, text, error = asyncio.run(go())
    assert fake_llm_server.headers[0]["authorization"] == f"Bearer {SECRET}"  # it was used
    for shown in (repr(llm), repr(ok), repr(text), str(error), repr(error)):
        assert SECRET not in shown
    for path in tmp_path.iterdir():  # the database and its WAL files
        assert SECRET.encode() not in path.read_bytes()
        assert SECRET[-8:].encode() not in path.read_bytes()


def test_a_server_error_that_echoes_the_key_is_redacted(fake_llm_server: FakeLLMServer) -> None:
    # Some servers quote the key they rejected; the LLMCallError must not repeat it.
    fake_llm_server.reply = Fault(status=400, message=f"invalid key {SECRET}")

    async def go() -> LLMCallError:
        llm = make_llm("openai/m", base_url=fake_llm_server.base_url, api_key=SECRET, cache=False)
        async with llm:
            with pytest.raises(LLMCallError) as caught:
                await llm.complete(USER)
            return caught.value

    error = asyncio.run(go())
    assert "HTTP 400" in str(error) and SECRET not in str(error) and "***" in str(error)


def test_cache_key_is_canonical() -> None:
    assert cache_key({"a": 1, "b": [1, 2]}) == cache_key({"b": [1, 2], "a": 1})
    assert cache_key({"a": 1}) != cache_key({"a": 2})
    assert len(cache_key({})) == 64


def test_a_file_that_is_not_sqlite_is_a_judge_error(tmp_path: Path) -> None:
    bad = tmp_path / "c.sqlite"
    bad.write_bytes(b"this is not a database at all, just text" * 100)
    with pytest.raises(JudgeError, match="not a usable SQLite database"):
        make_llm("openai/m", base_url="http://127.0.0.1:9/v1", cache=bad)


def test_the_default_cache_lives_in_the_user_cache_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lasagna_judge import default_cache_path

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache_path() == tmp_path / "lasagna" / "llm-cache.sqlite"


def test_credentials_in_a_base_url_are_not_repeated_in_errors() -> None:
    with FakeLLMServer() as server:
        port = server.port  # closed once the server stops

    async def go() -> LLMCallError:
        llm = make_llm(
            "openai/m",
            base_url=f"http://user:{SECRET}@127.0.0.1:{port}/v1",
            cache=False,
            retry_policy=FAST,
            max_retries=0,
        )
        async with llm:
            with pytest.raises(LLMCallError) as caught:
                await llm.complete(USER)
            return caught.value

    error = asyncio.run(go())
    assert f"cannot connect to http://127.0.0.1:{port}" in str(error)
    assert SECRET not in str(error) and "user" not in str(error)


def test_keys_are_the_canonical_json_hash_of_the_request(tmp_path: Path) -> None:
    # Keys are computed part by part (the schema encoded once per class): they must stay
    # the sha256 of the whole request's canonical JSON, or existing caches would be missed.
    from lasagna_judge._llm import _CACHE_VERSION
    from lasagna_judge._providers import CallOptions

    llm = make_llm("openai/m", base_url="http://127.0.0.1:9/v1", cache=tmp_path / "c.sqlite")
    messages = [{"role": "system", "content": 'Ünïcode \u2028 "quoted"'}, *USER]
    options = CallOptions(temperature=0.0, max_tokens=7)
    request: dict[str, Any] = {
        "v": _CACHE_VERSION,
        "kind": "structured",
        "model": "openai/m",
        "endpoint": "http://127.0.0.1:9/v1",
        "messages": messages,
        "params": {"temperature": 0.0, "max_tokens": 7},
        "schema": Verdict.model_json_schema(),
        "schema_name": "Verdict",
        "mode": "tools",
        "max_validation_retries": 2,
    }
    from lasagna_judge._llm import _schema_json

    got = llm._key(
        "structured",
        messages,
        options,
        schema=_schema_json(Verdict),
        schema_name="Verdict",
        mode="tools",
        max_validation_retries=2,
    )
    assert got == cache_key(request)
    plain = make_llm("openai/m", api_key="k", cache=tmp_path / "c.sqlite")
    del request["endpoint"]
    request.update(kind="complete")
    for name in ("schema", "schema_name", "mode", "max_validation_retries"):
        del request[name]
    assert plain._key("complete", messages, options) == cache_key(request)


def test_writes_on_an_event_loop_are_committed_together_and_read_back_at_once(
    tmp_path: Path,
) -> None:
    path = tmp_path / "c.sqlite"
    cache = ResponseCache(path)

    async def go() -> tuple[Any, int, int]:
        for i in range(5):
            cache.put(f"k{i}", "m", {"i": i})
        seen = cache.get("k3")  # pending, and found
        other = ResponseCache(path)  # another connection: nothing committed yet
        before = len(other)
        await asyncio.sleep(0)  # the loop's next turn commits them, in one transaction
        await asyncio.sleep(0)
        return seen, before, len(other)

    seen, before, after = asyncio.run(go())
    assert seen == {"i": 3} and (before, after) == (0, 5)
    cache.put("k9", "m", {"i": 9})  # outside a loop: at once
    assert len(ResponseCache(path)) == 6


def test_pending_writes_are_committed_when_the_llm_closes(
    fake_llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm_server.reply = '{"score": 4}'
    cache = tmp_path / "cache.sqlite"

    async def go() -> None:
        llm = make_llm("openai/m", base_url=fake_llm_server.base_url, cache=cache)
        await asyncio.gather(
            *(llm.structured([{"role": "user", "content": str(i)}], Verdict) for i in range(20))
        )
        await llm.aclose()  # before the loop turns again

    asyncio.run(go())
    assert len(ResponseCache(cache)) == 20
