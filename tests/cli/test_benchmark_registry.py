"""Adding a benchmark: `register_benchmark(adapter)` and the `lasagna.benchmarks` entry points;
the exit codes the engine's errors get; and the engine's benchmarks staying a library."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import lasagna_cli.engine.benchmarks as benchmarks
from lasagna_cli._app import app
from lasagna_cli.engine.benchmarks import (
    ENTRY_POINT_GROUP,
    BenchmarkAdapter,
    EngineError,
    EngineUsageError,
    benchmark_names,
    get_benchmark_spec,
    is_benchmark,
    list_benchmarks,
    load_benchmark,
    register_benchmark,
    sample_benchmark,
    write_sample,
)

ROOT = Path(__file__).resolve().parents[2]
LASAGNA = Path(sys.executable).with_name("lasagna")
FIXTURES = ROOT / "tests" / "synth" / "fixtures"
ENGINE = ROOT / "packages" / "cli" / "src" / "lasagna_cli" / "engine"
BUILT_IN = ("locomo", "syllabusqa", "qasper", "financebench", "squad", "beir", "chroma-chunking")

# A third-party adapter, written against the public API only: one JSON file, toy.json.
TOY_SOURCE = """
import json

from lasagna_cli.engine.benchmarks import (
    BenchmarkAdapter,
    BenchmarkDocument,
    BenchmarkQuestion,
    BenchmarkSpec,
)

SPEC = BenchmarkSpec(
    name="toy",
    title="Toy QA",
    description="Pasta facts in two documents.",
    licence="CC0 1.0",
    citation="The toy benchmark of lasagna's tests",
    homepage="https://example.invalid/toy",
    splits=("test",),
    default_split="test",
    categories={"fact": "a fact one document states"},
    instructions={"fact": "Answer with the fact alone."},
    default_instruction="Answer briefly.",
    rubric="binary",
    files_help="Write toy.json and pass its folder as --data-dir.",
)


class ToyAdapter(BenchmarkAdapter):
    spec = SPEC

    def load(self, source, split, options):
        path = self.find(source, split, ["toy.json"])
        raw = json.loads(path.read_text(encoding="utf-8"))
        documents = [
            BenchmarkDocument(d["id"], d["text"] if options.with_text else "")
            for d in raw["documents"]
        ]
        questions = [
            BenchmarkQuestion(
                q["id"], q["question"], (q["answer"],), (q["evidence"],), "fact", (q["doc"],)
            )
            for q in raw["questions"]
        ]
        return self.loaded(split, documents, questions, [path])

    def write_subset(self, source, split, out_dir, keep):
        raw = json.loads(self.find(source, split, ["toy.json"]).read_text(encoding="utf-8"))
        subset = {
            "documents": [d for d in raw["documents"] if d["id"] in keep.doc_ids],
            "questions": [q for q in raw["questions"] if q["id"] in keep.question_ids],
        }
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "toy.json").write_text(json.dumps(subset), encoding="utf-8")
        return [out_dir / "toy.json"]


