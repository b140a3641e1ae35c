"""The code blocks of the documentation, as the docs test runs them.

A block is a fenced ```bash or ```python block of docs/**/*.md or README.md. An HTML comment
on the line before it (blank lines allowed) marks it:

- `<!-- skip: REASON -->`: not run (a hosted API, the test suite itself); the test reports it;
- `<!-- output -->` before a ```text block: the text is what the bash block before it
  prints, exactly (stdout and stderr); the test compares them;
- `<!-- file: PATH -->` before a block: its lines are lines of that file of the repository,
  in order (an example file shown on the page, its comments left out);
- `<!-- needs: MODULE -->`: run where MODULE is installed (the Ray blocks, in .ci/run's
  ray step), reported as skipped elsewhere.

A block that reads public data (`../shared/data/...`, where this repository's CI keeps the
public benchmarks' raw files beside the clone, named in the block or in an examples/ file
the block names) runs where that folder is; the page says where to get the data.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_SHARED = re.compile(r"(?:\.\./)+shared/")
_EXAMPLE_FILE = re.compile(r"\bexamples/[\w./-]+\.(?:ya?ml|json|toml)\b")
_FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w-]*)\s*$")
_MARK = re.compile(
    r"^\s*<!--\s*(?P<kind>skip|output|file|needs)\s*(?::\s*(?P<reason>.*?))?\s*-->\s*$"
)


@dataclass(frozen=True)
class Block:
    """One fenced block: its page, first line (1-based), language, text and marks."""

    page: str
    line: int
    lang: str
    code: str
    skip: str | None = None
    output: bool = False
    file: str | None = None
    needs: str | None = None
    """A module of an optional group the block needs (`<!-- needs: ray -->`): it runs where
    that module is installed (.ci/run's step of that group) and is skipped elsewhere."""
    lead: str = ""
    """The page's text between the previous block and this one (where it says what the
    block needs, and where to get it)."""

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def public_data(self) -> bool:
        """Whether the block reads public data a clone does not hold: `../shared/`, named
        in the block or in a file of examples/ the block names (a sweep file's
        `data_dir:`)."""
        if _SHARED.search(self.code):
            return True
        for name in _EXAMPLE_FILE.findall(self.code):
            path = ROOT / name
            if path.is_file() and _SHARED.search(path.read_text(encoding="utf-8")):
                return True
        return False


def pages() -> list[Path]:
    """README.md and every page of docs/, in a stable order."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def blocks(path: Path) -> list[Block]:
    """Every fenced block of a Markdown file, in order, with its marks."""
    page = path.relative_to(ROOT).as_posix()
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    mark: re.Match[str] | None = None
    lead: list[str] = []
    i = 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if fence is None:
            stripped = lines[i].strip()
            if _MARK.match(lines[i]):
                mark = _MARK.match(lines[i])
            elif stripped:
                mark = None
                lead.append(lines[i])
            i += 1
            continue
        indent, lang, start = len(fence["indent"]), fence["lang"], i
        body: list[str] = []
        i += 1
        while i < len(lines) and not re.match(rf"^ {{0,{indent}}}```\s*$", lines[i]):
            body.append(lines[i][indent:])
            i += 1
        i += 1
        kind = mark["kind"] if mark else None
        found.append(
            Block(
                page,
                start + 1,
                lang,
                "\n".join(body) + "\n",
                skip=(mark["reason"] or "marked skip") if kind == "skip" and mark else None,
                output=kind == "output",
                file=mark["reason"] if kind == "file" and mark else None,
                needs=mark["reason"] if kind == "needs" and mark else None,
                lead="\n".join(lead),
            )
        )
        mark = None
        lead = []
    return found


# -- running them -------------------------------------------------------------------------

# The runner's shims, first on PATH: `uv run [--group G ...] CMD` execs CMD in this test's
# environment (which holds every group the docs name), `pip install uv` is a no-op (uv is
# there). Scripts, not shell functions, so `uv run ... &` is the process `kill $!` stops.
_UV_SHIM = r"""#!/usr/bin/env bash
if [ "${1:-}" = run ]; then
    shift
    while [ $# -gt 0 ]; do
        case "$1" in
            --group|--package|--extra|--with) shift 2 ;;
            --*) shift ;;
            *) break ;;
        esac
    done
    exec "$@"
