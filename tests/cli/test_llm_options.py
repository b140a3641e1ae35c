"""build_llm: the CLI's one reader of environment variables."""

from __future__ import annotations

import asyncio
import importlib.util
import re
from pathlib import Path

import pytest

from lasagna_cli.commands._errors import USAGE_ERROR, CliError
from lasagna_cli.commands._llm import ENV_VARIABLES, auto_concurrency, build_llm, load_prices
from lasagna_cli.engine import EngineUsageError
from lasagna_cli.engine.config import RunConfig
from lasagna_judge import LLM
from lasagna_judge.testing import FakeLLMServer

SECRET = "sk-env-SECRET-0123456789abcdef"


def call(llm: LLM) -> str:
    async def go() -> str:
        async with llm:
            return (await llm.complete([{"role": "user", "content": "hi"}])).text

    return asyncio.run(go())


def test_no_model_anywhere_is_a_usage_error_pointing_to_smollm2() -> None:
    with pytest.raises(CliError) as caught:
        build_llm(env={})
    assert caught.value.exit_code == USAGE_ERROR
    assert "MODEL_NAME" in str(caught.value) and "local/smollm2" in str(caught.value)


def test_a_bare_model_name_suggests_a_provider() -> None:
    with pytest.raises(CliError, match=r"did you mean openai/gpt-4o-mini\?"):
        build_llm(env={"MODEL_NAME": "gpt-4o-mini", "OPENAI_API_KEY": SECRET})


def test_openai_without_key_or_server_lists_every_variable_read() -> None:
    with pytest.raises(CliError) as caught:
        build_llm("openai/gpt-4o-mini", env={"ANTHROPIC_API_KEY": SECRET})
    message = str(caught.value)
    assert caught.value.exit_code == USAGE_ERROR
    for variable in ENV_VARIABLES:
        assert variable in message
    assert "local/smollm2" in message and "--base-url" in message
    assert SECRET not in message


@pytest.mark.parametrize(
    ("model", "flag", "named", "alternative"),
    [
        ("openai/m", "--judge", "--judge openai/m needs", "--judge local/smollm2"),
        ("openai/m", None, "openai/m needs", "use local/smollm2"),
        (None, "--generator", "MODEL_NAME openai/m needs", "--generator local/smollm2"),
    ],
)
def test_messages_name_where_the_model_came_from(
    model: str | None, flag: str | None, named: str, alternative: str
) -> None:
    with pytest.raises(CliError) as caught:
        build_llm(model, env={"MODEL_NAME": "openai/m"}, flag=flag, base_url_flag=None)
    message = str(caught.value)
    assert message.startswith(named) and alternative in message
    assert "--model" not in message and "--base-url" not in message
    with pytest.raises(CliError, match=r"^--judge 'm': expected provider/name"):
        build_llm("m", env={}, flag="--judge")
    with pytest.raises(CliError, match=r"^no model: pass --generator provider/name"):
        build_llm(env={}, flag="--generator")


def test_anthropic_without_key_is_a_usage_error() -> None:
    with pytest.raises(CliError, match="ANTHROPIC_API_KEY") as caught:
        build_llm("anthropic/claude-3-5-haiku-latest", env={"OPENAI_API_KEY": SECRET})
    assert "local/smollm2" in str(caught.value) and SECRET not in str(caught.value)


def test_model_name_key_and_base_url_come_from_the_environment(tmp_path: Path) -> None:
    with FakeLLMServer(reply="from env") as server:
        env = {
            "MODEL_NAME": "openai/served-model",
            "OPENAI_API_KEY": SECRET,
            "OPENAI_BASE_URL": server.base_url,
            "LASAGNA_CACHE_DIR": str(tmp_path / "cache"),
        }
        llm = build_llm(concurrency=3, env=env)
        assert llm.model == "openai/served-model"
        assert llm.cache_path == tmp_path / "cache" / "llm-cache.sqlite"
        assert call(llm) == "from env"
        assert server.requests[0]["model"] == "served-model"
        assert server.headers[0]["authorization"] == f"Bearer {SECRET}"
    assert SECRET not in repr(llm)


def test_the_base_url_option_beats_the_variable() -> None:
    with FakeLLMServer(reply="option") as server:
        env = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
        llm = build_llm("openai/m", base_url=server.base_url, cache=False, env=env)
        assert call(llm) == "option"


