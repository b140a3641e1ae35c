"""`benchmark run --diagnostics` against the fake server: the judge's claims and checks on
each generated answer, RAGChecker's metrics in results.json (with intervals, the calls
counted), in `compare` and in the report's retriever-vs-generator table; a resumed run that
turns them on regrades without generating again."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from tests._fake_env import run_benchmark as run

from lasagna_judge import CLAIMS_PROMPT
from lasagna_judge.testing import FakeLLMServer
from lasagna_metrics import CLAIM_METRICS, claim_metrics

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "data"
PASTA = str(EXAMPLES / "pasta.jsonl")
TOP_K = 3


def _after(prompt: str, name: str) -> str:
    found = re.search(rf"{name}:\n(.*?)(?:\n\n|$)", prompt, re.S)
    assert found, prompt
    return found.group(1)


def reply(request: dict[str, Any]) -> str:
    """Generator, grader and claim judge. A text's claims are its comma-separated parts; a
    premise entails a claim that it contains, word for word."""
    prompt = str(request["messages"][-1]["content"])
    if prompt.startswith("Break the text"):
        text = _after(prompt, "Text")
        return json.dumps({"claims": [c.strip() for c in text.split(",") if c.strip()]})
    if prompt.startswith("For each numbered claim"):
        premise = _after(prompt, "Premise").lower()
        claims = [line.split(". ", 1)[1] for line in _after(prompt, "Claims").splitlines()]
        labels = ["entailment" if c.lower() in premise else "neutral" for c in claims]
        return json.dumps({"labels": labels})
    if prompt.startswith("Does the answer below address"):
        return json.dumps({"relevance": "partial"})
    if "Answer to grade:" in json.dumps(request["messages"]):
        return json.dumps({"reasoning": "compared", "score": 4})
    return "flat pasta sheets, baked in the oven, from Mars"


def flags(out: Path, *more: str) -> list[str]:
    return ["run", PASTA, "--generator", "openai/fake", "--judge", "openai/fake-judge",
            "--top-k", str(TOP_K), "-o", str(out), *more]  # fmt: skip


def records(out: Path) -> dict[str, dict[str, Any]]:
    found = {}
    for path in (out / "tasks").rglob("*.json"):
        record = json.loads(path.read_text(encoding="utf-8"))
        found[record["task"]["item"]] = record
    return found


def test_every_answer_is_diagnosed_and_summarised_with_intervals(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeLLMServer(reply=reply) as server:
        result = run(tmp_path, server, *flags(out, "--diagnostics"))
        assert result.exit_code == 0, result.output
    (found,) = json.loads((out / "results.json").read_text(encoding="utf-8"))["results"]
    assert found["held_fixed"]["judge"]["diagnostics"] == CLAIMS_PROMPT
    diagnostics = found["metrics"]["diagnostics"]
    by_id = records(out)
    per_query = {q["id"]: q for q in found["per_query"]}
    made = 0
    for item, record in by_id.items():
        section = record["generation"]["diagnostics"]
        labels = {k: section[k] for k in ("answer2response", "response2answer",
                                          "retrieved2answer", "retrieved2response")}  # fmt: skip
        found_metrics = dict(per_query[item]["diagnostics"])
        found_metrics.pop("answer_relevance", None)
        assert found_metrics == claim_metrics(**labels)
        passages = len(record["retrieval"]["ranking"][:TOP_K])
        claims = len(section["response_claims"])
        assert claims == 3
        if record["generation"]["unanswerable"]:  # no reference: faithfulness, relevance
            assert section["reference_claims"] is None
            assert section["calls"] == 2 + passages
            assert section["relevance"] == "partial"
            assert per_query[item]["diagnostics"]["answer_relevance"] == 0.5
        else:
            refs = section["reference_claims"]
            assert section["calls"] == 2 + (passages + 1) * (1 + (1 if refs else 0))
        made += section["calls"]
    assert diagnostics["calls"] == {
        "answers": 14, "made": made, "unparsed": 0, "error": 0, "claims_cut": 0,
    }  # fmt: skip
    for name in CLAIM_METRICS:
        values = [q["diagnostics"][name] for q in per_query.values()]
        present = [v for v in values if v is not None]
        one = diagnostics[name]
        assert one["count"] == len(present) and one["missing"] == len(values) - len(present)
        assert one["mean"] == pytest.approx(sum(present) / len(present))
        assert one["ci95_low"] <= one["mean"] <= one["ci95_high"]
    # "from Mars" is in no passage and no reference: a hallucination in every answer.
    assert diagnostics["hallucination"]["mean"] > 0
    assert found["usage"]["diagnostics_input_tokens"] > 0

    report = run(tmp_path, server, "report", str(out))
    assert report.exit_code == 0, report.output
    page = (out / "report.html").read_text(encoding="utf-8")
    data = json.loads(re.search(r'id="lasagna-data">(.*?)</script>', page, re.S).group(1))
    (shown,) = data["groups"][0]["results"]
    rows = {row["metric"]: row for row in shown["diagnosis"]["rows"]}
    assert [r["group"] for r in shown["diagnosis"]["rows"]].count("retriever") == 2
    assert rows["hallucination"]["lower_is_better"]
    assert rows["claim_recall"]["ci95_low"] == diagnostics["claim_recall"]["ci95_low"]
    assert "diagnosis: retriever vs generator" in page


def test_resumed_with_diagnostics_regrades_without_generating_again(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeLLMServer(reply=reply) as server:
        assert run(tmp_path, server, *flags(out)).exit_code == 0
        first = server.calls
        again = run(tmp_path, server, *flags(out, "--diagnostics", "--resume"))
        assert again.exit_code == 0, again.output
        asked = server.requests[first:]
        other = tmp_path / "other"
        before = server.calls
        assert run(tmp_path, server, *flags(other, "--diagnostics")).exit_code == 0
        assert server.calls == before  # the same run again: every call from the cache
        diffed = run(tmp_path, server, "compare", str(out), str(other))
        # Resumed without them, the records keep no stale diagnosis.
        assert run(tmp_path, server, *flags(other, "--resume")).exit_code == 0
    assert all("diagnostics" not in r["generation"] for r in records(other).values())
    plain = json.loads((other / "results.json").read_text(encoding="utf-8"))["results"][0]
    assert "diagnostics" not in plain["metrics"] and "diagnostics" not in plain["per_query"][0]
    assert diffed.exit_code == 0, diffed.output
    assert "diagnostics/faithfulness" in diffed.output
    generated = [r for r in asked if "Passages:" in r["messages"][-1]["content"]]
    assert generated == []  # the answers stand: only the judge was asked
    by_id = records(out)
    assert all(r["generation"]["diagnostics"]["calls"] > 0 for r in by_id.values())
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))["results"][0]
    assert results["metrics"]["diagnostics"]["calls"]["answers"] == 14


def test_diagnostics_need_a_judge(tmp_path: Path) -> None:
    with FakeLLMServer(reply=reply) as server:
        result = run(tmp_path, server, "run", PASTA, "--generator", "openai/fake",
                     "--diagnostics", "-o", str(tmp_path / "x"))  # fmt: skip
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "--diagnostics needs a judge" in lines[0], result.output
    assert "Traceback" not in result.output


def test_a_sweep_file_turns_them_on(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(
        f"benchmarks: [{{path: {PASTA}}}]\n"
        "setups:\n  - name: bm25\n    generator: openai/fake\n"
        "judge: openai/fake-judge\ndiagnostics: true\nn_samples: 2\n",
        encoding="utf-8",
    )
    out = tmp_path / "sweep"
    with FakeLLMServer(reply=reply) as server:
        result = run(tmp_path, server, "run", str(sweep), "-o", str(out))
    assert result.exit_code == 0, result.output
    (found,) = json.loads((out / "results.json").read_text(encoding="utf-8"))["results"]
    assert found["metrics"]["diagnostics"]["calls"]["answers"] == 2
    bad = tmp_path / "bad.yaml"
    bad.write_text(sweep.read_text().replace("judge: openai/fake-judge\n", ""), encoding="utf-8")
    with FakeLLMServer(reply=reply) as server:
        refused = run(tmp_path, server, "run", str(bad), "-o", str(tmp_path / "b"))
    assert refused.exit_code == 2 and "bad.yaml: diagnostics needs a judge" in refused.output


def test_an_answer_over_max_chars_is_not_sent_and_counted(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeLLMServer(reply=reply) as server:
        result = run(
            tmp_path, server, *flags(out, "--diagnostics", "--max-chars", "200", "-n", "3")
        )
        assert result.exit_code == 0, result.output
        claim_calls = [r for r in server.requests if "claim" in r["messages"][-1]["content"][:40]]
    (found,) = json.loads((out / "results.json").read_text(encoding="utf-8"))["results"]
    calls = found["metrics"]["diagnostics"]["calls"]
    unsent = [r for r in records(out).values() if r["generation"]["diagnostics"]["calls"] == 0]
    # Every passage is longer than 200 characters; the grades (no passage) are still sent.
    assert len(unsent) == 3 and calls["error"] == 3
    assert all(r["generation"]["judge"]["status"] == "ok" for r in records(out).values())
    assert all("over --max-chars 200" in r["generation"]["diagnostics"]["error_messages"][0]
               for r in unsent)  # fmt: skip
    assert found["metrics"]["diagnostics"]["precision"]["missing"] >= len(unsent)
    assert claim_calls == [] and calls["made"] == 0


def test_from_python(tmp_path: Path) -> None:
    import asyncio

    from lasagna_cli import EngineUsageError, arun_benchmark
    from lasagna_judge import make_llm

    async def main() -> Any:
        llm = make_llm("openai/fake", base_url=server.base_url, api_key="test", cache=False)
        models: dict[str, Any] = {"llms": {"openai/fake": llm}, "generator": "openai/fake"}
        try:
            found = await arun_benchmark(
                PASTA, tmp_path / "api", judge=llm, diagnostics=True, **models
            )
            with pytest.raises(EngineUsageError, match="diagnostics needs a judge"):
                await arun_benchmark(PASTA, tmp_path / "no", diagnostics=True, **models)
            return found
        finally:
            await llm.aclose()

    with FakeLLMServer(reply=reply) as server:
        results = asyncio.run(main())
    (found,) = results.results
    assert found.metric("diagnostics", "faithfulness").count == 14
    assert found.per_query[0].diagnostics is not None


def test_claims_cut_to_the_judges_bounds_are_said_in_a_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from lasagna_cli.commands._run import say_gaps

    calls = {"answers": 2, "made": 12, "unparsed": 0, "error": 0, "claims_cut": 9_996}
    result = {
        "metrics": {"diagnostics": {"calls": calls}},
        "per_query": [],
        "counts": {"failed": 0, "not_run": 0},
    }
    assert say_gaps([result], tmp_path) is False
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("9,996 claim(s) of the judge's diagnosis cut to its bounds")
    assert "at most 64 an answer, 500 characters each" in line
