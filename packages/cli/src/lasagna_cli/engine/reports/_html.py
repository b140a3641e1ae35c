"""The self-contained HTML report: one file that opens from file:// with no network.

Everything is inline: the style, the page's script (`assets/report.js`), the charting
runtime (Vega and Vega-Lite's minified builds from the npm registry, vendored in
`assets/`, see vendor.json) and the results (`_report_payload`) as JSON in a
`<script type="application/json">` element. A Content-Security-Policy forbids every
fetch, so the page cannot reach the network even by mistake (Vega compiles its
expressions with `Function`, hence 'unsafe-eval').

Untrusted text (questions, answers, passages, judge reasoning, errors, setup names: they
come from documents and models) never becomes markup: in the JSON, `<`, `>` and `&` are
written as \\u escapes, so no `</script>` can end the element, and the script puts every
string in the page as text (`textContent`), never as HTML.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any

import orjson

from lasagna_cli.engine.reports._run_data import RunData

_SOURCE_MAP = re.compile(r"//# sourceMappingURL=\S+\s*$")
_CSP = (
    "default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; "
    "style-src 'unsafe-inline'; img-src data: blob:; font-src data:"
)


def _asset(name: str) -> str:
    return (files("lasagna_cli.engine.reports") / "assets" / name).read_text(encoding="utf-8")


def _inline_script(text: str) -> str:
    # A script's text ends at the first "</script"; the vendored builds hold none (the
    # test checks), this keeps it so for any future build.
    return _SOURCE_MAP.sub("", text).replace("</script", "<\\/script")


def _json_bytes(data: Any) -> bytes:
    """Compact UTF-8 JSON, by orjson (far faster than json.dumps on a large run's
    report); what it cannot write (an integer past 64 bits, a key that is not
    a string, a lone surrogate) json.dumps writes or refuses as before. A value that is
    not a number (NaN, infinite) becomes null, as JSON has none (json.dumps stopped the
    whole report on it)."""
    try:
        return orjson.dumps(data)
    except TypeError:
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return text.encode("utf-8")


_UNSAFE = ((b"<", b"\\u003c"), (b">", b"\\u003e"), (b"&", b"\\u0026"))
# U+2028 and U+2029 (UTF-8 e2 80 a8, e2 80 a9; JavaScript once read them as line ends): one
# search for both, faster than two `in`s over a large run's page.
_SEPARATORS = re.compile(b"\xe2\x80[\xa8\xa9]")


def json_for_html(data: Any) -> bytes:
    """UTF-8 JSON that is safe inside a <script> element: no "<", ">" or "&" as such. (A
    large run's page is tens of megabytes: each replacement is made only where its character occurs,
    and the page stays bytes, never a second copy as text.)"""
    encoded = _json_bytes(data)
    for unsafe, escaped in _UNSAFE:
        if unsafe in encoded:
            encoded = encoded.replace(unsafe, escaped)
    if _SEPARATORS.search(encoded):
        encoded = encoded.replace("\u2028".encode(), b"\\u2028")
        encoded = encoded.replace("\u2029".encode(), b"\\u2029")
    return encoded


def _escape(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )


def page_parts(payload: Mapping[str, Any], note: str | None = None) -> list[bytes]:
    """The page, UTF-8, in three parts (head, data, scripts): a large run's page is written
    part by part, never copied into one. `note` (a scripted model's) heads the page."""
    title = _escape(str(payload.get("title", "lasagna report")))
    shown = f'<p id="scripted" role="note">{_escape(note)}</p>' if note else ""
    head = "".join(
        [
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
            f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">\n',
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
            f"<title>{title}</title>\n<style>\n{_asset('report.css')}</style>\n</head>\n",
            f'<body>\n<header><h1 id="title">{title}</h1><p id="subtitle"></p>{shown}</header>\n',
            '<main id="app"><p id="loading">Loading the report…</p></main>\n',
            '<script type="application/json" id="lasagna-data">',
        ]
    )
    tail = "".join(
        [
            "</script>\n<script>\n",
            _inline_script(_asset("vega.min.js")),
            "\n</script>\n<script>\n",
            _inline_script(_asset("vega-lite.min.js")),
            "\n</script>\n<script>\n",
            _inline_script(_asset("report.js")),
            "\n</script>\n</body>\n</html>\n",
        ]
    )
    return [head.encode("utf-8"), json_for_html(payload), tail.encode("utf-8")]


def build_report(
    runs: Sequence[RunData],
    *,
    compare: bool = True,
    title: str | None = None,
) -> bytes:
    """The report of these run folders' results, with each benchmark's paired comparisons
    (its first result against each other one of the same comparability key)."""
    return b"".join(report_parts(runs, compare=compare, title=title))


def write_report(runs: Sequence[RunData], target: Path, *, title: str | None = None) -> str:
    """The report of `runs` written to `target` (whole or absent), and the line that says
    what it holds. Not fsynced: it is made again from the run folders in seconds."""
    from lasagna_synth import atomic_writer

    parts = report_parts(runs, title=title)
    with atomic_writer(target, sync=False) as handle:
        handle.writelines(parts)
    questions = sum(len(r.get("per_query", ())) for run in runs for r in run.results)
    return (
        f"report: {target} ({sum(map(len, parts)) / 1e6:.1f} MB; {questions:,} answers of "
        f"{sum(len(run.results) for run in runs)} benchmark/setup results); open it in a "
        "browser, no network needed"
    )


def report_parts(
    runs: Sequence[RunData],
    *,
    compare: bool = True,
    title: str | None = None,
) -> list[bytes]:
    """`build_report`'s page in the parts of `page_parts`."""
    from lasagna_cli.engine.reports._report_payload import headline_metrics, report_payload

    comparisons: list[dict[str, Any]] = []
    if compare:
        comparisons = report_comparisons(runs, headline_metrics)
    labels = ", ".join(run.label for run in runs)
    payload = report_payload(runs, comparisons, title or f"lasagna report: {labels}")
    from lasagna_cli.engine.reports._scripted import scripted_note_of

    return page_parts(payload, scripted_note_of(r for run in runs for r in run.results))


def report_comparisons(runs: Sequence[RunData], headline: Any) -> list[dict[str, Any]]:
    from lasagna_cli.engine.reports._compare import Job, Side, compare_pairs, group_key
    from lasagna_cli.engine.reports._run_data import metric_names

    groups: dict[tuple[str, str], list[Side]] = {}
    for run in runs:
        for result in run.results:
            key = (str(result["dataset"]["name"]), group_key(result))
            groups.setdefault(key, []).append(Side(run, result))
    jobs: list[tuple[int, Job]] = []  # (seed, job)
    for sides in groups.values():
        first = sides[0]
        for other in sides[1:]:
            common = [m for m in metric_names(first.result) if m in metric_names(other.result)]
            chosen = headline(common)
            if chosen:
                jobs.append((first.run.seed, (first, other, chosen)))
    found: list[dict[str, Any]] = [{} for _ in jobs]
    for seed in dict.fromkeys(seed for seed, _ in jobs):  # the jobs of one seed draw together
        mine = [i for i, (s, _) in enumerate(jobs) if s == seed]
        done = compare_pairs([jobs[i][1] for i in mine], seed=seed)
        for i, comparison in zip(mine, done, strict=True):
            found[i] = comparison
    return found
