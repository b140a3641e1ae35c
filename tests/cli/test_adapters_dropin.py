"""A dataset of your own, the OpenViking way: examples/adapters/harbour_faq.py (a
`BaseAdapter` subclass) found by `module` + `class_name` in OpenViking's config, or by an
entry point, without editing lasagna; sampled and run like a built-in benchmark."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_cli.engine.benchmarks import ENTRY_POINT_GROUP
from lasagna_judge.testing import FakeLLMServer

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "adapters"
DATA = "examples/adapters/harbour-faq"


@dataclass
class FakeEntryPoints:
    found: list[metadata.EntryPoint] = field(default_factory=list)

    def __call__(self, **selection: Any) -> list[metadata.EntryPoint]:
        return [ep for ep in self.found if ep.group == selection.get("group")]


@pytest.fixture
def entry_points(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeEntryPoints]:
    """A fresh registry for the test alone, its entry points faked; run from the repository
    root, as the example says."""
    from lasagna_cli.engine.benchmarks import _registry

    monkeypatch.setattr(_registry, "_REGISTRY", _registry._Registry(_registry._BUILT_IN))
    fake = FakeEntryPoints()
    monkeypatch.setattr(metadata, "entry_points", fake)
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("LASAGNA_CACHE_DIR", str(tmp_path / "cache"))
    yield fake


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, ["benchmark", *args], env={"OPENAI_API_KEY": ""})


def example_config(tmp_path: Path, extra: str = "") -> Path:
    """The example config, writing to tmp_path rather than the repository's runs/."""
    text = (EXAMPLE / "harbour_faq_config.yaml").read_text()
    text = text.replace('output_dir: "runs/openviking', f'output_dir: "{tmp_path}/runs')
    config = tmp_path / "harbour_faq_config.yaml"
    config.write_text(text + extra)
    return config


def test_the_example_adapter_is_found_by_module_and_class_in_the_config(
    entry_points: FakeEntryPoints, tmp_path: Path
) -> None:
    result = invoke("openviking", str(example_config(tmp_path)), "--step", "gen")
    assert result.exit_code == 0, result.output
    assert "warning" not in result.stderr
    out = tmp_path / "runs" / "HarbourFAQ" / "experiment_test_top_2"
    answers = json.loads((out / "generated_answers.json").read_text())["results"]
    assert [a["question_id"] for a in answers] == [f"faq-{i}" for i in range(1, 6)]
    assert {a["category"] for a in answers} == {"fact", "reasoning"}
    assert all(a["metrics"]["Recall"] == 1.0 for a in answers if a["evidence"])
    report = json.loads((out / "benchmark_metrics_report.json").read_text())
    assert report["Dataset"] == "HarbourFAQ" and report["lasagna"]["benchmark"] == "harbour-faq"
    assert sorted(p.name for p in (out / "docs").iterdir()) == ["ferry_doc.md", "library_doc.md"]


def test_the_example_adapter_answers_and_is_judged_against_the_fake_server(
    entry_points: FakeEntryPoints, tmp_path: Path
) -> None:
    prompts: list[str] = []

    def reply(request: dict[str, Any]) -> str:
        if "tools" in request or "response_format" in request:
            return json.dumps({"reasoning": "same", "score": 4})
        prompts.append(str(request["messages"][-1]["content"]))
        return "forty minutes"

    with FakeLLMServer(reply=reply) as fake:
        llm = f'llm:\n  model: "fake-model"\n  base_url: "{fake.base_url}"\n  api_key: "k"\n'
        result = invoke("openviking", str(example_config(tmp_path, llm)))
    assert result.exit_code == 0, result.output
    assert any("Answer with the exact words of the context" in p for p in prompts)
    out = tmp_path / "runs" / "HarbourFAQ" / "experiment_test_top_2"
    graded = json.loads((out / "qa_eval_detailed_results.json").read_text())["results"]
    assert {g["llm_evaluation"]["prompt_used"] for g in graded} <= {
        "Generic_0-4",
        "Heuristic_Refusal_Check",
    }


def test_the_example_adapter_is_found_through_an_entry_point(
    entry_points: FakeEntryPoints, tmp_path: Path
) -> None:
    entry_points.found.append(
        metadata.EntryPoint(
            name="harbour-faq",
            value="examples.adapters.harbour_faq:HarbourFaqAdapter",
            group=ENTRY_POINT_GROUP,
        )
    )
    listed = invoke("list")
    assert listed.exit_code == 0 and "harbour-faq" in listed.stdout
    sample = tmp_path / "sample"
    sampled = invoke(
        "sample", "harbour-faq", "--data-dir", DATA, "--num-docs", "1", "-o", str(sample)
    )
    assert sampled.exit_code == 0, sampled.output
    assert (sample / "documents.jsonl").is_file() and (sample / "questions.jsonl").is_file()
    out = tmp_path / "run"
    result = invoke(
        "run", "harbour-faq", "--data-dir", str(sample), "--step", "gen", "-o", str(out)
    )
    assert result.exit_code == 0, result.output
    answers = json.loads((out / "generated_answers.json").read_text())["results"]
    documents = {a["sample_id"] for a in answers}
    assert len(documents) == 1 and len(answers) in (2, 3)  # one document's questions


def test_a_class_that_is_not_an_adapter_is_one_line(
    entry_points: FakeEntryPoints, tmp_path: Path
) -> None:
    config = example_config(tmp_path)
    config.write_text(config.read_text().replace('"HarbourFaqAdapter"', '"Path"'))
    config.write_text(config.read_text().replace("examples.adapters.harbour_faq", "pathlib"))
    result = invoke("openviking", str(config), "--step", "gen")
    assert result.exit_code == 1, result.output
    assert "expected a benchmark adapter" in result.stderr and "Traceback" not in result.output
    missing = config.read_text().replace('"pathlib"', '"no_such_adapters"')
    config.write_text(missing)
    gone = invoke("openviking", str(config), "--step", "gen")
    assert gone.exit_code == 2 and "cannot find module no_such_adapters" in gone.stderr
