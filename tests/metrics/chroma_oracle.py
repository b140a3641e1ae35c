"""Chroma's chunking evaluation as the oracle of `span_metrics`: its own range functions and
its scoring method (`BaseEvaluation._scores_from_dataset_and_retrievals`), run unchanged
from the mirror of brandonstarxel/chunking_evaluation when it is on this machine.

Only those functions are taken from upstream's base_evaluation.py (by its syntax tree), so
neither chromadb nor pandas is needed: the method reads `self.questions_df.iterrows()`,
which a small stand-in gives it.

Run it as a script to derive the pinned cases from the upstream code (needs the mirror):

    uv run python tests/metrics/chroma_oracle.py

which writes tests/metrics/data/chroma_spans.json: per case, the references, the retrieved
passages and upstream's IoU, recall and precision. CI, which has no mirror, checks lasagna
against those.
"""

from __future__ import annotations

import ast
import json
import os
import random
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

MIRROR = Path(
    os.environ.get(
        "CHROMA_CHUNKING_MIRROR", "/work/.mirror/brandonstarxel+chunking_evaluation/repo"
    )
)
COMMIT = "d451fc4"
SOURCE = "chunking_evaluation/evaluation_framework/base_evaluation.py"
FIXTURE = Path(__file__).parent / "data" / "chroma_spans.json"
_FUNCTIONS = ("sum_of_ranges", "union_ranges", "intersect_two_ranges", "difference")
_METHOD = "_scores_from_dataset_and_retrievals"

Span = tuple[str, int, int]


def mirror_present() -> bool:
    return (MIRROR / "HEAD").is_file() or (MIRROR / ".git").exists()


def upstream_namespace() -> dict[str, Any]:
    """The range functions and the scoring method, compiled from upstream's file."""
    text = subprocess.run(
        ["git", f"--git-dir={MIRROR}", "show", f"{COMMIT}:{SOURCE}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    tree = ast.parse(text)
    kept: list[ast.stmt] = [
        node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name in _FUNCTIONS
    ]
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "BaseEvaluation":
            kept += [n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == _METHOD]
    assert {n.name for n in kept if isinstance(n, ast.FunctionDef)} == {*_FUNCTIONS, _METHOD}
    namespace: dict[str, Any] = {}
    exec(compile(ast.Module(body=kept, type_ignores=[]), SOURCE, "exec"), namespace)
    return namespace


class _Frame:
    """What the method reads of a pandas data frame: `iterrows()`."""

    def __init__(self, rows: Sequence[dict[str, Any]]) -> None:
        self.rows = rows

    def iterrows(self) -> Iterator[tuple[int, dict[str, Any]]]:
        yield from enumerate(self.rows)


class _Evaluation:
    def __init__(self, rows: Sequence[dict[str, Any]]) -> None:
        self.questions_df = _Frame(rows)


def upstream_scores(
    namespace: dict[str, Any], cases: Sequence[dict[str, Any]]
) -> list[tuple[float, float, float]]:
    """(iou, recall, precision) of each case, by upstream's method. A case is
    `{"corpus_id", "references": [[start, end], ...], "retrieved": [[corpus, start, end]]}`;
    every retrieved passage counts (the method's `retrieve` = their number)."""
    rows = [
        {
            "question": "",
            "corpus_id": case["corpus_id"],
            "references": [
                {"content": "", "start_index": s, "end_index": e} for s, e in case["references"]
            ],
        }
        for case in cases
    ]
    metadatas = [
        [{"corpus_id": c, "start_index": s, "end_index": e} for c, s, e in case["retrieved"]]
        for case in cases
    ]
    counts = [len(case["retrieved"]) for case in cases]
    method = namespace[_METHOD]
    iou, recall, precision = method(_Evaluation(rows), metadatas, counts)
    return list(zip(iou, recall, precision, strict=True))


def random_case(rng: random.Random) -> dict[str, Any]:
    """References in one corpus, disjoint as Chroma's data has them; passages of any size,
    overlapping or touching one another and the references, some in another corpus."""
    length = rng.choice((50, 200, 2000))
    cuts = sorted(rng.sample(range(length), 2 * rng.randint(1, 3)))
    references = [
        [cuts[i], cuts[i + 1]] for i in range(0, len(cuts), 2) if cuts[i] < cuts[i + 1]
    ] or [[0, 1]]
    retrieved = []
    for _ in range(rng.randint(1, 6)):
        start = rng.randrange(length)
        end = min(length, start + rng.randint(1, length // 2 + 1))
        if rng.random() < 0.3 and references:  # a passage touching or inside a reference
            ref = rng.choice(references)
            start, end = rng.choice(
                [(ref[1], ref[1] + 5), (max(0, ref[0] - 5), ref[0]), (ref[0], ref[1])]
            )
        end = max(end, start + 1)  # a passage holds a character at least
        corpus = "a" if rng.random() < 0.8 else "b"
        retrieved.append([corpus, start, end])
    return {"corpus_id": "a", "references": references, "retrieved": retrieved}


def edge_cases() -> list[dict[str, Any]]:
    a = "a"
    return [
        # Nothing of the evidence retrieved; a passage of another corpus at its offsets.
        {"corpus_id": a, "references": [[10, 20]], "retrieved": [["b", 10, 20]]},
        # A passage exactly the evidence; one holding it; one inside it.
        {"corpus_id": a, "references": [[10, 20]], "retrieved": [[a, 10, 20]]},
        {"corpus_id": a, "references": [[10, 20]], "retrieved": [[a, 0, 100]]},
        {"corpus_id": a, "references": [[10, 20]], "retrieved": [[a, 12, 15]]},
        # Passages touching the evidence at either end (no character shared).
        {"corpus_id": a, "references": [[10, 20]], "retrieved": [[a, 0, 10], [a, 20, 30]]},
        # Overlapping passages (an overlapping chunker): their lengths are summed.
        {"corpus_id": a, "references": [[10, 20]], "retrieved": [[a, 0, 15], [a, 5, 25]]},
        # The same passage twice.
        {"corpus_id": a, "references": [[10, 20]], "retrieved": [[a, 5, 15], [a, 5, 15]]},
        # Evidence over two adjacent passages; two references, one passage each.
        {"corpus_id": a, "references": [[10, 30]], "retrieved": [[a, 0, 20], [a, 20, 40]]},
        {
            "corpus_id": a,
            "references": [[10, 20], [40, 50]],
            "retrieved": [[a, 15, 25], [a, 35, 45], ["b", 0, 1000]],
        },
        # A reference of no character beside one of ten.
        {"corpus_id": a, "references": [[5, 5], [10, 20]], "retrieved": [[a, 0, 12]]},
    ]


def derive() -> list[dict[str, Any]]:
    rng = random.Random(20240701)
    cases = edge_cases() + [random_case(rng) for _ in range(300)]
    namespace = upstream_namespace()
    for case, (iou, recall, precision) in zip(
        cases, upstream_scores(namespace, cases), strict=True
    ):
        case["upstream"] = {"iou": iou, "recall": recall, "precision": precision}
    return cases


if __name__ == "__main__":
    source = json.dumps(f"brandonstarxel/chunking_evaluation@{COMMIT}:{SOURCE}")
    lines = ",\n".join(json.dumps(case, separators=(",", ":")) for case in derive())
    FIXTURE.write_text(f'{{"source": {source},\n"cases": [\n{lines}\n]}}\n')
    print(f"wrote {FIXTURE}")
