"""The point of the sweep: SIGKILL at random moments and Ctrl-C never lose or redo work.

The sweep runs as a real subprocess; the fake server lives in this process, so it survives
the kills and counts every call. The scenario itself is benchmarks/sweep_chaos.py, run here
as the issue states it: 2,000 tasks, five SIGKILLs (about 10 s).
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from lasagna_judge.testing import FakeLLMServer
from lasagna_synth import TEMP_PREFIX

ROOT = Path(__file__).resolve().parents[2]


def load_benchmark() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "sweep_chaos", ROOT / "benchmarks" / "sweep_chaos.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["sweep_chaos"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def test_five_sigkills_then_continue_leave_exactly_one_result_per_task(tmp_path: Path) -> None:
    chaos = load_benchmark()
    seed = int.from_bytes(os.urandom(4), "big")
    report = chaos.chaos(tasks=2000, kills=5, parallel=16, seed=seed, folder=tmp_path)
    assert report.ok, f"seed {seed}: {report.problems[:10]}"
    assert report.tasks == 2000 and report.files == 2000
    assert len(report.kills) == 5
    assert all(0 <= kill.lost <= 16 for kill in report.kills)
    assert report.calls == 2000 + sum(kill.lost for kill in report.kills)
    assert report.errors == report.expected_errors > 0
    assert not list(tmp_path.rglob(f"{TEMP_PREFIX}*"))


def test_ctrl_c_stops_cleanly_and_continue_finishes(tmp_path: Path, spawn: Any) -> None:
    questions = {f"q{i}": {"input": f"question {i}"} for i in range(200)}
    (tmp_path / "datasets.json").write_text(json.dumps({"d": questions}))
    (tmp_path / "setups.toml").write_text('[a]\nprovider = "fake"\nmodel = "m"\n')
    with FakeLLMServer(reply="an answer", latency=0.05) as server:
        (tmp_path / "config.toml").write_text(
            f'[providers.fake]\napi = "openai"\nbase_url = "{server.base_url}"\n'
        )
        command = [
            sys.executable, "-c", "from lasagna_cli._app import main; main()",
            "benchmark", "sweep", "--datasets", str(tmp_path / "datasets.json"),
            "--benchmark", str(tmp_path / "setups.toml"), "--output", str(tmp_path / "out"),
            "--parallel", "4",
        ]  # fmt: skip
        process = spawn(command, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while server.calls < 20 and time.monotonic() < deadline:
            time.sleep(0.01)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
        assert process.returncode == 130, stderr
        assert "interrupted" in stderr and "--continue" in stderr
        assert "Traceback" not in stderr
        files = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
        assert 0 < len(files) < 200
        assert all(json.loads(p.read_text())["ok"]["result"] == "an answer" for p in files)
        assert not any(p.name.startswith(TEMP_PREFIX) for p in files)
        # Ctrl-C cancels the calls in flight and starts no new one.
        calls_at_stop = server.calls
        assert calls_at_stop <= len(files) + 4
        resumed = subprocess.run(
            [*command, "--continue"], capture_output=True, text=True, timeout=120
        )
        assert resumed.returncode == 0, resumed.stderr
        assert f"{200 - len(files)} done, 0 failed, {len(files)} skipped" in resumed.stderr
        assert server.calls == calls_at_stop + 200 - len(files)
    assert len([p for p in (tmp_path / "out").rglob("*") if p.is_file()]) == 200
