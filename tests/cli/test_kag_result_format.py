"""The result files a sweep writes are files `kag stats` reads: checked field by field
against the layout serde gives kag's Rust structs.

`kag_reads` below is written from kag 0.2's source (commit 12389ee), not from a sample:
`src/subcommand/benchmark/result.rs` (an externally tagged `Result`, lowercase: `ok` or
`error`), `src/generation/config.rs` (`Output {result, stats}`, `Stats {prompt, retrieval,
config, time}`), `src/cli/generation.rs` (`Generation`), `src/cli/component.rs`
(`ComponentName`), `src/retrieval/` (the embedder/Neo4j stats) and serde's own
`std::time::Duration` (`{secs: u64, nanos: u32}`). serde_json refuses a second key beside
an enum's tag, a missing required field and a wrong type; it ignores unknown keys of a
struct and takes a missing `Option` as None. The fixture tree
`fixtures/kag/stats/results/` is written by hand from the same structs (as serde_json's
`to_vec_pretty` lays them out) and must pass the same check.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_judge.testing import FakeLLMServer

FIXTURES = Path(__file__).parent / "fixtures" / "kag" / "stats"


class NotKag(AssertionError):
    """kag's serde would refuse the value here."""


def _need(ok: bool, where: str, what: str) -> None:
    if not ok:
        raise NotKag(f"{where}: {what}")


