"""The shape of the code, checked by the build: no import cycle anywhere, modules split by job
(never by a line count), and an engine that a notebook can import without the command line.

The arrows between packages and layers are import-linter contracts (pyproject.toml,
`uv run lint-imports` in .ci/run); these tests add what import-linter does not check.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("lasagna_cli", "lasagna_synth", "lasagna_judge", "lasagna_metrics")


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(module: str) -> None:
        index[module] = low[module] = counter[0]
        counter[0] += 1
        stack.append(module)
        on_stack.add(module)
        for imported in graph.find_modules_directly_imported_by(module):
            if imported not in graph.modules:
                continue
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_no_import_cycle_between_modules_anywhere() -> None:
    # Every import counts: module level, inside functions and under TYPE_CHECKING.
    graph = grimp.build_graph(*PACKAGES, include_external_packages=False)
    assert _cycles(graph) == []


def _modules() -> list[Path]:
    return sorted((ROOT / "packages").glob("*/src/*/**/*.py"))


# A module is split by job, never by a line count: a stem that is another module's of the same
# folder plus one of these says only that the file grew too long.
SIZE_SUFFIX = re.compile(r"_?(\d+|gaps|more|rest|extra|cont|continued|overflow|part\d*)")


def _split_by_size(paths: list[Path]) -> list[str]:
    """Every module named as the continuation of another module of its folder."""
    stems: dict[Path, set[str]] = {}
    for path in paths:
        stems.setdefault(path.parent, set()).add(path.stem)
    found = []
    for path in paths:
        for other in stems[path.parent] - {path.stem}:
            rest = path.stem.removeprefix(other)
            if rest != path.stem and SIZE_SUFFIX.fullmatch(rest):
                found.append(str(path.relative_to(ROOT)))
    return sorted(found)


def test_the_rule_for_split_by_size_finds_a_continuation() -> None:
    folder = ROOT / "packages" / "x" / "src" / "x"
    names = ["_run.py", "_run_gaps.py", "_run2.py", "_read.py", "_read_kag.py", "_batch.py"]
    assert _split_by_size([folder / n for n in names]) == [
        "packages/x/src/x/_run2.py",
        "packages/x/src/x/_run_gaps.py",
    ]


def test_no_module_is_split_from_another_only_by_size() -> None:
    assert _split_by_size(_modules()) == [], (
        "named as the rest of another module; a module has one job and a name that says it: "
        "merge it back, or name it by what it does"
    )


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_module_says_its_job_in_its_docstring_first_line(path: Path) -> None:
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    first = docstring.strip().split("\n\n", 1)[0]
    assert first.strip(), f"{path.relative_to(ROOT)}: no docstring; say what the module does"
    assert not re.search(r"\b(under|over) (the )?\d+[- ]lines?\b|line (cap|limit)", docstring), (
        f"{path.relative_to(ROOT)}: its docstring speaks of its length; say its job"
    )


def test_the_engine_imports_without_typer_or_rich() -> None:
    code = (
        "import sys, lasagna_cli, lasagna_cli.engine._pipeline, lasagna_cli.engine.kag, "
        "lasagna_cli.engine.staged; "
        "print(sorted(m for m in ('typer', 'rich', 'click') if m in sys.modules))"
    )
    found = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert found.strip() == "[]"


def test_the_engine_reads_no_environment_variable_and_prints_nothing() -> None:
    # Only the commands read the environment (lasagna_cli.commands._llm, mostly) and talk to
    # the terminal; the engine reports through the callbacks it is given.
    engine = ROOT / "packages" / "cli" / "src" / "lasagna_cli" / "engine"
    for path in sorted(engine.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for needle in ("os.environ", "os.getenv", "getenv(", "sys.stderr", "sys.stdout"):
            assert needle not in text, f"{path.relative_to(ROOT)} uses {needle}"
        calls = [
            node
            for node in ast.walk(ast.parse(text))
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "print"
        ]
        assert not calls, f"{path.relative_to(ROOT)} prints"