def test_a_base_url_alone_is_enough_for_a_local_server() -> None:
    with FakeLLMServer(reply="no key needed") as server:
        llm = build_llm("openai/m", cache=False, env={"OPENAI_BASE_URL": server.base_url})
        assert call(llm) == "no key needed"


@pytest.mark.parametrize("form", ["{host}:{port}", "http://{host}:{port}", "http://{host}:{port}/"])
def test_ollama_host_is_read_in_its_own_forms(form: str) -> None:
    with FakeLLMServer(reply="from ollama") as server:
        host = form.format(host=server.host, port=server.port)
        llm = build_llm("ollama/llama3.2", no_cache=True, env={"OLLAMA_HOST": host})
        assert call(llm) == "from ollama"
        assert server.paths == ["/v1/chat/completions"]


def test_ollama_base_url_wins_over_ollama_host() -> None:
    with FakeLLMServer(reply="full url") as server:
        env = {"OLLAMA_BASE_URL": server.base_url, "OLLAMA_HOST": "127.0.0.1:9"}
        assert call(build_llm("ollama/m", no_cache=True, env=env)) == "full url"


def test_no_cache_turns_the_cache_off() -> None:
    llm = build_llm("openai/m", base_url="http://127.0.0.1:9/v1", no_cache=True, env={})
    assert llm.cache_path is None
    llm = build_llm("openai/m", base_url="http://127.0.0.1:9/v1", cache=False, env={})
    assert llm.cache_path is None


def test_bad_concurrency_is_a_usage_error() -> None:
    with pytest.raises(CliError, match="--concurrency must be at least 1"):
        build_llm("openai/m", base_url="http://127.0.0.1:9/v1", concurrency=0, env={})


def test_settings_make_llm_refuses_are_usage_errors() -> None:
    # Without a scheme the URL would fail on every attempt of every call, after all retries.
    env = {"OPENAI_BASE_URL": "localhost:8000/v1"}
    with pytest.raises(CliError, match="expected an http:// or https:// URL") as caught:
        build_llm("openai/m", env=env)
    assert caught.value.exit_code == USAGE_ERROR and "'localhost:8000/v1'" in str(caught.value)
    with pytest.raises(CliError, match="expected an http") as caught:
        build_llm("ollama/llama3.2", base_url="127.0.0.1:11434", env={})
    assert caught.value.exit_code == USAGE_ERROR


def test_price_tables_in_json_or_toml(tmp_path: Path) -> None:
    as_json = tmp_path / "prices.json"
    as_json.write_text('{"openai/gpt-4o-mini": [0.15, 0.6], "claude": [3, 15]}', encoding="utf-8")
    as_toml = tmp_path / "prices.toml"
    as_toml.write_text('"openai/gpt-4o-mini" = [0.15, 0.6]\nclaude = [3, 15]\n', encoding="utf-8")
    expected = {"openai/gpt-4o-mini": (0.15, 0.6), "claude": (3.0, 15.0)}
    assert load_prices(as_json) == load_prices(as_toml) == expected


@pytest.mark.parametrize(
    ("name", "content", "code", "message"),
    [
        ("absent.json", None, USAGE_ERROR, "--prices: cannot read"),
        ("folder", "", USAGE_ERROR, "--prices: cannot read"),
        ("bad.json", "{", 1, "is not valid JSON or TOML"),
        ("bad.toml", "x = ", 1, "is not valid JSON or TOML"),
        ("list.json", "[0.15, 0.6]", 1, "must map model names to [input, output]"),
        ("one.json", '{"m": [0.15]}', 1, "the price of 'm' must be [input, output]"),
        ("text.json", '{"m": ["0.1", "0.2"]}', 1, "the price of 'm' must be [input, output]"),
        ("latin.json", b'{"caf\xe9": [1, 2]}', 1, "is not UTF-8 text"),
    ],
)
def test_bad_price_tables_are_one_line_errors(
    tmp_path: Path, name: str, content: str | bytes | None, code: int, message: str
) -> None:
    path = tmp_path / name
    if name == "folder":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(CliError) as caught:
        load_prices(path)
    assert caught.value.exit_code == code
    assert message in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="needs the local extra")
def test_local_models_need_nothing_and_take_no_base_url() -> None:
    assert build_llm("local/smollm2", no_cache=True, env={}).model == "local/smollm2"
    with pytest.raises(CliError, match="--base-url does not apply"):
        build_llm("local/smollm2", base_url="http://x", env={})