toy = ToyAdapter()
"""

TOY_DATA = {
    "documents": [
        {
            "id": "lasagna",
            "text": "Lasagna is baked in layers of pasta sheets, ragu and bechamel sauce. "
            "The dish comes from Emilia-Romagna, where cooks use green spinach sheets. "
            "It rests for ten minutes after baking so that the layers set before serving.",
        },
        {
            "id": "carbonara",
            "text": "Carbonara is a Roman pasta dish made with eggs, pecorino romano cheese, "
            "guanciale and black pepper. No cream goes into the traditional recipe, and "
            "the eggs thicken into a sauce from the heat of the freshly drained pasta.",
        },
    ],
    "questions": [
        {
            "id": "q1",
            "question": "Where does lasagna come from?",
            "answer": "Emilia-Romagna",
            "evidence": "The dish comes from Emilia-Romagna",
            "doc": "lasagna",
        },
        {
            "id": "q2",
            "question": "Which cheese goes into carbonara?",
            "answer": "pecorino romano",
            "evidence": "pecorino romano cheese",
            "doc": "carbonara",
        },
        {
            "id": "q3",
            "question": "How long does lasagna rest after baking?",
            "answer": "ten minutes",
            "evidence": "It rests for ten minutes after baking",
            "doc": "lasagna",
        },
    ],
}


def toy_module(name: str = "toy_bench") -> types.ModuleType:
    module = types.ModuleType(name)
    exec(TOY_SOURCE, module.__dict__)
    return module


def toy_data(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "toy.json").write_text(json.dumps(TOY_DATA), encoding="utf-8")
    return folder


def invoke(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


@dataclass
class FakeEntryPoints:
    """What `importlib.metadata.entry_points` gives while the test runs, and its calls."""

    found: list[metadata.EntryPoint] = field(default_factory=list)
    calls: int = 0

    def add(self, name: str, value: str, group: str = ENTRY_POINT_GROUP) -> None:
        self.found.append(metadata.EntryPoint(name=name, value=value, group=group))

    def __call__(self, **selection: Any) -> list[metadata.EntryPoint]:
        self.calls += 1
        return [ep for ep in self.found if ep.group == selection.get("group")]


@pytest.fixture
def entry_points(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeEntryPoints]:
    """A fresh registry (the built-in benchmarks, entry points not yet looked at) for the
    test alone, its entry points faked; the toy adapter importable as `toy_bench`."""
    from lasagna_cli.engine.benchmarks import _registry

    monkeypatch.setattr(_registry, "_REGISTRY", _registry._Registry(_registry._BUILT_IN))
    fake = FakeEntryPoints()
    monkeypatch.setattr(metadata, "entry_points", fake)
    monkeypatch.setitem(sys.modules, "toy_bench", toy_module())
    yield fake


# ----------------------------------------------------------------- register_benchmark


def test_a_registered_adapter_is_listed_loaded_sampled_and_written(
    entry_points: FakeEntryPoints, tmp_path: Path
) -> None:
    toy = sys.modules["toy_bench"].toy
    register_benchmark(toy)
    assert benchmark_names() == (*BUILT_IN, "toy")
    assert is_benchmark("toy") and get_benchmark_spec("toy") is toy.spec
    assert list_benchmarks()[-1].title == "Toy QA"
    bench = load_benchmark("toy", toy_data(tmp_path / "data"))
    assert [q.id for q in bench.questions] == ["q1", "q2", "q3"]
    assert bench.document("carbonara").text.startswith("Carbonara")
    sample = sample_benchmark(bench, num_docs=1, seed=42)
    written = write_sample(sample, bench, tmp_path / "data", tmp_path / "sample")
    assert [p.name for p in written] == ["toy.json", "sampling_metadata.json"]
    again = load_benchmark("toy", tmp_path / "sample")
    assert tuple(q.id for q in again.questions) == sample.question_ids
    assert tuple(d.id for d in again.documents) == sample.doc_ids


def test_a_registered_benchmark_runs_in_the_cli(
    entry_points: FakeEntryPoints, tmp_path: Path
) -> None:
    register_benchmark(sys.modules["toy_bench"].toy)
    listed = invoke("benchmark", "list")
    assert listed.exit_code == 0, listed.output
    assert any(line.startswith("toy ") and "CC0 1.0" in line for line in listed.stdout.split("\n"))
    data = str(toy_data(tmp_path / "data"))
    info = invoke("benchmark", "info", "toy", "--data-dir", data)
    assert info.exit_code == 0, info.output
    assert "in --data-dir (split test): 2 documents, 3 questions" in info.stdout


def test_a_name_registered_twice_is_refused_unless_replaced(entry_points: FakeEntryPoints) -> None:
    toy = sys.modules["toy_bench"].ToyAdapter
    register_benchmark(toy())
    with pytest.raises(EngineUsageError, match="'toy' is already registered; pass replace=True"):
        register_benchmark(toy())
    with pytest.raises(EngineUsageError, match="'locomo' is already registered"):
        register_benchmark(_renamed(toy(), "locomo"))
    assert get_benchmark_spec("locomo").title == "LoCoMo"
    replacement = _renamed(toy(), "locomo")
    register_benchmark(replacement, replace=True)
    assert get_benchmark_spec("locomo") is replacement.spec
    assert benchmark_names() == (*BUILT_IN, "toy")  # replaced in place


def _renamed(adapter: BenchmarkAdapter, name: str) -> BenchmarkAdapter:
    from dataclasses import replace

    adapter.spec = replace(adapter.spec, name=name)
    return adapter


def test_what_is_not_an_adapter_is_refused_with_what_it_lacks(
    entry_points: FakeEntryPoints,
) -> None:
    with pytest.raises(EngineUsageError, match="found object without spec: BenchmarkSpec, load"):
        register_benchmark(object())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="abstract"):
        type("Half", (BenchmarkAdapter,), {"spec": get_benchmark_spec("locomo")})()
    with pytest.raises(EngineUsageError, match="lowercase letters"):
        register_benchmark(_renamed(sys.modules["toy_bench"].ToyAdapter(), "Toy Bench"))
    assert benchmark_names() == BUILT_IN


# ------------------------------------------------------------------------ entry points


def test_entry_points_are_loaded_lazily_and_once(entry_points: FakeEntryPoints) -> None:
    entry_points.add("toy", "toy_bench:ToyAdapter")  # a class: instantiated
    entry_points.add("ignored", "toy_bench:toy", group="another.group")
    assert entry_points.calls == 0
    assert benchmark_names() == (*BUILT_IN, "toy")
    assert is_benchmark("toy") and not is_benchmark("ignored")
    get_benchmark_spec("toy")
    list_benchmarks()
    assert entry_points.calls == 1


def test_an_entry_point_may_give_an_instance(entry_points: FakeEntryPoints) -> None:
    entry_points.add("toy", "toy_bench:toy")
    assert benchmarks.get_benchmark_spec("toy") is sys.modules["toy_bench"].toy.spec


@pytest.mark.parametrize(
    ("value", "raised"),
    [
        (
            "toy_bench_missing:ToyAdapter",
            "ModuleNotFoundError: No module named 'toy_bench_missing'",
        ),
        ("toy_bench:Missing", "AttributeError"),
        ("toy_bench:SPEC", "EngineUsageError: expected a benchmark adapter"),
    ],
)
def test_a_broken_entry_point_names_itself_and_what_it_raised(
    entry_points: FakeEntryPoints, value: str, raised: str
) -> None:
    entry_points.add("toy", "toy_bench:toy")
    entry_points.add("broken", value)
    for _ in range(2):  # nothing of the failed discovery is kept: the same error again
        with pytest.raises(EngineError) as info:
            benchmark_names()
        assert not isinstance(info.value, EngineUsageError)
        message = str(info.value)
        assert f"entry point 'broken' ({value}) in group lasagna.benchmarks is broken" in message
        assert raised in message
        assert "fix or uninstall the package that provides it" in message


def test_an_entry_point_may_not_take_a_registered_name(entry_points: FakeEntryPoints) -> None:
    sys.modules["toy_bench"].locomo = _renamed(sys.modules["toy_bench"].ToyAdapter(), "locomo")
    entry_points.add("mine", "toy_bench:locomo")
    with pytest.raises(EngineError, match="registers 'locomo', as a benchmark already registered"):
        is_benchmark("locomo")
    entry_points.found[:] = []
    entry_points.add("one", "toy_bench:toy")
    entry_points.add("two", "toy_bench:ToyAdapter")
    with pytest.raises(EngineError, match=r"'two' .* registers 'toy', as entry point 'one'"):
        is_benchmark("toy")


def test_a_broken_entry_point_is_one_line_and_exit_1_in_the_cli(
    entry_points: FakeEntryPoints,
) -> None:
    entry_points.add("broken", "toy_bench_missing:Adapter")
    result = invoke("benchmark", "list")
    assert result.exit_code == 1
    assert result.output.startswith("error: benchmark entry point 'broken'")
    assert result.output.count("\n") == 1


def _dist(folder: Path, name: str, entry_point: str) -> Path:
    """An installed distribution as importlib.metadata finds it: a dist-info on sys.path."""
    info = folder / f"{name}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{entry_point}\n")
    (folder / f"{name}.py").write_text(TOY_SOURCE, encoding="utf-8")
    return folder


def _lasagna(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin", "LASAGNA_CACHE_DIR": str(site)}
    return subprocess.run(
        [str(LASAGNA), *args], capture_output=True, text=True, env=env, timeout=120
    )


def test_an_installed_package_adds_a_benchmark_to_every_command(tmp_path: Path) -> None:
    site = _dist(tmp_path / "site", "toy_bench", "toy = toy_bench:ToyAdapter")
    data = str(toy_data(tmp_path / "data"))
    listed = _lasagna(site, "benchmark", "list")
    assert listed.returncode == 0, listed.stderr
    assert [line.split()[0] for line in listed.stdout.splitlines()[1:9]] == [*BUILT_IN, "toy"]
    run = _lasagna(site, "benchmark", "run", "toy", "--data-dir", data, "--step", "gen",
                   "-o", str(tmp_path / "run"))  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "gen: 3 questions (0 reused)" in run.stdout
    assert "evidence recall@5 1.0000 over 3 questions" in run.stdout


def test_an_installed_broken_package_is_one_line_and_exit_1(tmp_path: Path) -> None:
    site = _dist(tmp_path / "site", "toy_bench", "broken = toy_bench_gone:ToyAdapter")
    result = _lasagna(site, "benchmark", "info", "locomo")
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "error: benchmark entry point 'broken' (toy_bench_gone:ToyAdapter) in group "
        "lasagna.benchmarks is broken: ModuleNotFoundError: No module named 'toy_bench_gone'; "
        "fix or uninstall the package that provides it"
    ]


# -------------------------------------------------------------------------- exit codes


def test_engine_usage_errors_exit_2_and_bad_data_exits_1(tmp_path: Path) -> None:
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "locomo10.json").write_text("[1, 2")
    beir = ("sample", "beir", "--data-dir", str(FIXTURES / "beir"))  # SamplingUsageError
    run_to = ("--step", "gen", "-o", str(tmp_path / "run"))
    cases = [
        (("info", "locomoo"), 2, "did you mean 'locomo'"),  # UnknownBenchmarkError
        (("info", "locomo", "--data-dir", str(tmp_path / "none")), 2, "does not exist"),
        (("info", "locomo", "--data-dir", str(tmp_path / "bad")), 1, "is not valid JSON"),
        (("info", "locomo", "--data-dir", str(FIXTURES / "locomo"), "--split", "x"), 2, "no split"),
        ((*beir, "--num-docs", "1", "-o", str(tmp_path / "s")), 2, "use --sample-size N"),
        (("run", "locomo", "--data-dir", str(tmp_path / "bad"), *run_to), 1, "JSON"),
    ]
    for args, code, message in cases:
        result = invoke("benchmark", *args)
        assert (result.exit_code, result.output.count("\n")) == (code, 1), (args, result.output)
        assert result.output.startswith("error: ") and message in result.output, args


def test_a_sweep_entry_maps_the_engine_errors_too(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "locomo10.json").write_text('{"conversations": 3}')
    cases = (("empty", 2, "pass its folder (or the file) as `data_dir:`"), ("bad", 1, "sample_id"))
    for folder, code, message in cases:
        sweep = tmp_path / f"{folder}.yaml"
        sweep.write_text(
            f"benchmarks:\n  - name: locomo\n    data_dir: {folder}\n"
            "setups:\n  - name: a\n    retriever: {top_k: 1}\ntracks: [retrieval]\n"
        )
        result = invoke("benchmark", "run", str(sweep), "-o", str(tmp_path / f"out-{folder}"))
        assert (result.exit_code, result.output.count("\n")) == (code, 1), result.output
        assert result.output.startswith(f"error: locomo (data_dir: {folder}): locomo: ")
        assert message in result.output


# ---------------------------------------------------------------------------- layering


def _modules() -> list[Path]:
    return [ENGINE / "_errors.py", *sorted((ENGINE / "benchmarks").glob("*.py"))]


def test_the_engines_benchmarks_are_a_library_layer() -> None:
    # No typer, no rich, no environment variables, no exit codes; of the other lasagna
    # packages, public names only (and nothing of the CLI outside the engine).
    found = []
    for path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            modules: list[str] = []
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                modules = [node.module]
            for module in modules:
                top, _, rest = module.partition(".")
                if top in ("typer", "rich", "click"):
                    found.append((path.name, module))
                if top in ("lasagna_synth", "lasagna_judge", "lasagna_metrics") and rest:
                    found.append((path.name, module))
                if top == "lasagna_cli" and not module.startswith("lasagna_cli.engine"):
                    found.append((path.name, module))
            if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "exit"):
                found.append((path.name, node.attr))
            if isinstance(node, ast.Name) and node.id in ("exit_code", "SystemExit"):
                found.append((path.name, node.id))
    assert found == []
    assert len(_modules()) == 18  # with _simple.py, _prepare.py and OpenViking's draws
