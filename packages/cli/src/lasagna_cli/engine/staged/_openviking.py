"""OpenViking's RAG-benchmark config.yaml, read as written, as the staged pipeline's options.

    project_name: "RAG_Benchmark"
    dataset_name: "Locomo"
    adapter: {module: "src.adapters.locomo_adapter", class_name: "LocomoAdapter"}
    execution: {max_workers: 8, ingest_workers: 8, retrieval_topk: 5, max_queries: 20,
                skip_ingestion: false, ingest_mode: "directory", retrieval_instruction: ""}
    paths:
      dataset_path: "datasets/{dataset_name}/locomo10.json"
      doc_output_dir: "ov_storage/{dataset_name}/{dataset_name}_processed_docs"
      output_dir: "Output/{dataset_name}/experiment_test_top_{retrieval_topk}"
      log_file: "Output/{dataset_name}/experiment_test_top_{retrieval_topk}/benchmark.log"
    llm: {model: "...", temperature: 0, base_url: "https://...", api_key: "..."}
    # or api_key_env_var: "ARK_API_KEY"

lasagna's one key of its own, `prompts: "prompts/{dataset_name}.yaml"`, names a file of
overrides for that dataset (see `load_prompts`), recorded in the report and part of the
prompts' sha256, so answers and grades made with other prompts are never compared as equal.

`{dataset_name}` and `{retrieval_topk}` are filled in every path; relative paths are read
from the folder run.py reads them from, its own (see `project_root`). The four built-in
adapters are named by OpenViking's class names; any other `module` + `class_name` (a
`BaseAdapter` subclass) is imported from that folder, the working directory or the
installed packages, and registered. A key lasagna does not use is a warning naming it. The
LLM answers and judges, as in OpenViking; its key never reaches a file.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lasagna_cli.engine._errors import EngineError, EngineUsageError, did_you_mean
from lasagna_cli.engine.staged._prompts_file import Prompts, load_prompts

if TYPE_CHECKING:
    from lasagna_cli.engine.config import ModelSpec
    from lasagna_cli.engine.staged._options import PipelineOptions
    from lasagna_judge import LLM, Proxies

#: OpenViking's adapter classes -> lasagna's benchmark names.
ADAPTERS = {
    "LocomoAdapter": "locomo",
    "SyllabusQAAdapter": "syllabusqa",
    "QasperAdapter": "qasper",
    "FinanceBenchAdapter": "financebench",
}
#: How OpenViking spells each dataset (its `dataset_name` and its report's "Dataset").
SPELLING = {
    "locomo": "Locomo",
    "syllabusqa": "SyllabusQA",
    "qasper": "Qasper",
    "financebench": "FinanceBench",
}
DEFAULT_OUTPUT = "Output/{dataset_name}/experiment_test_top_{retrieval_topk}"
LOG_FILE = "benchmark.log"

_KEYS: dict[str, tuple[str, ...]] = {
    "": ("project_name", "dataset_name", "adapter", "execution", "paths", "llm", "prompts"),
    "adapter": ("module", "class_name"),
    "execution": (
        "max_workers",
        "ingest_workers",
        "retrieval_topk",
        "max_queries",
        "skip_ingestion",
        "ingest_mode",
        "retrieval_instruction",
    ),
    "paths": ("dataset_path", "doc_output_dir", "output_dir", "log_file"),
    "llm": ("model", "temperature", "base_url", "api_key", "api_key_env_var"),
}


def dataset_spelling(name: str) -> str:
    """The report's "Dataset": OpenViking's spelling of a benchmark, else its name."""
    return SPELLING.get(name, name)


@dataclass(frozen=True)
class LLMSettings:
    model: str
    temperature: float | None = None
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    api_key_env_var: str | None = None


@dataclass(frozen=True)
class OpenVikingConfig:
    """What the file says, in the pipeline's terms."""

    path: Path
    project_name: str | None
    benchmark: str
    dataset_name: str
    dataset_path: Path
    output_dir: Path
    log_file: Path
    doc_output_dir: Path | None
    top_k: int
    max_workers: int
    ingest_workers: int
    max_queries: int | None
    skip_ingestion: bool
    ingest_mode: str
    retrieval_instruction: str
    llm: LLMSettings | None
    warnings: tuple[str, ...] = ()
    prompts: Prompts | None = None

    def api_key(self, server: str | None, read: Callable[[str], str | None]) -> str | None:
        """llm.api_key_env_var's variable (its value as `read` finds it) when it names one,
        else llm.api_key; with neither, OPENAI_API_KEY only when the calls go to OpenAI
        itself (no `server`), so that key never reaches another server. Never recorded."""
        llm = self.llm
        assert llm is not None
        if llm.api_key_env_var:
            value = read(llm.api_key_env_var)
            if value is None:
                raise EngineUsageError(
                    f"{self.path}: llm.api_key_env_var names ${llm.api_key_env_var}, which is "
                    "not set; export it, or give llm.api_key"
                )
            return value
        if llm.api_key:
            return llm.api_key
        return read("OPENAI_API_KEY") if server is None else None

    def models(
        self,
        base_url: str | None,
        limits: tuple[float | None, float | None],
        *,
        read: Callable[[str], str | None],
        cache: bool | Path,
        proxies: Callable[[], Proxies | None],
    ) -> Callable[[ModelSpec, str], LLM]:
        """How the pipeline gets its models: llm.model, built now (it answers and judges, as
        in OpenViking) at `base_url` (--base-url) or llm.base_url, with `limits` (--rpm,
        --tpm), its key as `read` finds it (`api_key`), the response `cache` and the
        proxies the command reads (`proxies`); any other model asked for (the answers were
        generated by an earlier llm.model) is refused."""
        from lasagna_cli.engine.run import shared
        from lasagna_judge import JudgeError, make_llm

        llms: dict[str, LLM] = {}
        if self.llm is not None and self.generator is not None:
            server = base_url or self.llm.base_url
            try:
                llms[self.generator] = make_llm(
                    self.generator,
                    base_url=server,
                    api_key=self.api_key(server, read),
                    cache=cache,
                    concurrency=self.max_workers,
                    requests_per_minute=shared(limits[0]),
                    tokens_per_minute=shared(limits[1]),
                    proxies=proxies(),
                )
            except JudgeError as exc:
                raise EngineUsageError(f"{self.path}: llm: {exc}") from None

        def make(spec: ModelSpec, role: str) -> LLM:
            if spec.name not in llms:
                raise EngineUsageError(
                    f"{self.path}: the answers in {self.output_dir} were generated by "
                    f"{spec.name}, not llm.model; run --step gen (or all) with this config first"
                )
            return llms[spec.name]

        return make

    @property
    def generator(self) -> str | None:
        """llm.model as the pipeline names it: it answers and grades, as in OpenViking."""
        return f"openai/{self.llm.model}" if self.llm is not None else None

    def pipeline_options(
        self,
        step: str,
        base_url: str | None,
        limits: tuple[float | None, float | None] = (None, None),
    ) -> PipelineOptions:
        """The pipeline's options from the config; `base_url` (--base-url) replaces
        llm.base_url, `limits` are the run's --rpm and --tpm. A step that grades answers
        needs the llm section."""
        from lasagna_cli.engine.benchmarks import get_benchmark_spec
        from lasagna_cli.engine.config._config import endpoint_url
        from lasagna_cli.engine.staged._options import PipelineOptions

        if self.llm is None and step in ("all", "eval"):
            raise EngineUsageError(
                f"{self.path}: no llm section: --step {step} grades answers with llm.model; "
                "add it, or run --step gen for retrieval alone"
            )
        out = self.output_dir
        prompts = self.prompts
        docs: tuple[Path, ...] = () if self.skip_ingestion else (out / "docs",)
        if self.doc_output_dir is not None and docs:
            docs += (self.doc_output_dir,)
        server = base_url or (self.llm.base_url if self.llm is not None else None)
        return PipelineOptions(
            name=self.benchmark,
            data_dir=self.dataset_path,
            # every split file of the folder, as OpenViking's Qasper and SyllabusQA adapters
            # read one
            split="all" if "all" in get_benchmark_spec(self.benchmark).splits else None,
            out=out,
            step=step,
            top_k=self.top_k,
            max_queries=self.max_queries,
            retrieval_instruction=self.retrieval_instruction or None,
            generator=self.generator,
            judge=self.generator,  # llm.model grades whatever answers the file holds, as run.py
            concurrency=self.max_workers,
            requests_per_minute=limits[0],
            tokens_per_minute=limits[1],
            endpoints={"openai": endpoint_url(server)} if self.llm is not None and server else {},
            ingest_mode=self.ingest_mode,
            ingest_workers=self.ingest_workers,
            temperature=self.llm.temperature if self.llm is not None else None,
            log_file=self.log_file,
            docs_dirs=docs,
            project_name=self.project_name,
            dataset_label=self.dataset_name,
            instructions=prompts.instructions if prompts is not None else (),
            rubric=str(prompts.judge_rubric) if prompts and prompts.judge_rubric else None,
            prompts=prompts.describe() if prompts is not None else None,
        )


