"""Dense retrieval in Chroma's real server on 127.0.0.1 (`chroma run`, installed apart from
the workspace: `uv tool install chromadb`, as .ci/run does): the collection lasagna fills
ranks as the in-process index does on the same vectors, is found full the second time, and
a collection of another dimension or an unreachable server is one line before any question.
"""

from __future__ import annotations

import json
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_cli.engine.records._store import RunStore, iter_records

ROOT = Path(__file__).resolve().parents[2]
BEIR = ROOT / "examples" / "data" / "pasta-beir"
API = "/api/v2/tenants/default_tenant/databases/default_database"
CHROMA = shutil.which("chroma") or str(Path.home() / ".local" / "bin" / "chroma")

pytestmark = pytest.mark.skipif(
    not Path(CHROMA).exists(),
    reason="Chroma's server is not installed: `uv tool install chromadb` (.ci/run does)",
)


def _call(url: str, method: str = "GET", body: Any = None) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        url, data=data, method=method, headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as reply:
        return json.loads(reply.read())


@pytest.fixture(scope="module")
def chroma(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    folder = tmp_path_factory.mktemp("chroma")
    server = subprocess.Popen(
        [CHROMA, "run", "--path", str(folder), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                _call(url + "/api/v2/heartbeat")
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, "chroma did not start"
                time.sleep(0.2)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


def run(*args: str, tmp_path: Path) -> Any:
    env = {"LASAGNA_CACHE_DIR": str(tmp_path / "cache"), "MODEL_NAME": ""}
    return CliRunner().invoke(app, ["benchmark", "run", str(BEIR), *args], env=env)


def rankings(out: Path) -> dict[str, list[str]]:
    found = {}
    for _, record in iter_records(RunStore(out)):
        found[record["task"]["item"]] = [doc for doc, _ in record["retrieval"]["ranking"]]
    return found


def test_a_collection_lasagna_fills_ranks_as_the_in_process_index(
    chroma: str, tmp_path: Path
) -> None:
    local = run("--retriever", "dense", "-o", str(tmp_path / "local"), tmp_path=tmp_path)
    assert local.exit_code == 0, local.output
    stored = run("--retriever", "dense", "--vector-store", chroma, "-o", str(tmp_path / "store"),
                 tmp_path=tmp_path)  # fmt: skip
    assert stored.exit_code == 0, stored.output
    assert "filled in" in stored.stderr
    assert rankings(tmp_path / "store") == rankings(tmp_path / "local")
    (result,) = json.loads((tmp_path / "store" / "results.json").read_text())["results"]
    assert result["setup"]["retrieval_index"]["index"] == chroma
    assert result["setup"]["retriever"]["vector_store"] == chroma
    name = next(c["name"] for c in _call(chroma + API + "/collections"))
    again = run("--retriever", "dense", "--vector-store", chroma, "--collection", name,
                "-o", str(tmp_path / "again"), tmp_path=tmp_path)  # fmt: skip
    assert again.exit_code == 0, again.output
    assert "found full" in again.stderr  # an existing collection, used as it is
    assert rankings(tmp_path / "again") == rankings(tmp_path / "local")


def test_a_collection_of_another_dimension_is_one_line(chroma: str, tmp_path: Path) -> None:
    made = _call(chroma + API + "/collections", "POST", {"name": "tiny-vectors"})  # l2: allowed
    _call(chroma + API + f"/collections/{made['id']}/add", "POST",
          {"ids": ["lasagna"], "embeddings": [[1.0, 0.0, 0.0]]})  # fmt: skip
    result = run("--retriever", "dense", "--vector-store", chroma, "--collection", "tiny-vectors",
                 "-o", str(tmp_path / "r"), tmp_path=tmp_path)  # fmt: skip
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.strip().splitlines()
    assert "holds vectors of 3 dimensions and the embedder makes 256" in line
    assert not list((tmp_path / "r").glob("tasks/*/*/*"))


def test_a_missing_collection_and_an_unreachable_server_are_one_line(
    chroma: str, tmp_path: Path
) -> None:
    missing = run("--retriever", "dense", "--vector-store", chroma, "--collection", "nope",
                  "-o", str(tmp_path / "a"), tmp_path=tmp_path)  # fmt: skip
    assert missing.exit_code == 2 and "no collection 'nope'" in missing.stderr
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    away = run("--retriever", "dense", "--vector-store", f"http://127.0.0.1:{closed}",
               "-o", str(tmp_path / "b"), tmp_path=tmp_path)  # fmt: skip
    assert away.exit_code == 2, away.output
    assert "cannot reach it" in away.stderr and len(away.stderr.strip().splitlines()) == 1