def test_the_judge_library_reads_no_environment_variable() -> None:
    source = Path(__file__).resolve().parents[2] / "packages" / "judge" / "src"
    readers = re.compile(r"os\.environ|os\.getenv|getenv\(")
    offenders = [
        str(path.relative_to(source))
        for path in source.rglob("*.py")
        if readers.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


@pytest.mark.parametrize(
    ("models", "base_url", "env", "expected"),
    [
        (["openai/gpt-4o-mini"], None, {"OPENAI_API_KEY": "k"}, 64),
        (["anthropic/claude-3-5-haiku-latest", "openai/gpt-4o"], None, {}, 64),
        ([None], None, {"MODEL_NAME": "openai/gpt-4o-mini"}, 64),
        # A server of one's own queues what it cannot serve: 8, whoever names it.
        (["openai/m"], "http://127.0.0.1:8000/v1", {}, 8),
        (["openai/m"], None, {"OPENAI_BASE_URL": "http://127.0.0.1:8000/v1"}, 8),
        (["anthropic/m"], None, {"ANTHROPIC_BASE_URL": "http://127.0.0.1:8000"}, 8),
        (["ollama/llama3.2"], None, {}, 8),
        (["local/smollm2"], None, {}, 8),
        (["openai/gpt-4o", "local/smollm2"], None, {}, 8),
        ([], None, {}, 8),
        ([None], None, {}, 8),  # no model at all: the command's own check says so
    ],
)
def test_the_default_concurrency_follows_where_the_calls_go(
    models: list[str | None], base_url: str | None, env: dict[str, str], expected: int
) -> None:
    assert auto_concurrency(models, base_url, env) == expected


def run_concurrency(config: RunConfig, base_url: None) -> int:
    """A run's default concurrency as `benchmark run` chooses it once its models are located
    (these configs name their servers, and the tests give no --base-url)."""
    from lasagna_cli.engine.config import default_concurrency

    return default_concurrency(config)


def test_a_run_asking_a_users_system_keeps_8(monkeypatch: pytest.MonkeyPatch) -> None:
    from lasagna_cli.engine.config._config import BenchmarkEntry, ModelSpec, RunConfig, Setup
    from lasagna_cli.engine.systems import SystemSpec

    for name in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "MODEL_NAME"):
        monkeypatch.delenv(name, raising=False)
    entry = BenchmarkEntry(where="b.jsonl", path=Path("b.jsonl"))
    hosted = Setup(name="g", generator=ModelSpec("openai/gpt-4o-mini"))
    assert run_concurrency(RunConfig((entry,), (hosted,), judge="openai/gpt-4o"), None) == 64
    mine = Setup(name="s", system=SystemSpec(kind="http", target="http://127.0.0.1:9"))
    assert run_concurrency(RunConfig((entry,), (hosted, mine)), None) == 8
    served = Setup(name="v", generator=ModelSpec("openai/m", endpoint="http://127.0.0.1:8000"))
    assert run_concurrency(RunConfig((entry,), (served,)), None) == 8


def test_every_judge_of_a_jury_counts_for_base_url_and_the_default_concurrency(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from lasagna_cli.engine.config import checked_base_url
    from lasagna_cli.engine.config._config import BenchmarkEntry, ModelSpec, RunConfig, Setup

    server = "http://127.0.0.1:8000/v1"
    # The second judge calls a server: --base-url is its, though the first runs in-process.
    assert checked_base_url(server, "d.jsonl", None, ["local/smollm2", "openai/m"]) == server
    with pytest.raises(
        EngineUsageError, match="local/smollm2 and local/other, which run in-process"
    ):
        checked_base_url(server, "d.jsonl", None, ["local/smollm2", "local/other"])
    for name in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "MODEL_NAME"):
        monkeypatch.delenv(name, raising=False)
    entry = BenchmarkEntry(where="b.jsonl", path=Path("b.jsonl"))
    hosted = Setup(name="g", generator=ModelSpec("openai/gpt-4o-mini"))
    jury = (ModelSpec("ollama/llama3.2"),)
    config = RunConfig((entry,), (hosted,), judge="openai/gpt-4o", jury=jury)
    assert run_concurrency(config, None) == 8
