"""The reference pages cover what the code has: every public name documented, every
environment variable the commands read listed, every command's help generated."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def _hooks() -> ModuleType:
    path = ROOT / "docs/_hooks/lasagna_docs.py"
    spec = importlib.util.spec_from_file_location("lasagna_docs_hooks", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


hooks = _hooks()


def test_every_public_name_has_a_docstring() -> None:
    # The same check fails `mkdocs build` (docs/_hooks/lasagna_docs.py, on_pre_build).
    assert hooks.missing_docstrings() == []


def test_every_variable_the_commands_read_is_in_the_environment_page() -> None:
    from lasagna_cli.commands._embedders import EMBEDDER_BASE_URL
    from lasagna_cli.commands._llm import ENV_VARIABLES

    commands = ROOT / "packages/cli/src/lasagna_cli/commands"
    read = {
        name
        for path in commands.glob("*.py")
        for name in re.findall(r'\benv(?:iron)?\.get\(\s*"([A-Z][A-Z0-9_]+)"', path.read_text())
        + re.findall(r'_get\(\s*env,\s*"([A-Z][A-Z0-9_]+)"', path.read_text())
    }
    names = {*ENV_VARIABLES, EMBEDDER_BASE_URL, "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", *read}
    assert {"LASAGNA_STEP_LINES_AFTER", "OLLAMA_HOST"} <= read  # the scan finds what it should
    page = (ROOT / "docs/reference/environment.md").read_text(encoding="utf-8")
    assert sorted(n for n in names if f"`{n}`" not in page) == []


def test_the_command_reference_has_every_command() -> None:
    paths = [" ".join(p) for p in hooks.command_paths()]
    assert {"", "benchmark run", "benchmark sweep", "judge grade", "metrics squad"} <= set(paths)
    text = hooks.help_markdown()
    for path in paths:
        assert f"## `{' '.join(['lasagna', path]).strip()}`" in text
    assert "Usage: lasagna benchmark run" in text
