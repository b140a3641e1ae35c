"""Every command and code block of the documentation runs, so the docs cannot drift.

Each page's ```bash and ```python blocks run in order in a sandbox of their own (a copy of
examples/, see `_docs_blocks.sandbox`), from what would be the repository root: a block may
use what an earlier block of its page wrote (`runs/...`). The embedded local model is served
by the fake OpenAI-compatible server instead (`_docs_blocks._faked`). A ```text block marked
`<!-- output -->` must be what the bash block before it printed, and a block marked
`<!-- file: PATH -->` must be lines of that file. Blocks marked
`<!-- skip: REASON -->` are reported as skipped tests, with the reason; a block marked
`<!-- needs: MODULE -->` runs where that module is installed (`.ci/run` runs the Ray
pages' blocks with the ray group) and is reported as skipped elsewhere.

A block that reads public data (`Block.public_data`: `../shared/`, where this repository's CI
keeps the benchmarks' raw files) runs where that folder is, and its page says where to get
the data. The guides' first examples run again in a sandbox with nothing beside it, as in a
fresh clone: a newcomer's first step needs nothing but the clone.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from lasagna_judge.testing import FakeLLMServer
from lasagna_judge.testing._schema_dummy import _schema_dummy


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("_docs_blocks", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["_docs_blocks"] = module
    spec.loader.exec_module(module)
    return module


docs = _load(Path(__file__).with_name("_docs_blocks.py"))
RUNNABLE = ("bash", "python")
SHARED = docs.ROOT.parent / "shared"  # the public benchmarks' raw files, beside the clone
PAGES = [p for p in docs.pages() if any(b.lang in RUNNABLE for b in docs.blocks(p))]


def _missing(block: Any) -> bool:
    """A block that needs a module this environment does not have (`<!-- needs: ray -->`)."""
    return block.needs is not None and importlib.util.find_spec(block.needs) is None


SKIPPED = [
    b
    for p in docs.pages()
    for b in docs.blocks(p)
    if (b.skip or _missing(b)) and b.lang in RUNNABLE
]


def _reply(request: dict[str, Any]) -> str:
    # A structured call (a grade, a question, a check) gets the simplest reply that fits its
    # schema, a question one of its prompt's own (synthesize drops a one-letter question,
    # and a repeated one); a plain one (an answer) the user's message back, so answers hold
    # the words of the question and passages, as a model's would (`stats find` has something
    # to find).
    content = request["messages"][-1]["content"]
    text = content if isinstance(content, str) else " ".join(p.get("text", "") for p in content)
    if request.get("tools") or request.get("response_format"):
        reply = json.loads(_schema_dummy(request))
        if isinstance(reply, dict) and "question" in reply:
            topic = hashlib.sha256(text.encode()).hexdigest()[:8]
            reply["question"] = f"What do the documents say about topic {topic}?"
        return json.dumps(reply)
    return text[:2000]


@pytest.fixture(scope="module")
def fake_llm() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(reply=_reply) as server:
        yield server


def _id(path: Path) -> str:
    return path.relative_to(docs.ROOT).as_posix()


@pytest.mark.parametrize("page", PAGES, ids=_id)
def test_page_blocks_run(page: Path, tmp_path: Path, fake_llm: FakeLLMServer) -> None:
    work = docs.sandbox(tmp_path)
    env = docs.environment(work, fake_llm.base_url)
    last_output: str | None = None
    for block in docs.blocks(page):
        if block.file:
            _assert_lines_of(block, docs.ROOT / block.file)
        if block.output:
            assert last_output is not None, f"{block.where}: no bash block before its output"
            assert last_output.rstrip() == block.code.rstrip(), (
                f"{block.where}: the block's output changed; it printed:\n{last_output}"
            )
            continue
        if block.lang not in RUNNABLE or block.skip or _missing(block):
            continue
        if block.public_data and not SHARED.is_dir():
            # As the tests of the real benchmarks do (tests/cli/test_equal_figures.py).
            pytest.skip(f"{block.where} and the rest of the page need ../shared/data")
        output = docs.run_block(block, work, env)
        last_output = output if block.lang == "bash" else None


def _assert_lines_of(block: Any, path: Path) -> None:
    lines = iter(path.read_text(encoding="utf-8").splitlines())
    for line in block.code.splitlines():
        assert any(line == other for other in lines), (
            f"{block.where}: {line!r} is not (or not in this order) in {block.file}"
        )


def _first_example(page: Path) -> Any:
    """The page's first block that runs here (not skipped, its modules installed)."""
    return next(
        (b for b in docs.blocks(page) if b.lang in RUNNABLE and not b.skip and not _missing(b)),
        None,
    )


# The pages a newcomer follows: the README, the home page, getting started, the how-to
# guides and the pages for users of kag, OpenViking and lasagna-rag (not the reference, nor
# performance.md, whose figures are measured on the public data).
GUIDES = [
    p
    for p in PAGES
    if _id(p) in {"README.md", "docs/index.md", "docs/getting-started.md"}
    or _id(p).startswith(("docs/how-to/", "docs/coming-from/"))
]


@pytest.mark.parametrize("page", GUIDES, ids=_id)
def test_guide_first_example_runs_in_a_bare_clone(
    page: Path, tmp_path: Path, fake_llm: FakeLLMServer
) -> None:
    """A guide's first example runs from the clone alone: no ../shared beside it."""
    block = _first_example(page)
    if block is None:
        pytest.skip(f"{_id(page)}: no block runs here (each is skipped, or needs a module)")
    work = docs.sandbox(tmp_path, include_shared=False)
    assert not (work.parent / "shared").exists()
    assert not block.public_data, (
        f"{block.where}: a guide's first example reads public data; start from examples/"
    )
    docs.run_block(block, work, docs.environment(work, fake_llm.base_url))


PUBLIC = [
    b
    for p in docs.pages()
    for b in docs.blocks(p)
    if b.lang in RUNNABLE and not b.skip and b.public_data
]


@pytest.mark.parametrize("block", PUBLIC, ids=lambda b: b.where)
def test_public_data_says_where_to_get_it(block: Any) -> None:
    """A block that reads public data has, in its comments or the text before it, the
    address to get that data from."""
    assert "https://" in block.lead + block.code, (
        f"{block.where} reads public data (../shared/...); say where to get it "
        "(the upstream address) in the text before the block or in a comment"
    )


@pytest.mark.parametrize("block", SKIPPED, ids=lambda b: b.where)
def test_skipped_blocks_are_reported(block: Any) -> None:
    reason = (
        block.skip or f"needs {block.needs}, which is not installed (its group's CI step runs it)"
    )
    pytest.skip(f"{block.where}: {reason}")


def test_blocks_are_found() -> None:
    """The runner sees the blocks: a fence it misread would silently run nothing."""
    readme = docs.blocks(docs.ROOT / "README.md")
    assert [b.lang for b in readme][:1] == ["bash"]
    assert (
        "uv run lasagna benchmark run examples/data/pasta.jsonl --profile speed" in readme[0].code
    )
    assert len(PAGES) >= 10
    assert len(GUIDES) >= 20
    # the detector of public data sees it in the block and through an example file it names
    assert any(b.public_data and "../shared/" not in b.code for b in PUBLIC)