fi
exec %(uv)s "$@"
"""
_PIP_SHIM = "#!/usr/bin/env bash\nexit 0\n"
_PRELUDE = "set -euo pipefail\n"

# Python blocks: `make_llm("local/...")` is served by the fake server, as in the shell.
_PY_PRELUDE = """\
import os as _os

import lasagna_judge as _judge

_make_llm = _judge.make_llm


def _docs_make_llm(model, *args, **kwargs):
    if model.startswith("local/"):
        kwargs.update(base_url=_os.environ["OPENAI_BASE_URL"], api_key="test")
        model = "openai/fake-" + model.removeprefix("local/")
    return _make_llm(model, *args, **kwargs)


_judge.make_llm = _docs_make_llm
"""

# Where the docs name the embedded local model, the test runs the fake server instead: the
# same commands and files, and seconds instead of minutes (the local model itself is tested
# by tests/judge/test_local_model.py).
_LOCAL_MODEL = re.compile(r"\blocal/smollm2\b")
_LOCAL_PROVIDER = re.compile(r'^provider = "local"$', re.MULTILINE)


def _faked(text: str) -> str:
    return _LOCAL_PROVIDER.sub('provider = "openai"', _LOCAL_MODEL.sub("openai/fake-smollm2", text))


def _free_port(code: str) -> str:
    # The docs' example server listens on 8765; the test takes a free port instead, so runs
    # of the suite side by side on one machine do not collide.
    if "8765" not in code:
        return code
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return re.sub(r"\b8765\b", str(port), code)


def sandbox(tmp: Path, *, include_shared: bool = True) -> Path:
    """A working folder like the repository root: a copy of examples/ (with the local model
    routed to the fake server), and ../shared where the repository has it, unless
    `include_shared` is false (a fresh clone with nothing beside it)."""
    work = tmp / "repo"
    shutil.copytree(ROOT / "examples", work / "examples")
    for path in (work / "examples").rglob("*"):
        if path.suffix in {".toml", ".yaml", ".json"} and path.is_file():
            text = path.read_text(encoding="utf-8")
            if _faked(text) != text:
                path.write_text(_faked(text), encoding="utf-8")
    shims = tmp / "bin"
    shims.mkdir()
    for name, text in (
        ("uv", _UV_SHIM % {"uv": shutil.which("uv") or "false"}),
        ("pip", _PIP_SHIM),
    ):
        (shims / name).write_text(text, encoding="utf-8")
        (shims / name).chmod(0o755)
    shared = ROOT.parent / "shared"
    if include_shared and shared.is_dir():
        (tmp / "shared").symlink_to(shared)
    return work


def environment(work: Path, base_url: str) -> dict[str, str]:
    """The blocks' environment: this venv first, a cache of their own, the fake server as
    the OpenAI-compatible endpoint, and none of the user's model variables."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"MODEL_NAME", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OLLAMA_HOST"}
        and not k.startswith(("OPENAI_", "ANTHROPIC_", "OLLAMA_", "LASAGNA_"))
        and k.lower() not in {"http_proxy", "https_proxy", "all_proxy"}
    }
    env.update(
        PATH=os.pathsep.join(
            [str(work.parent / "bin"), str(Path(sys.executable).parent), env.get("PATH", "")]
        ),
        LASAGNA_CACHE_DIR=str(work.parent / "cache"),
        OPENAI_BASE_URL=base_url,
        OPENAI_API_KEY="test",
        COLUMNS="100",
        PYTHONUNBUFFERED="1",
    )
    return env


def run_block(block: Block, work: Path, env: dict[str, str], timeout: float = 300) -> str:
    """Run one block in `work`; its output (stdout and stderr), or a failure naming it."""
    if block.lang == "python":
        script = work / "_block.py"
        script.write_text(_PY_PRELUDE + block.code, encoding="utf-8")
        command = [sys.executable, str(script)]
    else:
        command = ["bash", "-c", _PRELUDE + _free_port(_faked(block.code))]
    result = subprocess.run(
        command,
        cwd=work,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=timeout,
    )
    output = result.stdout
    if result.returncode != 0:
        raise AssertionError(
            f"{block.where}: the {block.lang} block exited {result.returncode}\n"
            f"--- block ---\n{block.code}--- output ---\n{output[-4000:]}"
        )
    return output
