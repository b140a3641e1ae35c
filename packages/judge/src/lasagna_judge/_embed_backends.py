"""The embedding backends: an OpenAI-compatible `/embeddings` server (OpenAI, Ollama,
vLLM, llama.cpp server, text-embeddings-inference) through the openai SDK on the retrying
sender, WordLlama in-process (its 256-dimension model ships inside its wheel), and a
sentence-transformers model from a folder the user has.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lasagna_judge._embed import MAX_INPUT_TOKENS
from lasagna_judge._errors import JudgeError, MissingExtraError
from lasagna_judge._sdk import Wire, openai_client, sdk_failure
from lasagna_judge._types import Usage
from lasagna_judge._usage import Meter, call_record, record_attempt

if TYPE_CHECKING:
    from lasagna_judge._embed import Vectors

WORDLLAMA = "wordllama"
WORDLLAMA_DIMENSION = 256


class HttpEmbedBackend:
    """`embeddings.create` of the openai SDK ({base_url}/embeddings), a batch of texts a
    request."""

    cacheable = True

    def __init__(
        self,
        model_id: str,
        name: str,
        *,
        base_url: str | None,
        api_key: str | None,
        wire: Wire,
        batch_size: int,
        dimensions: int | None,
        max_input_tokens: int = MAX_INPUT_TOKENS,
    ) -> None:
        self.model_id = model_id
        self.max_input_tokens = max_input_tokens
        self.name = name
        self.batch_size = batch_size
        self._dimensions = dimensions
        self._client = openai_client(api_key, base_url, wire)
        self._wire = wire

    async def embed_batch(self, texts: list[str]) -> list[Sequence[float]]:
        extra: dict[str, Any] = {}
        if self._dimensions is not None:
            extra["dimensions"] = self._dimensions
        with call_record():
            try:
                reply = await self._client.embeddings.create(
                    model=self.name, input=texts, encoding_format="float", **extra
                )
            except Exception as exc:
                failed = sdk_failure(self.model_id, exc)
                if failed is None:
                    raise
                raise failed from None
        rows = getattr(reply, "data", None)
        if not isinstance(rows, list) or len(rows) != len(texts):
            got = len(rows) if isinstance(rows, list) else "no"
            raise JudgeError(
                f"{self.model_id}: asked for {len(texts)} embeddings, the server sent {got}; "
                "check that the base URL serves an OpenAI-compatible /embeddings"
            )
        ordered = sorted(rows, key=lambda r: getattr(r, "index", 0) or 0)
        vectors = [getattr(r, "embedding", None) for r in ordered]
        if not all(isinstance(v, list) for v in vectors):
            raise JudgeError(
                f"{self.model_id}: a reply item has no 'embedding' list of numbers (base64 "
                "replies are not read: the request asks for floats)"
            )
        return vectors  # type: ignore[return-value]

    async def aclose(self) -> None:
        await self._wire.aclose()


class WordLlamaBackend:
    """WordLlama's l2_supercat model, loaded from the files in its wheel (never downloaded),
    run on a worker thread so the event loop keeps serving other work."""

    cacheable = False  # tens of thousands of passages a second: faster than a cache lookup
    batch_size = 4096

    def __init__(self, meter: Meter) -> None:
        self._meter = meter
        self._model: Any = None
        self._counted = threading.local()  # each worker thread counts its own call's tokens

    def _load(self) -> Any:
        if self._model is None:
            try:
                import wordllama
                from safetensors import safe_open
                from wordllama import WordLlama
                from wordllama.inference import WordLlamaInference
            except ImportError:
                raise MissingExtraError("local/wordllama", "embed", "wordllama") from None
            # WordLlama.load() looks for its tokenizer in the wrong folder and then downloads
            # it; both files are in the wheel, so they are opened from there.
            root = Path(wordllama.__file__).parent
            tokenizer = WordLlama.load_tokenizer(
                root / "tokenizers" / "l2_supercat_tokenizer_config.json"
            )
            weights = root / "weights" / f"l2_supercat_{WORDLLAMA_DIMENSION}.safetensors"
            with safe_open(str(weights), framework="np", device="cpu") as f:
                embedding = f.get_tensor("embedding.weight")
            model = WordLlamaInference(embedding, tokenizer, binary=False)
            tokenize = model.tokenize
            counted = self._counted

            def counting(texts: list[str]) -> Any:
                # The tokens embedded (padding left out), counted from the model's own
                # tokenization rather than by tokenizing every text a second time.
                encoded = tokenize(texts)
                tokens = sum(sum(e.attention_mask) for e in encoded)
                counted.tokens = getattr(counted, "tokens", 0) + tokens
                return encoded

            model.tokenize = counting
            self._model = model
        return self._model

    def _embed(self, texts: list[str]) -> Vectors:
        model = self._load()
        self._counted.tokens = 0
        vectors = model.embed(texts, norm=True)
        record_attempt(self._meter, seconds=0.0, usage=Usage(self._counted.tokens, 0), status=200)
        return vectors  # type: ignore[no-any-return]

    async def embed_batch(self, texts: list[str]) -> Vectors:
        return await asyncio.to_thread(self._embed, texts)

    def load(self) -> None:
        """Load the model now (the first call would), so a missing package is found early."""
        self._load()

    async def aclose(self) -> None:
        return None


class SentenceTransformerBackend:
    """A sentence-transformers model from a local folder; nothing is downloaded."""

    cacheable = False
    batch_size = 64

    def __init__(self, path: Path, meter: Meter) -> None:
        if not path.is_dir():
            raise JudgeError(
                f"local/{path}: expected a sentence-transformers model folder, found none at "
                f"{path}; give the folder the model was saved to, or use local/wordllama"
            )
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError:
            # No extra of lasagna's holds it: the user's own install, with its torch.
            raise JudgeError(
                f"local/{path}: a sentence-transformers model needs that package, which is "
                "not installed: pip install sentence-transformers (or use local/wordllama)"
            ) from None
        self._model = SentenceTransformer(str(path), local_files_only=True, device="cpu")
        self._meter = meter

    def _embed(self, texts: list[str]) -> Vectors:
        record_attempt(self._meter, seconds=0.0, status=200)
        return self._model.encode(texts, convert_to_numpy=True)  # type: ignore[no-any-return]

    async def embed_batch(self, texts: list[str]) -> Vectors:
        return await asyncio.to_thread(self._embed, texts)

    async def aclose(self) -> None:
        return None
