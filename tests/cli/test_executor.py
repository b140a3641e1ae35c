"""The local executor: bounded concurrency, failures isolated, every task reported once."""

import asyncio

import pytest

from lasagna_cli.engine.run._executor import LocalExecutor, Outcome


def test_bounded_concurrency_and_failures_do_not_stop_others() -> None:
    in_flight = 0
    peak = 0
    outcomes: list[Outcome[int, int]] = []

    async def work(i: int) -> int:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.001)
        in_flight -= 1
        if i % 7 == 0:
            raise RuntimeError(f"task {i} failed")
        return i * 2

    asyncio.run(LocalExecutor(5).run(range(100), work, outcomes.append))
    assert peak == 5
    assert sorted(o.task for o in outcomes) == list(range(100))
    failed = [o for o in outcomes if not o.ok]
    assert len(failed) == 15
    assert all(isinstance(o.error, RuntimeError) for o in failed)
    assert all(o.result == o.task * 2 for o in outcomes if o.ok)


def test_tasks_are_pulled_lazily() -> None:
    pulled = 0

    def tasks():  # type: ignore[no-untyped-def]
        nonlocal pulled
        for i in range(1000):
            pulled += 1
            yield i

    seen_when_first_done: list[int] = []

    async def work(i: int) -> int:
        await asyncio.sleep(0)
        return i

    def record(outcome: Outcome[int, int]) -> None:
        if not seen_when_first_done:
            seen_when_first_done.append(pulled)

    asyncio.run(LocalExecutor(4).run(tasks(), work, record))
    assert seen_when_first_done[0] <= 8
    assert pulled == 1000


def test_concurrency_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        LocalExecutor(0)


# Each command that runs tasks, as a user types it with --executor ray (the data need not
# be read: the executor is checked first).
RAY_COMMANDS = [
    ["benchmark", "run", "examples/data/pasta.jsonl"],
    ["benchmark", "sweep", "-d", "d.json", "-b", "s.toml"],
    ["benchmark", "run", "locomo", "--data-dir", "examples/data/locomo-mini"],
    ["judge", "grade", "rows.jsonl"],
]


@pytest.mark.parametrize("command", RAY_COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_executor_ray_without_ray_installed_is_one_line_naming_the_extra(
    command: list[str],
) -> None:
    import subprocess
    import sys
    from pathlib import Path

    # `ray` set to None in sys.modules: its import fails as if it were not installed.
    program = "import sys; sys.modules['ray'] = None; from lasagna_cli._app import main; main()"
    result = subprocess.run(
        [sys.executable, "-c", program, *command, "--executor", "ray"],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
        timeout=60,
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        "error: --executor ray needs Ray, which is not installed: "
        'pip install "lasagna-cli[ray]" (in this repository: uv run --group ray ...)'
    ]


def test_an_unknown_executor_and_a_stray_ray_address_are_usage_errors() -> None:
    from typer.testing import CliRunner

    from lasagna_cli._app import app

    runner = CliRunner()
    unknown = runner.invoke(
        app, ["benchmark", "run", "examples/data/pasta.jsonl", "--executor", "dask"]
    )
    assert unknown.exit_code == 2
    assert "--executor must be local or ray, got 'dask'" in unknown.stderr
    stray = runner.invoke(
        app, ["benchmark", "run", "examples/data/pasta.jsonl", "--ray-address", "auto"]
    )
    assert stray.exit_code == 2
    assert "--ray-address goes with --executor ray" in stray.stderr


@pytest.mark.parametrize(
    "address", ["garbage", "http://127.0.0.1:8265", "ray://head", "host:port", ":6379"]
)
def test_a_malformed_ray_address_is_one_line_naming_the_forms(address: str) -> None:
    pytest.importorskip("ray")
    from typer.testing import CliRunner

    from lasagna_cli._app import app

    args = ["benchmark", "run", "examples/data/pasta.jsonl", "--executor", "ray"]
    given = CliRunner().invoke(app, [*args, "--ray-address", address])
    assert given.exit_code == 2
    assert given.stderr.strip() == (
        "error: --ray-address must be auto, local, HOST:PORT (the head node's port, 6379 by "
        "default) or ray://HOST:PORT (its client port, 10001 by default), got " + repr(address)
    )
    from_env = CliRunner().invoke(app, args, env={"RAY_ADDRESS": address})
    assert from_env.exit_code == 2
    assert from_env.stderr.startswith("error: RAY_ADDRESS must be auto, local, HOST:PORT")
