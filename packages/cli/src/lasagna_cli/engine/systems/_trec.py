"""`--predictions RUN` given a TREC run file, as trec_eval, ranx, ir_measures and Pyserini
write it (and `benchmark export --format trec` does):

    q01 Q0 lasagna 1 12.5 my-run

six whitespace-separated fields per line: query id, the literal Q0 (or 0), document id,
rank, score, run tag. A question's ranking is its documents by score, highest first (ties
by rank), as trec_eval orders them; the run tag is not used. Such a file holds rankings
only: the retrieval track, scored against the data's own judgments (qrels). Any line that is
not six such fields is an error naming the line.
"""

from __future__ import annotations


def is_trec_run(text: str) -> bool:
    """Whether the file's first line is a TREC run line (JSONL starts with "{")."""
    for line in text.splitlines():
        if line.strip():
            fields = line.split()
            return len(fields) == 6 and fields[1] in ("Q0", "0") and _number(fields[4])
    return False


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def read_trec_run(label: str, text: str) -> dict[str, tuple[int, list[str]]]:
    """Each query's (first line, documents best first); DataError lists every bad line."""
    from lasagna_synth import DataError

    problems: list[str] = []
    found: dict[str, list[tuple[float, int, str]]] = {}
    first_line: dict[str, int] = {}
    seen: set[tuple[str, str]] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 6 or fields[1] not in ("Q0", "0"):
            problems.append(
                f"{label} line {number}: expected a TREC run line 'qid Q0 doc rank score tag', "
                f"found {line.strip()[:80]!r}"
            )
            continue
        qid, _, doc, rank, score, _tag = fields
        try:
            value, position = float(score), int(rank)
        except ValueError:
            found_text = f"{rank!r} and {score!r}"
            problems.append(f"{label} line {number}: rank and score must be numbers, {found_text}")
            continue
        if (qid, doc) in seen:
            problems.append(f"{label} line {number}: document {doc!r} is ranked twice for {qid!r}")
            continue
        seen.add((qid, doc))
        found.setdefault(qid, []).append((value, position, doc))
        first_line.setdefault(qid, number)
    if not problems and not found:
        problems.append(f"{label}: the file has no rankings")
    if problems:
        raise DataError(label, problems)
    return {
        qid: (first_line[qid], [doc for _, _, doc in sorted(entries, key=lambda e: (-e[0], e[1]))])
        for qid, entries in found.items()
    }
