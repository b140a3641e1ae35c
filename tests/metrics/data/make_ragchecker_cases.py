"""Writes ragchecker_cases.json: label sets and the metrics RAGChecker's own functions give.

ragchecker pulls torch, spacy and transformers (through refchecker), too heavy for a test
group, so its metric functions were run once in a scratch venv and their values pinned:

    uv venv /tmp/rc && VIRTUAL_ENV=/tmp/rc uv pip install --no-deps ragchecker==0.1.9 \
        numpy dataclasses-json marshmallow typing-inspect typing-extensions mypy-extensions
    /tmp/rc/bin/python tests/metrics/data/make_ragchecker_cases.py

`ragchecker.computation` is loaded without the package's `__init__` (which imports the
refchecker evaluator). Labels are RAGChecker's spelling ("Entailment"); cases are seeded.
"""

import importlib.util
import json
import random
import sys
import types
from pathlib import Path

site = Path(importlib.util.find_spec("ragchecker").origin).parent
package = types.ModuleType("rc")
package.__path__ = [str(site)]
sys.modules["rc"] = package
for name in ("metrics", "container", "computation"):
    spec = importlib.util.spec_from_file_location(f"rc.{name}", site / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[f"rc.{name}"] = module
    spec.loader.exec_module(module)
computation = sys.modules["rc.computation"]
RAGResult = sys.modules["rc.container"].RAGResult

LABELS = ["Entailment", "Neutral", "Contradiction"]


def case(rng: random.Random, n_response: int, n_answer: int, n_passages: int) -> dict:
    pick = lambda: rng.choice(LABELS)  # noqa: E731
    return {
        "answer2response": [pick() for _ in range(n_response)],
        "response2answer": [pick() for _ in range(n_answer)],
        "retrieved2answer": [[pick() for _ in range(n_passages)] for _ in range(n_answer)],
        "retrieved2response": [[pick() for _ in range(n_passages)] for _ in range(n_response)],
    }


rng = random.Random(2408_08067)
cases = [case(rng, rng.randint(1, 6), rng.randint(1, 6), rng.randint(1, 5)) for _ in range(40)]
cases += [case(rng, 0, 3, 2), case(rng, 3, 0, 2), case(rng, 2, 2, 1)]
cases.append({k: v for k, v in case(rng, 3, 3, 3).items()})
cases[-1]["retrieved2answer"] = [["Neutral"] * 3] * 3  # nothing recalled
for item in cases:
    result = RAGResult(query_id="q", query="q", gt_answer="a", response="r", retrieved_context=[])
    for key, value in item.items():
        setattr(result, key, value)
    for func in computation.METRIC_FUNC_MAP.values():
        func(result)
    item["metrics"] = {k: float(v) for k, v in result.metrics.items()}
out = Path(__file__).with_name("ragchecker_cases.json")
out.write_text(json.dumps(cases, indent=1) + "\n")
print(f"{len(cases)} cases -> {out}")
