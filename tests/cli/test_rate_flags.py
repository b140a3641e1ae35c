"""--rpm and --tpm on every command that calls a model, their keys in sweep files and
config.toml providers, and their division across Ray workers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_cli.commands._llm import build_llm
from lasagna_cli.engine.config._flags import Flags
from lasagna_cli.engine.config._sweepfile import config_from_sweep
from lasagna_cli.engine.kag._config import load_config
from lasagna_cli.engine.run import _rate_share
from lasagna_judge import LLM
from lasagna_judge.testing import FakeLLMServer, RateLimits

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "data"


def invoke(args: list[str], env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(app, args, env=env or {"OPENAI_API_KEY": "test"})


def limiter_of(llm: LLM) -> Any:
    return llm._backend.wire.sender._limiter  # type: ignore[union-attr, attr-defined]


COMMANDS = [
    ["judge", "grade", "in.jsonl", "--model", "openai/judge"],
    ["benchmark", "synthesize", "docs", "-o", "q.jsonl", "--model", "openai/x"],
    ["benchmark", "run", "pasta.jsonl", "--generator", "openai/x"],
    ["benchmark", "sweep", "-d", "d.json", "-b", "s.toml"],
    ["benchmark", "stats", "--results", "out", "--judge", "openai/j"],
    ["benchmark", "openviking", "config.yaml"],
    ["benchmark", "run", "--config", "config.yaml"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
@pytest.mark.parametrize(
    ("flag", "value"), [("--rpm", "fast"), ("--rpm", "0"), ("--tpm", "-5"), ("--tpm", "inf")]
)
def test_a_bad_limit_is_a_one_line_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str], flag: str, value: str
) -> None:
    monkeypatch.chdir(tmp_path)
    shutil.copy(EXAMPLES / "pasta.jsonl", tmp_path / "pasta.jsonl")
    (tmp_path / "in.jsonl").write_text('{"question": "q", "answers": "a", "prediction": "a"}\n')
    result = invoke([*command, flag, value])
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == (
        f"error: {flag}: expected a number a minute > 0 (e.g. 500), got {value!r}; leave it "
        "out for no limit (the pace still adapts to the provider's 429s); see "
        f"'lasagna {' '.join(command[:2])} --help'"
    )


def test_judge_grade_rpm_spaces_the_calls_so_none_is_refused(tmp_path: Path) -> None:
    # The server admits 7 requests in any second; --rpm 300 sends one every 0.2 s (the
    # first may wait for its connection: it comes later than its slot).
    rows = [{"id": i, "question": f"q{i}", "answers": "a", "prediction": "b"} for i in range(8)]
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    limits = RateLimits(requests_per_minute=7, minute=1.0)
    with FakeLLMServer(limits=limits) as server:
        result = invoke(
            [
                *("judge", "grade", str(tmp_path / "in.jsonl"), "--model", "openai/j"),
                *("--base-url", server.base_url, "--rpm", "300", "--no-cache"),
                *("-o", str(tmp_path / "out.jsonl")),
            ]
        )
        arrivals = sorted(server.times)
    assert result.exit_code == 0, result.output
    assert limits.rejected == 0 and limits.admitted == 8
    assert arrivals[-1] - arrivals[1] >= 6 * 0.2 - 0.02, arrivals


def test_a_sweep_file_names_its_limits(tmp_path: Path) -> None:
    shutil.copy(EXAMPLES / "pasta.jsonl", tmp_path / "pasta.jsonl")
    sweep = tmp_path / "s.yaml"
    sweep.write_text(
        "benchmarks:\n  - path: pasta.jsonl\nrequests_per_minute: 500\ntokens_per_minute: 1e5\n"
    )
    config = config_from_sweep(str(sweep), Flags(), {})
    assert (config.requests_per_minute, config.tokens_per_minute) == (500.0, 100000.0)
    # Left out, the flags' values hold.
    sweep.write_text("benchmarks:\n  - path: pasta.jsonl\n")
    config = config_from_sweep(str(sweep), Flags(requests_per_minute=60.0), {})
    assert (config.requests_per_minute, config.tokens_per_minute) == (60.0, None)


def test_a_bad_sweep_file_limit_names_the_key(tmp_path: Path) -> None:
    shutil.copy(EXAMPLES / "pasta.jsonl", tmp_path / "pasta.jsonl")
    (tmp_path / "s.yaml").write_text(
        "benchmarks:\n  - path: pasta.jsonl\nrequests_per_minute: lots\n"
    )
    result = invoke(["benchmark", "run", str(tmp_path / "s.yaml"), "-o", str(tmp_path / "o")])
    assert result.exit_code == 2, result.output
    assert "s.yaml: requests_per_minute: expected a number a minute > 0" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "table",
    [
        '[providers.fast]\napi = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n',
        '[providers.fast]\ntype = "Ollama"\nurl = "http://127.0.0.1:9"\n',
    ],
    ids=["lasagna", "kag"],
)
def test_config_toml_providers_take_lasagna_s_limit_keys(tmp_path: Path, table: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(table + "requests_per_minute = 120\ntokens_per_minute = 40000\n")
    provider = load_config(path, {}).providers["fast"]
    assert (provider.requests_per_minute, provider.tokens_per_minute) == (120.0, 40000.0)
    assert "requests_per_minute" not in provider.describe()  # not part of the results
    path.write_text(table + "requests_per_minute = 0\n")
    with pytest.raises(Exception, match=r"providers.fast.requests_per_minute: expected a number"):
        load_config(path, {})


def test_ray_workers_divide_the_run_s_limits() -> None:
    from lasagna_cli.engine.run._ray import TaskActor, _Pool

    made: list[tuple[Any, ...]] = []

    class Remote:
        def __init__(self, cls: Any) -> None:
            self.cls = cls

        def options(self, **_: Any) -> Remote:
            return self

        def remote(self, *args: Any) -> tuple[Any, ...]:
            made.append(args)
            return args

    class FakeRay:
        def remote(self, cls: Any) -> Remote:
            return Remote(cls)

    pool = _Pool(FakeRay(), "recipe", 4)
    assert made == [("recipe", 0.25)] * 4
    pool.replace(0, pool.actors[0])  # a dead worker's replacement takes the same share
    assert made[-1] == ("recipe", 0.25)
    try:
        TaskActor("recipe", 0.25)  # type: ignore[arg-type]  # as Ray makes it, in its process
        env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
        llm = build_llm(
            "openai/x", requests_per_minute=600, tokens_per_minute=1000, cache=False, env=env
        )
        limiter = limiter_of(llm)
        assert limiter.interval == pytest.approx(60 / 150)  # 600 a minute / 4 workers
        assert limiter.token_interval == pytest.approx(60 / 250)
    finally:
        _rate_share.set_rate_share(1.0)
    llm = build_llm("openai/x", requests_per_minute=600, cache=False, env=env)
    assert limiter_of(llm).interval == pytest.approx(0.1)  # on the driver: all of it
