"""`benchmark run --dry-run`: the plan and the calls per role, priced, with no call made and
nothing written; the calls it counts are the calls the same run then makes at the wire."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests._fake_env import run_benchmark as run

from lasagna_judge.testing import FakeLLMServer

PASTA = str(Path(__file__).resolve().parents[2] / "examples" / "data" / "pasta.jsonl")
PRICES = {"fake": [1.0, 2.0], "judge-a": [10.0, 20.0]}


def reply(request: dict[str, Any]) -> str:
    """Generator, grader and claim judge: a text's claims are its comma-separated parts (so
    no two calls of a task are the same request, which the cache would answer once)."""
    prompt = str(request["messages"][-1]["content"])
    if prompt.startswith("Break the text"):
        text = prompt.split("Text:\n", 1)[1]
        return json.dumps({"claims": [c.strip() for c in text.split(",") if c.strip()]})
    if prompt.startswith("For each numbered claim"):
        claims = prompt.split("Claims:\n", 1)[1].strip().splitlines()
        return json.dumps({"labels": ["neutral"] * len(claims)})
    if prompt.startswith("Does the answer below address"):
        return json.dumps({"relevance": "relevant"})
    if "Answer to grade:" in json.dumps(request["messages"]):
        return json.dumps({"reasoning": "compared", "score": 4})
    return "flat pasta sheets, baked in the oven"


def flags(out: Path, *more: str) -> list[str]:
    return ["run", PASTA, "--generator", "openai/fake", "--judge", "openai/judge-a",
            "--judge", "openai/judge-b", "--diagnostics", "--top-k", "3", "-o", str(out),
            *more]  # fmt: skip


def test_the_dry_run_counts_the_calls_the_run_then_makes(tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps(PRICES), encoding="utf-8")
    out = tmp_path / "run"
    with FakeLLMServer(reply=reply) as server:
        planned = run(tmp_path, server, *flags(out, "--dry-run", "--prices", str(prices)))
        assert planned.exit_code == 0, planned.output
        assert server.calls == 0 and not out.exists()  # nothing called, nothing written
        real = run(tmp_path, server, *flags(out))
        assert real.exit_code == 0, real.output
        asked = server.requests
    text = planned.output
    assert "local/pasta@" in text and "x bm25-k3+openai-fake: 14" in text
    rows = {
        (m["role"], m["model"]): tuple(int(n.replace(",", "")) for n in m.group(3, 4, 5))
        for m in re.finditer(
            r"^(?P<role>\w+) (?P<model>\S+): ([\d,]+) calls(?: at most)?, ~([\d,]+) input "
            r"tokens, at most ([\d,]+) output",
            text,
            re.M,
        )
    }

    def made(model: str, kind: str) -> int:
        def is_kind(r: dict[str, Any]) -> bool:
            content = json.dumps(r["messages"])
            claims = any(
                k in content
                for k in ("Break the text", "For each numbered claim", "Does the answer")
            )
            grade = "Answer to grade:" in content
            return {"claims": claims, "judge": grade, "generator": not (claims or grade)}[kind]

        return sum(1 for r in asked if r["model"] == model and is_kind(r))

    assert rows[("generator", "openai/fake")][0] == made("fake", "generator") == 14
    assert rows[("judge", "openai/judge-a")][0] == made("judge-a", "judge")
    assert rows[("judge", "openai/judge-b")][0] == made("judge-b", "judge")
    # At most 2 + 2 x (3 + 1) per answer with a reference, 2 + 3 without (pasta has 2 such
    # rows): fewer where BM25 finds under 3 passages, and a request asked twice is cached.
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))["results"][0]
    claims = rows[("claims", "openai/judge-a")][0]
    assert claims == 12 * 10 + 2 * 5
    made_claims = results["metrics"]["diagnostics"]["calls"]["made"]
    assert claims >= made_claims >= made("judge-a", "claims") > 0.9 * claims
    # The cost at most: each priced model's tokens at its price; judge-b has none.
    expected = sum(
        (tin * PRICES[model.split("/")[1]][0] + tout * PRICES[model.split("/")[1]][1]) / 1e6
        for (_, model), (_, tin, tout) in rows.items()
        if model != "openai/judge-b"
    )
    assert f"cost at most: ${expected:.4f} (no price for openai/judge-b: not counted)" in text


def test_a_dry_run_without_models_says_so(tmp_path: Path) -> None:
    with FakeLLMServer(reply=reply) as server:
        found = run(tmp_path, server, "run", PASTA, "--dry-run")
    assert found.exit_code == 0, found.output
    assert "model calls: none (retrieval only)" in found.output
