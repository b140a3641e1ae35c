"""Public benchmarks as data sources of the engine: adapters, the registry, seeded sampling.

    from lasagna_cli.engine.benchmarks import load_benchmark, sample_benchmark, write_sample
    bench = load_benchmark("locomo", "data/locomo")          # nothing is downloaded
    sample = sample_benchmark(bench, sample_size=100, seed=42)
    write_sample(sample, bench, "data/locomo", "runs/locomo-sample")

An adapter reads one benchmark's own raw files into documents and questions (`load`) and
writes a subset of them in the same format (`write_subset`). Seven are built in (LoCoMo,
SyllabusQA, Qasper, FinanceBench, SQuAD v2.0, BEIR, Chroma's chunking evaluation); add one
by subclassing `BenchmarkAdapter` (or `BaseAdapter`, with OpenViking's two reading hooks)
and passing an instance to `register_benchmark`, or from an installed
package through the `lasagna.benchmarks` entry-point group (an adapter class or instance).
"""

from lasagna_cli.engine._errors import EngineError, EngineUsageError
from lasagna_cli.engine.benchmarks._base import BenchmarkAdapter
from lasagna_cli.engine.benchmarks._model import (
    MISSING_ANSWER,
    Adapter,
    BenchmarkDocument,
    BenchmarkFileError,
    BenchmarkQuestion,
    BenchmarkSpec,
    LoadedBenchmark,
    ReadOptions,
    Subset,
)
from lasagna_cli.engine.benchmarks._prepare import (
    OFFICIAL,
    check_prepare,
    check_prepared,
    dataset_key,
    prepare_benchmarks,
    prepared_line,
)
from lasagna_cli.engine.benchmarks._registry import (
    ENTRY_POINT_GROUP,
    UnknownBenchmarkError,
    benchmark_names,
    get_benchmark_spec,
    is_benchmark,
    list_benchmarks,
    load_benchmark,
    register_benchmark,
)
from lasagna_cli.engine.benchmarks._sampling import (
    SAMPLE_MODES,
    Sample,
    SamplingUsageError,
    check_sample_output,
    sample_benchmark,
    write_sample,
)
from lasagna_cli.engine.benchmarks._simple import BaseAdapter

__all__ = [
    "ENTRY_POINT_GROUP",
    "MISSING_ANSWER",
    "OFFICIAL",
    "SAMPLE_MODES",
    "Adapter",
    "BaseAdapter",
    "BenchmarkAdapter",
    "BenchmarkDocument",
    "BenchmarkFileError",
    "BenchmarkQuestion",
    "BenchmarkSpec",
    "EngineError",
    "EngineUsageError",
    "LoadedBenchmark",
    "ReadOptions",
    "Sample",
    "SamplingUsageError",
    "Subset",
    "UnknownBenchmarkError",
    "benchmark_names",
    "check_prepare",
    "check_prepared",
    "check_sample_output",
    "dataset_key",
    "get_benchmark_spec",
    "is_benchmark",
    "list_benchmarks",
    "load_benchmark",
    "prepare_benchmarks",
    "prepared_line",
    "register_benchmark",
    "sample_benchmark",
    "write_sample",
]
