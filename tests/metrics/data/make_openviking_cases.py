"""Writes openviking_cases.json: inputs and what OpenViking's own metrics give for them.

The oracle of lasagna's OpenViking figures and of evidence_recall is OpenViking's RAG
benchmark itself, benchmark/RAG/src/core/metrics.py at the commit lasagna matches. Its
values are pinned here from running that file (read from the fetched repository, never
copied into this one), so the tests need neither the repository nor a copy of its code:

    uv run python tests/metrics/data/make_openviking_cases.py [MIRROR]

MIRROR defaults to where the fetch tool puts it, /work/.mirror/volcengine+OpenViking/repo.
Cases are seeded; each group's texts are shaped like the hypothesis strategies the tests
used before (tokens OpenViking treats specially: "the", "and", commas, "[D1:30]"...).
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from types import ModuleType

COMMIT = "6e944cc"
MIRROR = Path("/work/.mirror/volcengine+OpenViking/repo")
OUT = Path(__file__).with_name("openviking_cases.json")

SPECIAL = ["the", "and", "AND", "a,b", "none", "D1:3", "[D1:30]", "x-y", "é"]
CHARS = "abcxyzAND .,;:'-_()[]«»’é1ñ\u00a0\tD"
TRICKY = ["the", "And", "a", "«the»", "the’s", "_the", "an_", "x.the", "é", " ", ","]


def upstream(mirror: Path) -> type:
    source = subprocess.run(
        ["git", "-C", str(mirror), "show", f"{COMMIT}:benchmark/RAG/src/core/metrics.py"],
        capture_output=True, check=True, text=True,
    ).stdout  # fmt: skip
    module = ModuleType("openviking_metrics")
    exec(compile(source, "metrics.py", "exec"), module.__dict__)
    return module.MetricsCalculator  # type: ignore[no-any-return]


def chars(rng: random.Random, most: int) -> str:
    return "".join(rng.choice(CHARS) for _ in range(rng.randint(0, most)))


def text(rng: random.Random) -> str:
    """Up to 8 words, each a special token or up to 6 random characters."""
    words = [rng.choice(SPECIAL) if rng.random() < 0.5 else chars(rng, 6) for _ in range(8)]
    return " ".join(words[: rng.randint(0, 8)])


def phrase(rng: random.Random) -> str:
    """Words of 3 characters (or "the", "and"...): no evidence item cuts a word."""
    pool = ["the", "and", "The", "AND", "a,b"]
    words = [
        rng.choice(pool) if rng.random() < 0.4 else "".join(rng.choices("abcAnd,.'-é1", k=3))
        for _ in range(rng.randint(0, 10))
    ]
    return " ".join(words)


def main() -> None:
    calc = upstream(Path(sys.argv[1]) if len(sys.argv) > 1 else MIRROR)
    rng = random.Random(20261203)
    cases: dict[str, list] = {"commit": [COMMIT], "f1": [], "refusal": [], "recall": []}
    cases |= {"recall_no_cut": [], "recall_any_text": [], "normalize": []}
    for _ in range(300):
        p, r = text(rng), text(rng)
        cases["f1"].append([p, r, calc.calculate_f1(p, r)])
        t = text(rng)
        cases["refusal"].append([t, calc.check_refusal(t)])
        chunks = [text(rng) for _ in range(rng.randint(0, 4))]
        evidence = [text(rng) for _ in range(rng.randint(0, 5))]
        cases["recall"].append([chunks, evidence, calc.check_recall(chunks, evidence)])
        chunks = [phrase(rng) for _ in range(rng.randint(0, 5))]
        evidence = [phrase(rng) for _ in range(rng.randint(1, 6))]
        threshold, least = rng.choice([0.0, 0.5, 0.8, 1.0]), rng.randint(0, 6)
        found = calc.check_recall(chunks, evidence, threshold, least)
        cases["recall_no_cut"].append([chunks, evidence, threshold, least, found])
        chunks = [chars(rng, 30) for _ in range(rng.randint(0, 4))]
        evidence = [chars(rng, 12) for _ in range(rng.randint(1, 5))]
        cases["recall_any_text"].append([chunks, evidence, calc.check_recall(chunks, evidence)])
        t = chars(rng, 60) if rng.random() < 0.5 else "".join(rng.choices(TRICKY, k=12))
        cases["normalize"].append([t, calc.normalize_answer(t)])
    # The behaviours lasagna's own rules differ from, each as OpenViking gives it.
    cases["named"] = [
        ["check_recall", [["Caroline said hi [D1:30]"], ["D1:3"]], 1.0],
        ["check_recall", [["anything"], []], 0.0],
        ["check_refusal", ["Nonetheless, Paris."], True],
        ["calculate_f1", ["salt and pepper", "salt, pepper"], 1.0],
    ]
    for name, args, expected in cases["named"]:
        assert getattr(calc, name)(*args) == expected, (name, args)
    OUT.write_text(json.dumps(cases, ensure_ascii=False, separators=(",", ":")) + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
