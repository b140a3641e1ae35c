"""benchmark.log, as OpenViking's pipeline keeps it: every line the pipeline says, with its
time, and per question what a reader looks for there (gen: the question, its recall and
retrieval latency; eval: a block with the retrieved ids, both answers and the judge's
reasoning). Appended to, so stages run separately add up to one log."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

SEPARATOR = "-" * 60


class Log:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)

    def write(self, line: str) -> None:
        stamp = datetime.datetime.now().isoformat(sep=" ", timespec="seconds")
        with self.path.open("a", encoding="utf-8") as handle:
            handle.writelines(f"{stamp} - {part}\n" for part in line.split("\n"))

    def said(self, say: Callable[[str], None]) -> Callable[[str], None]:
        """`say`, each line logged too."""

        def both(line: str) -> None:
            say(line)
            self.write(line)

        return both


def _short(value: Any, limit: int = 80) -> str:
    text = " ".join(str(value or "").split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def gen_lines(results: Iterable[Mapping[str, Any]]) -> list[str]:
    lines = []
    for r in results:
        recall = (r.get("metrics") or {}).get("Recall")
        latency = (r.get("retrieval") or {}).get("latency_sec") or 0.0
        shown = f"{recall:.2f}" if isinstance(recall, int | float) else "n/a (no evidence)"
        lines.append(
            f"[{r.get('_global_index')}] {_short(r.get('question'))} | Recall: {shown} | "
            f"retrieval {latency * 1000:.2f} ms"
        )
    return lines


def eval_lines(records: Iterable[Mapping[str, Any]]) -> list[str]:
    lines = []
    for r in records:
        evaluation = r.get("llm_evaluation") or {}
        metrics = r.get("metrics") or {}
        lines += [
            SEPARATOR,
            f"[{r.get('_global_index')}] Question: {r.get('question')}",
            f"Retrieved: {', '.join((r.get('retrieval') or {}).get('uris') or []) or '-'}",
            f"Gold: {' | '.join(r.get('gold_answers') or [])}",
            f"Generated: {(r.get('llm') or {}).get('final_answer')}",
            f"F1: {metrics.get('F1')} | Accuracy: {metrics.get('Accuracy')} "
            f"({evaluation.get('prompt_used')})",
            f"Reasoning: {_short(evaluation.get('reasoning'), 400)}",
        ]
    return lines