def _int(value: Any, bits: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**bits


def _str(value: Any) -> bool:
    return isinstance(value, str)


def _name(value: Any) -> bool:  # ComponentName: non-empty, [a-z0-9-] only
    return (
        _str(value)
        and value != ""
        and all(c in "abcdefghijklmnopqrstuvwxyz0123456789-" for c in value)
    )


def _object(value: Any, where: str, required: tuple[str, ...]) -> dict[str, Any]:
    _need(isinstance(value, dict), where, f"expected an object, found {value!r:.60}")
    for key in required:
        _need(key in value, where, f"missing field `{key}`")
    return value


def _tagged(value: Any, where: str, tags: tuple[str, ...]) -> tuple[str, Any]:
    """serde's externally tagged enum: an object with exactly one key, the variant."""
    _object(value, where, ())
    _need(
        len(value) == 1 and next(iter(value)) in tags,
        where,
        f"expected exactly one of {tags}, found keys {sorted(value)}",
    )
    return next(iter(value.items()))


def _duration(value: Any, where: str) -> None:
    _object(value, where, ("secs", "nanos"))
    _need(_int(value["secs"], 64) and _int(value["nanos"], 32), where, "secs u64, nanos u32")
    _need(set(value) == {"secs", "nanos"}, where, "a Duration has only secs and nanos")


def _generation(value: Any, where: str) -> None:
    _object(value, where, ("provider", "model", "temperature"))
    _need(_name(value["provider"]), f"{where}.provider", "a component name")
    _need(_str(value["model"]), f"{where}.model", "a string")
    temperature = value["temperature"]
    _need(
        isinstance(temperature, int | float) and not isinstance(temperature, bool),
        f"{where}.temperature",
        "an f64",
    )
    _need(
        value.get("tokens") is None or _int(value["tokens"], 64), f"{where}.tokens", "null or a u64"
    )
    augmented = value.get("augmented_generation")
    if augmented is not None:
        _object(augmented, f"{where}.augmented_generation", ("retriever", "database"))
        _need(
            _name(augmented["retriever"]) and _name(augmented["database"]),
            f"{where}.augmented_generation",
            "component names",
        )


def _retrieval(value: Any, where: str) -> None:
    if value is None:
        return
    _object(value, where, ("result", "stats"))
    _need(_str(value["result"]), f"{where}.result", "a string")
    _, embedder = _tagged(value["stats"], f"{where}.stats", ("embedder",))
    _object(embedder, f"{where}.stats.embedder", ("embedding", "database", "time"))
    embedding = _object(embedder["embedding"], f"{where}.embedding", ("document", "vec"))
    _need(
        _str(embedding["document"]) and isinstance(embedding["vec"], list),
        where,
        "an embedding is {document: str, vec: [f64]}",
    )
    _duration(embedder["time"], f"{where}.stats.embedder.time")
    _, neo4j = _tagged(embedder["database"], f"{where}.database", ("neo4j",))
    _object(neo4j, f"{where}.database.neo4j", ("vertices", "relationships", "properties", "time"))
    for key in ("vertices", "relationships", "properties"):
        _need(_int(neo4j[key], 64), f"{where}.database.neo4j.{key}", "a usize")
    _duration(neo4j["time"], f"{where}.database.neo4j.time")


def kag_reads(data: Any) -> tuple[str, Any]:
    """What `serde_json::from_slice::<benchmark::result::Result<generation::config::Output>>`
    does with `data`: the variant and its value, or NotKag naming the first refusal."""
    variant, value = _tagged(data, "$", ("ok", "error"))
    if variant == "error":
        _need(_str(value), "$.error", "a string")
        return variant, value
    _object(value, "$.ok", ("result", "stats"))
    _need(_str(value["result"]), "$.ok.result", "a string")
    stats = _object(value["stats"], "$.ok.stats", ("prompt", "config", "time"))
    _need(_str(stats["prompt"]), "$.ok.stats.prompt", "a string")
    _retrieval(stats.get("retrieval"), "$.ok.stats.retrieval")
    _generation(stats["config"], "$.ok.stats.config")
    _duration(stats["time"], "$.ok.stats.time")
    return variant, value


def test_the_hand_written_kag_tree_passes_the_check_and_the_check_can_fail() -> None:
    # NOTES.json is no setup's file (not a component name): kag ignores it.
    files = sorted(p for p in (FIXTURES / "results").rglob("*.json") if _name(p.stem))
    assert len(files) == 10
    for path in files:
        kag_reads(json.loads(path.read_text(encoding="utf-8")))
    good = json.loads((FIXTURES / "results" / "mcq-form" / "0" / "qwen-kag.json").read_text())
    broken: list[Any] = [
        {**good, "lasagna": {}},  # a key beside the tag
        {"ok": {**good["ok"], "stats": {**good["ok"]["stats"], "time": 1.5}}},
        {
            "ok": {
                **good["ok"],
                "stats": {k: v for k, v in good["ok"]["stats"].items() if k != "prompt"},
            }
        },
        {
            "ok": {
                **good["ok"],
                "stats": {
                    **good["ok"]["stats"],
                    "config": {**good["ok"]["stats"]["config"], "provider": "Ollama"},
                },
            }
        },
        {"error": {"message": "x"}},
    ]
    for value in broken:
        with pytest.raises(NotKag):
            kag_reads(value)


CONFIG = """\
[providers.fake]
api = "openai"
base_url = "{base_url}"

[databases.town]
documents = "docs"
chunk_words = 50

[retrievers.top1]
type = "bm25"
top_k = 1
"""

SETUPS = """\
[rag-town]
provider = "fake"
model = "m-rag"
temperature = 0.2
tokens = 64
system_prompt = '''Passages:
{{ RETRIEVAL | default("") }}
Question: {{INPUT}}
{{ CHOICE | default("") }}'''
retriever = "top1"
database = "town"

[plain]
provider = "fake"
model = "m-plain"
system_prompt = "Answer with the option id. {{INPUT}}\\n{{ CHOICE | default('') }}"
"""

DATASETS = {
    "town": {
        "lighthouse": {
            "input": "When was the lighthouse built?",
            "output": {"type": "MCQ", "options": {"a": "1852", "b": "1901"}, "answer": "a"},
        },
        "ferry": {"input": "How often does the ferry sail? (é)"},
    },
}


def test_a_sweeps_result_files_are_what_kag_stats_reads_field_by_field(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "harbour.md").write_text(
        "The lighthouse of Port Elvar was built in 1852 by the harbour board. " * 8
    )
    (tmp_path / "datasets.json").write_text(json.dumps(DATASETS))
    (tmp_path / "setups.toml").write_text(SETUPS)
    with FakeLLMServer(reply=lambda request: " a ") as server:
        (tmp_path / "config.toml").write_text(CONFIG.format(base_url=server.base_url))
        result = CliRunner().invoke(
            app,
            [
                "benchmark",
                "sweep",
                "-d",
                str(tmp_path / "datasets.json"),
                "-b",
                str(tmp_path / "setups.toml"),
                "-c",
                str(tmp_path / "config.toml"),
                "-o",
                str(tmp_path / "out"),
            ],
        )
        sent = {
            (r["model"], "ferry" if "ferry" in json.dumps(r) else "lighthouse"): r
            for r in server.requests
        }
    assert result.exit_code == 0, result.output
    for (model, question), request in sent.items():
        setup = "rag-town" if model == "m-rag" else "plain"
        data = json.loads((tmp_path / "out" / "town" / question / f"{setup}.json").read_text())
        variant, value = kag_reads(data)
        assert variant == "ok"
        stats = value["stats"]
        # prompt: what the model was sent, whole
        assert stats["prompt"] == "\n\n".join(m["content"] for m in request["messages"])
        assert stats["retrieval"] is None  # kag's only shape is an embedder over Neo4j
        if setup == "rag-town":
            assert stats["config"] == {
                "augmented_generation": {"retriever": "top1", "database": "town"},
                "provider": "fake",
                "model": "m-rag",
                "temperature": 0.2,
                "tokens": 64,
            }
            assert stats["retrieval_time_s"] is not None
        else:
            assert stats["config"] == {
                "augmented_generation": None,
                "provider": "fake",
                "model": "m-plain",
                "temperature": 0.0,
                "tokens": None,
            }
        # time: the whole generation, retrieval included, as serde's Duration
        total = stats["time"]["secs"] + stats["time"]["nanos"] / 1e9
        assert total >= stats["generation_time_s"] + (stats["retrieval_time_s"] or 0.0) - 1e-6
        assert total < 60
