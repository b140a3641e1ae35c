"""The one typed configuration of a benchmark run: what is measured, on what, with what.

Three front doors fill it: `benchmark run` (flags, or a sweep file: `_sweepfile`), kag's
`benchmark sweep` (SETUPS.toml + DATASETS.json + config.toml: `kag/`) and the staged
pipeline (`run NAME --data-dir`: `_staged`). Everything after this point (plan, tasks,
runner, records, reports) sees only these types.

    RunConfig
      benchmarks: BenchmarkEntry ...   a data file / BEIR folder, a registered benchmark
                                       read from its raw files, or questions in memory
      setups: Setup ...                what answers: a retriever (RetrieverSpec) over a
                                       corpus, a generator (ModelSpec) with a prompt
                                       (PromptSpec), or the user's own system (SystemSpec)
      judge, rubric, seed, concurrency
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit, urlunsplit

#: What is sent to a judge at most (`--max-chars`): 50,000 characters of question,
#: references and answer, about 12,500 tokens: far more than they need, far less than the
#: accident of a whole document pasted into an answer.
JUDGE_MAX_CHARS = 50_000

if TYPE_CHECKING:
    from lasagna_cli.engine._data import Dataset
    from lasagna_cli.engine.systems import SystemSpec

TRACK_NAMES = ("retrieval", "generation", "closed-book")
#: How a data file is read (--data-format, a sweep entry's `format:`), as
#: `lasagna_synth.load_data`'s `format=` takes it (kept here so that reading a sweep file
#: does not import lasagna-synth; a test checks it is the same tuple).
DATA_FORMATS = ("lasagna", "ragas", "deepeval", "hf")
#: Passages retrieved per question (recall@k, hit@k, what the generator reads), for every
#: door: OpenViking's `retrieval_topk` and kag's retrievers default to 5, so users of both
#: get the figures they know. Rankings are kept at least 10 deep, so nDCG@10 is unaffected.
DEFAULT_TOP_K = 5
DEFAULT_SEED = 42
DEFAULT_CONCURRENCY = 8
PromptStyle = Literal["answer", "template", "benchmark"]


RETRIEVER_KINDS = ("bm25", "dense", "hybrid")
DEFAULT_RRF_K = 60
_BM25_FIELDS = ("top_k", "k1", "b", "variant", "stemmer", "stopwords")
_DENSE_FIELDS = ("embedder", "embedder_endpoint", "dimensions", "store", "collection")


@dataclass(frozen=True, slots=True)
class RetrieverSpec:
    """How passages are found. `top_k` passages go to the generator; recall and hit rate
    are @top_k. `kind`: "bm25" (the BM25 settings below), "dense" (cosine similarity of the
    embedder's vectors, in-process or in the vector database `store`), or "hybrid"
    (reciprocal rank fusion of both: each list adds weight / (rrf_k + rank))."""

    top_k: int = DEFAULT_TOP_K
    k1: float = 1.5
    b: float = 0.75
    variant: str = "lucene"
    stemmer: str = "english"
    stopwords: str = "lucene-english"
    kind: str = "bm25"
    embedder: str | None = None
    """provider/name (dense and hybrid); the commands fill in local/wordllama."""
    embedder_endpoint: str | None = None
    """The embedding server the calls go to, as recorded (no credentials, no query)."""
    dimensions: int | None = None
    """Asked of an embedder that can shorten its vectors (OpenAI's v3 models)."""
    store: str | None = None
    """A vector database's URL (Chroma's server); None: an index in-process."""
    collection: str | None = None
    """The store's collection; None: one named after the corpus and the embedder."""
    rrf_k: int = DEFAULT_RRF_K
    weights: tuple[float, float] = (1.0, 1.0)
    """hybrid: the weights of (BM25, dense) in the fusion."""

    @property
    def depth(self) -> int:
        """How many documents each ranking keeps: enough for nDCG@10 and recall@top_k."""
        return max(self.top_k, 10)

    @property
    def uses_bm25(self) -> bool:
        return self.kind in ("bm25", "hybrid")

    @property
    def uses_vectors(self) -> bool:
        return self.kind in ("dense", "hybrid")

    def bm25_key(self) -> tuple[str, float, float, str, str]:
        """The settings that decide a BM25 index (top_k does not)."""
        return (self.variant, self.k1, self.b, self.stemmer, self.stopwords)

    def dense_key(self) -> tuple[Any, ...]:
        """The settings that decide the vectors and where they are searched."""
        return (self.embedder, self.embedder_endpoint, self.dimensions, self.store, self.collection)

    def index_key(self) -> tuple[Any, ...]:
        """The settings that decide the rankings (top_k does not)."""
        if self.kind == "bm25":
            return self.bm25_key()
        if self.kind == "dense":
            return ("dense", *self.dense_key())
        return ("hybrid", self.bm25_key(), self.dense_key(), self.rrf_k, self.weights)

    def to_dict(self) -> dict[str, Any]:
        """The settings that decide a task's ranking, as fingerprints and records hold them
        (a BM25 retriever's are what they were before there were other kinds, so its runs
        resume as they are)."""
        values = asdict(self)
        if self.kind == "bm25":
            return {k: values[k] for k in _BM25_FIELDS}
        keep: tuple[str, ...] = ("kind", "top_k", *_DENSE_FIELDS)
        if self.kind == "hybrid":
            keep += (*_BM25_FIELDS[1:], "rrf_k", "weights")
        return {k: list(values[k]) if k == "weights" else values[k] for k in keep}


@dataclass(frozen=True, slots=True)
class ProviderSpec:
    """Where a model is served: a built-in provider (openai, anthropic, ollama, local) or a
    kag config.toml entry with its own base URL and the NAME of its key variable."""

    name: str
    api: str
    base_url: str | None = None
    api_key_env: str | None = None
    wire: str | None = None
    """The HTTP API its calls use, when not the provider's usual one: "responses" (OpenAI's
    Responses API) or "ollama-chat" (Ollama's native /api/chat), as kag's `type = "OpenAI"`
    and `type = "Ollama"` providers speak."""
    api_key: str | None = field(default=None, repr=False)
    """A key written in config.toml itself (kag's `key`, usually `{{ env(...) }}`); never
    recorded anywhere."""
    requests_per_minute: float | None = None
    """Each of its models' requests a minute at most (lasagna's key, beside kag's; not
    recorded: a limit changes when answers come, not what they are)."""
    tokens_per_minute: float | None = None

    def describe(self) -> dict[str, Any]:
        """What result files record: the key variable's name, never its value."""
        out = {
            "name": self.name,
            "api": self.api,
            "base_url": without_credentials(self.base_url),
            "api_key_env": self.api_key_env,
        }
        if self.wire is not None:
            out["wire"] = self.wire
        return out


BUILTIN_PROVIDERS = {
    "openai": ProviderSpec("openai", "openai", None, "OPENAI_API_KEY"),
    "anthropic": ProviderSpec("anthropic", "anthropic", None, "ANTHROPIC_API_KEY"),
    "ollama": ProviderSpec("ollama", "ollama"),
    "local": ProviderSpec("local", "local"),
}


def endpoint_url(url: str) -> str:
    """A base URL as results record it: scheme, host, port and path; never credentials, a
    query string or a fragment (where keys may sit)."""
    parts = urlsplit(url.strip())
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def without_credentials(url: str | None) -> str | None:
    """A base URL without user:password@ (which would be a secret in a result file)."""
    if url is None:
        return None
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """A model that answers: `name` is provider/model as `lasagna_judge.make_llm` takes it."""

    name: str
    provider: ProviderSpec | None = None
    """A kag config.toml provider; None for the built-in ones, set up from the environment."""
    temperature: float | None = None
    max_tokens: int | None = None
    endpoint: str | None = None
    """The server its calls go to, when not the provider's own (an OpenAI-compatible server
    named by OPENAI_BASE_URL, say): recorded, and part of the fingerprint, so answers from
    a local server never pass for the hosted model's. Never credentials (`endpoint_url`)."""

    @property
    def key(self) -> tuple[str, str]:
        """One LLM object serves every setup with the same provider and model."""
        return (self.provider.name if self.provider else "", self.name)


@dataclass(frozen=True, slots=True)
class PromptSpec:
    """How a question and its passages become chat messages (`_prompts`).

    - "answer": lasagna's short-answer prompt (numbered passages, or closed-book);
    - "template": kag's `system_prompt` and `prompt` with {{INPUT}}, {{RETRIEVAL}},
      {{CHOICE}};
    - "benchmark": a registered benchmark's own prompt (its per-category instruction and the
      "Not mentioned" rule), as OpenViking's RAG benchmark asks it.
    """

    style: PromptStyle = "answer"
    system: str = ""
    user: str = "{{INPUT}}"
    benchmark: str | None = None
    max_passage_chars: int | None = None
    """Each passage is cut to this many characters in the prompt (None: whole)."""
    instructions: tuple[tuple[str, str], ...] = ()
    """"benchmark": (category, instruction) pairs replacing the benchmark's own; category
    "*" replaces its default instruction. Part of the prompt's sha256."""


@dataclass(frozen=True, slots=True)
class DatabaseSpec:
    """A corpus a setup brings (kag's databases): a folder of documents to chunk, or the
    corpus of a BEIR folder. Without one, a setup searches its benchmark's own corpus."""

    name: str
    kind: Literal["documents", "beir"]
    path: Path
    chunker: str = "fixed"
    chunk_words: int = 200
    vector: bool = False
    """type = "vector": its passages are searched by their embeddings."""
    embedder: str | None = None
    store: str | None = None
    collection: str | None = None

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "kind": self.kind, "path": str(self.path)}
        if self.kind == "documents":
            out.update(chunker=self.chunker, chunk_words=self.chunk_words)
        if self.vector:
            out.update(
                type="vector", embedder=self.embedder, store=self.store, collection=self.collection
            )
        return out


DEFAULT_CHUNKER = "fixed"
DEFAULT_CHUNK_SIZE = 200
#: The chunkers a setup may name (lasagna-synth's; `words` is another name for fixed).
CHUNKER_NAMES = ("words", "fixed", "sentences", "markdown", "tokens")


@dataclass(frozen=True, slots=True)
class ChunkingSpec:
    """How a benchmark's folder of documents (`corpus:`) is cut into the passages a setup
    searches: lasagna-synth's chunkers, `size` words (tokens for `tokens`) a passage,
    `overlap` shared with the next. Only a corpus of documents is chunked by it."""

    chunker: str = DEFAULT_CHUNKER
    size: int = DEFAULT_CHUNK_SIZE
    overlap: int = 0

    def describe(self) -> dict[str, Any]:
        """As results, records and fingerprints hold it."""
        return {"chunker": self.chunker, "chunk_size": self.size, "chunk_overlap": self.overlap}


@dataclass(frozen=True, slots=True)
class Setup:
    """One system under test: a retriever and/or a generator, or the user's own system."""

    name: str
    retriever: RetrieverSpec | None = field(default_factory=RetrieverSpec)
    """None: retrieves nothing (a kag setup without a retriever)."""
    generator: ModelSpec | None = None
    prompt: PromptSpec = field(default_factory=PromptSpec)
    tracks: tuple[str, ...] | None = None
    """None: the tracks the data supports that this setup can run."""
    system: SystemSpec | None = None
    """The user's system answers and ranks for itself (of the retriever only top_k applies)."""
    database: DatabaseSpec | None = None
    datasets: tuple[str, ...] | None = None
    """The datasets the setup covers (kag's `datasets`); None: every one."""
    query_prefix: str = ""
    """Put before the question in the retrieval query (OpenViking's retrieval_instruction)."""
    retriever_name: str | None = None
    """The config.toml retriever it names (kag), for the record."""
    chunking: ChunkingSpec = field(default_factory=ChunkingSpec)
    """How a benchmark's `corpus:` folder is cut for this setup (other corpora: unused)."""

    @property
    def top_k(self) -> int:
        return self.retriever.top_k if self.retriever is not None else DEFAULT_TOP_K

    def covers(self, dataset: str) -> bool:
        return self.datasets is None or dataset in self.datasets


@dataclass(frozen=True, slots=True)
class BenchmarkEntry:
    """One benchmark of a run: a file or folder (`path`), a registered public benchmark
    (`benchmark`, read from `data_dir`), or a data set already in memory (`dataset`)."""

    where: str
    """How messages name this entry: the path as given, or `locomo (data_dir: DIR)`."""
    path: Path | None = None
    name: str | None = None
    benchmark: str | None = None
    data_dir: Path | None = None
    dataset: Dataset | None = None
    split: str = "test"
    n_samples: int | None = None
    max_queries: int | None = None
    """The first N questions, in the benchmark's order (the staged pipeline's --max-queries)."""
    filters: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    setups: tuple[str, ...] | None = None
    """Only these setups on this benchmark (None: every setup that covers it)."""
    drop_unknown_judgments: bool = False
    data_format: str | None = None
    """The file's format (`lasagna_synth.load_data`'s `format=`: lasagna, ragas, deepeval,
    hf); None: told by its fields."""
    corpus: Path | None = None
    """The folder of documents retrieval searches (`--corpus`, `corpus:`), chunked by each
    setup's `chunking`; None: the folder the rows name (`synthesize` records it), else
    their passages pooled."""


@dataclass(frozen=True, slots=True)
class RunConfig:
    """One run: the benchmarks, the setups to compare on them, and what every setup shares
    (judge, rubric, seed, profile, concurrency). The flags of `benchmark run`, a sweep file
    and kag's SETUPS.toml all become one."""

    benchmarks: tuple[BenchmarkEntry, ...]
    setups: tuple[Setup, ...]
    judge: str | None = None
    judge_endpoint: str | None = None
    """The judge's server, when not its provider's own (see `ModelSpec.endpoint`)."""
    jury: tuple[ModelSpec, ...] = ()
    """The other judges of a jury (`--judge` given more than once): each grades every answer
    with `rubric` as `judge` does, each with its endpoint; `judge` alone runs diagnostics."""
    rubric: str = "binary"
    seed: int = DEFAULT_SEED
    profile: str = "speed"
    concurrency: int | None = None
    """Tasks in flight at most; None leaves it to whoever runs the config: `run_benchmark`
    takes DEFAULT_CONCURRENCY, the `lasagna` command a bound chosen from the models."""
    judge_max_chars: int = JUDGE_MAX_CHARS
    """Question, references and answer past this are not sent to the judge (--max-chars)."""
    diagnostics: bool = False
    """The judge's claim-level diagnosis of each generated answer (--diagnostics)."""
    requests_per_minute: float | None = None
    """Each model's requests a minute at most, the run's workers together (--rpm)."""
    tokens_per_minute: float | None = None
    """Each model's tokens a minute at most (--tpm)."""
    source: str = ""
    """The PATH or file the run was started with, as given."""

    @property
    def judges(self) -> list[str]:
        """Every judge's model: `judge`, then the jury's; none without a judge."""
        return [self.judge, *(j.name for j in self.jury)] if self.judge else []