def _fail(path: Path, message: str) -> EngineError:
    return EngineError(f"{path}: {message}")


def _section(path: Path, data: Mapping[str, Any], name: str) -> dict[str, Any]:
    value = data.get(name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _fail(path, f"expected `{name}` to be a mapping of settings, found {value!r}")
    return value


def _unused(data: Mapping[str, Any]) -> list[str]:
    found = []
    for key, value in data.items():
        if key not in _KEYS[""]:
            found.append(f"{key}{did_you_mean(str(key), _KEYS[''])}")
        elif key in _KEYS and isinstance(value, dict):
            found += [
                f"{key}.{sub}{did_you_mean(str(sub), _KEYS[key])}"
                for sub in value
                if sub not in _KEYS[key]
            ]
    return found


def _integer(path: Path, where: str, value: Any, default: int | None, low: int) -> int | None:
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise _fail(path, f"expected {where} to be an integer of at least {low}, found {value!r}")
    return value


def _benchmark(path: Path, data: Mapping[str, Any], adapter: Mapping[str, Any]) -> str:
    class_name = adapter.get("class_name")
    if class_name is not None:
        if class_name in ADAPTERS:
            return ADAPTERS[class_name]
        module = adapter.get("module")
        if isinstance(module, str) and module and not module.startswith("src.adapters."):
            return _custom_adapter(path, module, str(class_name))
        raise _fail(
            path,
            f"adapter.class_name {class_name!r} is not one of the built-in adapters "
            f"({', '.join(ADAPTERS)}){did_you_mean(str(class_name), ADAPTERS)}; a dataset "
            "of your own is adapter.module: your.module with a BaseAdapter subclass",
        )
    name = data.get("dataset_name")
    by_spelling = {v.lower(): k for k, v in SPELLING.items()}
    if isinstance(name, str) and name.lower() in by_spelling:
        return by_spelling[name.lower()]
    raise _fail(
        path,
        f"no adapter: give adapter.class_name (one of {', '.join(ADAPTERS)}) or a dataset_name "
        f"of {', '.join(SPELLING.values())}; found dataset_name {name!r}",
    )


def _custom_adapter(path: Path, module: str, class_name: str) -> str:
    """Import `module:class_name` (from the config's project root, the working directory or
    the installed packages), register it, and return its benchmark name."""
    from lasagna_cli.engine.benchmarks import register_benchmark
    from lasagna_cli.engine.benchmarks._registry import get_adapter, is_benchmark
    from lasagna_cli.engine.systems._callable import import_target

    where = f"{path}: adapter {module}.{class_name}"
    root = str(project_root(path))
    if root not in sys.path:  # run.py's folder is on its sys.path, so its modules import
        sys.path.insert(0, root)
    found = import_target(f"{module}:{class_name}", where)
    try:
        adapter = found() if isinstance(found, type) else found
    except Exception as exc:
        raise EngineError(f"{where}: creating it raised {type(exc).__name__}: {exc}") from None
    name = getattr(getattr(adapter, "spec", None), "name", None)
    taken = isinstance(name, str) and is_benchmark(name)
    if taken and type(get_adapter(str(name))) is not type(adapter):
        raise _fail(
            path,
            f"adapter {module}.{class_name} is named {name!r}, as a benchmark already "
            "registered is; give it another name",
        )
    try:
        register_benchmark(adapter, replace=True)
    except EngineError as exc:
        raise EngineError(f"{where}: {exc}") from None
    return str(name)


def project_root(path: Path) -> Path:
    """Where the config's relative paths are read from. run.py reads them from its own
    folder (benchmark/RAG/, its PROJECT_ROOT), where its configs sit in config/: so the
    config's folder or the one above when it holds run.py; else the folder above config/
    (OpenViking's layout without run.py); else the working directory."""
    config = path.resolve()
    for folder in (config.parent, config.parent.parent):
        if (folder / "run.py").is_file():
            return folder
    if config.parent.name == "config":
        return config.parent.parent
    return Path.cwd()


def _template(
    text: Any, path: Path, where: str, values: Mapping[str, str], root: Path | None = None
) -> Path:
    """The path with {dataset_name} and {retrieval_topk} filled in, a relative one read from
    `root` (kept relative when that is the working directory: the same file)."""
    if not isinstance(text, str) or not text.strip():
        raise _fail(path, f"expected {where} to be a path, found {text!r}")
    for name, value in values.items():
        text = text.replace("{" + name + "}", value)
    found = Path(text)
    if root is None or found.is_absolute() or root.resolve() == Path.cwd().resolve():
        return found
    return Path(os.path.normpath(root / found))


def parse_openviking_config(path: Path, data: Any) -> OpenVikingConfig:
    """The parsed YAML as the pipeline's settings; every problem names the key."""
    if not isinstance(data, dict):
        raise _fail(path, "expected OpenViking's config: a mapping with dataset_name, paths, ...")
    adapter = _section(path, data, "adapter")
    execution = _section(path, data, "execution")
    paths = _section(path, data, "paths")
    llm = _section(path, data, "llm")
    benchmark = _benchmark(path, data, adapter)
    dataset_name = str(data.get("dataset_name") or dataset_spelling(benchmark))
    top_k = _integer(path, "execution.retrieval_topk", execution.get("retrieval_topk"), 5, 1)
    assert top_k is not None
    values = {"dataset_name": dataset_name, "retrieval_topk": str(top_k)}
    root = project_root(path)
    if "dataset_path" not in paths:
        raise _fail(path, "paths.dataset_path is missing: the dataset's file or folder")
    output_dir = _template(
        paths.get("output_dir", DEFAULT_OUTPUT), path, "paths.output_dir", values, root
    )
    log_file = (
        _template(paths["log_file"], path, "paths.log_file", values, root)
        if paths.get("log_file") is not None
        else output_dir / LOG_FILE
    )
    docs = paths.get("doc_output_dir")
    mode = execution.get("ingest_mode", "directory")
    if mode not in ("directory", "per_file"):
        raise _fail(path, f"expected execution.ingest_mode directory or per_file, found {mode!r}")
    instruction = execution.get("retrieval_instruction") or ""
    if not isinstance(instruction, str):
        raise _fail(path, "expected execution.retrieval_instruction to be a string")
    skip = execution.get("skip_ingestion", False)
    if not isinstance(skip, bool):
        raise _fail(path, f"expected execution.skip_ingestion true or false, found {skip!r}")
    project = data.get("project_name")
    prompts = data.get("prompts")
    return OpenVikingConfig(
        path=path,
        project_name=str(project) if project is not None else None,
        benchmark=benchmark,
        dataset_name=dataset_name,
        dataset_path=_template(paths["dataset_path"], path, "paths.dataset_path", values, root),
        output_dir=output_dir,
        log_file=log_file,
        doc_output_dir=_template(docs, path, "paths.doc_output_dir", values, root)
        if docs
        else None,
        top_k=top_k,
        max_workers=_integer(path, "execution.max_workers", execution.get("max_workers"), 8, 1)
        or 8,
        ingest_workers=_integer(
            path, "execution.ingest_workers", execution.get("ingest_workers"), 8, 1
        )
        or 8,
        max_queries=_integer(path, "execution.max_queries", execution.get("max_queries"), None, 1),
        skip_ingestion=skip,
        ingest_mode=mode,
        retrieval_instruction=instruction,
        llm=_llm(path, llm) if llm else None,
        warnings=tuple(
            f"{path}: {key} is not used by lasagna; it is ignored" for key in _unused(data)
        ),
        prompts=load_prompts(_template(prompts, path, "prompts", values, root), benchmark)
        if prompts is not None
        else None,
    )


def _llm(path: Path, llm: Mapping[str, Any]) -> LLMSettings:
    model = llm.get("model")
    if not isinstance(model, str) or not model.strip():
        raise _fail(path, f"expected llm.model to be a model name, found {model!r}")
    temperature = llm.get("temperature")
    if temperature is not None and (
        not isinstance(temperature, int | float) or isinstance(temperature, bool)
    ):
        raise _fail(path, f"expected llm.temperature to be a number, found {temperature!r}")
    for key in ("base_url", "api_key", "api_key_env_var"):
        if llm.get(key) is not None and not isinstance(llm[key], str):
            raise _fail(path, f"expected llm.{key} to be a string")
    return LLMSettings(
        model=model.strip(),
        temperature=float(temperature) if temperature is not None else None,
        base_url=llm.get("base_url") or None,
        api_key=llm.get("api_key") or None,
        api_key_env_var=llm.get("api_key_env_var") or None,
    )


def load_openviking_config(path: Path) -> OpenVikingConfig:
    """Read OpenViking's config.yaml (or one of its per-dataset configs)."""
    import yaml

    from lasagna_judge import load_yaml

    if path.is_dir():
        raise EngineUsageError(f"{path}: a folder; give OpenViking's config.yaml file")
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise EngineUsageError(
            f"{path}: no such config file; give OpenViking's config.yaml"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise EngineError(f"{path}: cannot read it ({exc})") from None
    try:
        data = load_yaml(text)
    except yaml.YAMLError as exc:
        raise EngineError(f"{path}: not valid YAML: {str(exc).splitlines()[0]}") from None
    return parse_openviking_config(path, data)


def is_openviking_config(path: Path) -> bool:
    """Whether a .yaml/.yml file looks like OpenViking's config rather than a sweep file."""
    if path.suffix not in (".yaml", ".yml") or not path.is_file():
        return False
    import yaml  # only now: a run of a JSONL file does not need it

    from lasagna_judge import load_yaml

    try:
        data = load_yaml(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return False
    return isinstance(data, dict) and "paths" in data and ("adapter" in data or "llm" in data)
