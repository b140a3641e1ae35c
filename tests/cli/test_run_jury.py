"""`benchmark run --judge A --judge B`: a jury against the fake server. Each judge's grades,
the jury's (the mean of the parsed grades, `judge grade`'s rule) and Krippendorff's alpha
between them in results.json; each judge's score in compare and the report; a resumed run
asks again only the judge whose grade failed, keeping the others' grades from the records."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests._fake_env import run_benchmark as run

from lasagna_cli.engine.reports import read_run
from lasagna_judge.testing import FakeLLMServer, Fault
from lasagna_metrics import krippendorff_alpha

PASTA = str(Path(__file__).resolve().parents[2] / "examples" / "data" / "pasta.jsonl")
A, B = "openai/judge-a", "openai/judge-b"


def b_score(request: dict[str, Any]) -> int:
    """Judge B's grade: 4 or 0, from the question it grades (deterministic, varied)."""
    return 4 if sum(map(ord, json.dumps(request["messages"]))) % 3 else 0


def replies(b_fails: list[bool] | None = None) -> Any:
    """The script; judge B's calls fail while `b_fails[0]` is True."""

    def reply(request: dict[str, Any]) -> str | Fault:
        if "Answer to grade:" not in json.dumps(request["messages"]):
            return "flat pasta sheets baked in the oven"
        if request["model"] == "judge-a":
            return json.dumps({"reasoning": "fine", "score": 4})
        if b_fails and b_fails[0]:
            return Fault(status=400, message="judge B is down")
        return json.dumps({"reasoning": "strict", "score": b_score(request)})

    return reply


def flags(out: Path, *more: str) -> list[str]:
    return ["run", PASTA, "--generator", "openai/fake", "--judge", A, "--judge", B,
            "-o", str(out), *more]  # fmt: skip


def records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in (out / "tasks").rglob("*.json")]


def judge_calls(server: FakeLLMServer, model: str, since: int = 0) -> int:
    return sum(
        1
        for r in server.requests[since:]
        if r["model"] == model and "Answer to grade:" in json.dumps(r["messages"])
    )


def test_each_judge_the_jury_and_their_agreement(tmp_path: Path) -> None:
    out = tmp_path / "run"
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"fake": [1, 1], "judge-a": [10, 10], "judge-b": [100, 100]}))
    with FakeLLMServer(reply=replies()) as server:
        result = run(tmp_path, server, *flags(out, "--prices", str(prices)))
        assert result.exit_code == 0, result.output
        report = run(tmp_path, server, "report", str(out))
        assert report.exit_code == 0, report.output
        diffed = run(tmp_path, server, "compare", str(out), str(out))
        assert diffed.exit_code == 0, diffed.output
    (found,) = json.loads((out / "results.json").read_text(encoding="utf-8"))["results"]
    graded = [r["generation"]["judge"] for r in records(out)]
    a = [float(g["jury"][0]["score"]) for g in graded]
    b = [float(g["jury"][1]["score"]) for g in graded]
    assert set(a) == {4.0} and set(b) == {0.0, 4.0}  # they disagree on some answers
    metrics = found["metrics"]["generation"]
    jury_means = [(x + y) / 2 for x, y in zip(a, b, strict=True)]
    assert metrics["judge_score"]["mean"] == sum(jury_means) / len(jury_means)
    assert metrics["judge_score_1"]["mean"] == 4.0
    assert metrics["judge_score_2"]["mean"] == sum(b) / len(b)
    assert metrics["jury"]["aggregate"] == "mean"
    assert [j["model"] for j in metrics["jury"]["judges"]] == [A, B]
    agreement = metrics["jury"]["agreement"]
    assert agreement["alpha"] == krippendorff_alpha([a, b], "interval")
    assert agreement["answers"] == len(graded)
    assert found["held_fixed"]["judge"]["jury"][0]["model"] == B
    entry = found["per_query"][0]["generation"]
    assert [j["model"] for j in entry["jury"]] == [A, B]
    assert entry["judge_score"] == (entry["jury"][0]["score"] + entry["jury"][1]["score"]) / 2
    # Each judge's tokens at its own price: the jury costs A's and B's calls, apart.
    spent = sum(
        (g["input_tokens"] + g["output_tokens"]) * price / 1e6
        for r in records(out)
        for g, price in zip(r["generation"]["judge"]["jury"], (10, 100), strict=True)
    )
    answers = sum(
        (r["generation"]["input_tokens"] + r["generation"]["output_tokens"]) / 1e6
        for r in records(out)
    )
    assert abs(found["usage"]["cost_usd"] - (spent + answers)) < 1e-12
    # The report, compare and export price the records again: to the same cost.
    (read,) = read_run(out).results
    assert abs(read["usage"]["cost_usd"] - found["usage"]["cost_usd"]) < 1e-12
    assert "generation/judge_score_2" in diffed.output
    alpha = f"{agreement['alpha']:.3f}"
    assert f"openai/judge-a 4.000; openai/judge-b {metrics['judge_score_2']['mean']:.3f}" in (
        result.output
    )
    assert f"Krippendorff's alpha {alpha} over {len(graded)} answers" in result.output
    page = (out / "report.html").read_text(encoding="utf-8")
    data = json.loads(re.search(r'id="lasagna-data">(.*?)</script>', page, re.S).group(1))
    assert "generation/judge_score_1" in data["groups"][0]["metrics"]


def test_resume_asks_again_only_the_judge_that_failed(tmp_path: Path) -> None:
    out = tmp_path / "run"
    down = [True]
    with FakeLLMServer(reply=replies(down)) as server:
        first = run(tmp_path, server, *flags(out))
        assert first.exit_code == 0, first.output  # a failed grade fails no task, as alone
        (found,) = json.loads((out / "results.json").read_text(encoding="utf-8"))["results"]
        # B failed everywhere: the jury's grade is A's alone, counted as graded by one judge.
        assert found["metrics"]["generation"]["judge_score"]["mean"] == 4.0
        answers = len(records(out))
        assert found["metrics"]["generation"]["judge_score_2"]["missing"] == answers
        assert all(r["generation"]["judge"]["judges_graded"] == 1 for r in records(out))
        assert all(r["generation"]["judge"]["jury"][1]["status"] == "error" for r in records(out))
        for path in (out / "tasks").rglob("*.json"):  # as a record before grades had `batch`
            record = json.loads(path.read_text(encoding="utf-8"))
            for grade in record["generation"]["judge"]["jury"]:
                del grade["batch"]
            path.write_text(json.dumps(record), encoding="utf-8")
        down[0] = False
        before = server.calls
        # A new cache: what is not asked again comes from the records, not from the cache.
        again = run(tmp_path, server, *flags(out, "--resume"), cache="fresh")
        assert again.exit_code == 0, again.output
        assert judge_calls(server, "judge-b", before) == answers
        assert judge_calls(server, "judge-a", before) == 0
        assert server.calls - before == answers  # nothing generated again
    assert all(r["generation"]["judge"]["judges_graded"] == 2 for r in records(out))


def test_adding_a_judge_regrades_with_the_new_one_only(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeLLMServer(reply=replies()) as server:
        single = ["run", PASTA, "--generator", "openai/fake", "--judge", A, "-o", str(out)]
        assert run(tmp_path, server, *single).exit_code == 0
        before = server.calls
        again = run(tmp_path, server, *flags(out, "--resume"), cache="fresh")
        assert again.exit_code == 0, again.output
        assert judge_calls(server, "judge-a", before) == 0
        assert judge_calls(server, "judge-b", before) == server.calls - before > 0


def test_a_judge_named_twice_is_refused(tmp_path: Path) -> None:
    with FakeLLMServer(reply=replies()) as server:
        result = run(tmp_path, server, "run", PASTA, "--judge", A, "--judge", A)
    assert result.exit_code == 2
    assert "each judge of a jury once" in result.output
    assert "Traceback" not in result.output


def test_a_sweep_file_names_its_jury(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(
        f"benchmarks: [{{path: {PASTA}}}]\n"
        "setups: [{name: rag, generator: openai/fake}]\n"
        f"judges: [{A}, {B}]\n",
        encoding="utf-8",
    )
    out = tmp_path / "run"
    with FakeLLMServer(reply=replies()) as server:
        result = run(tmp_path, server, "run", str(sweep), "-o", str(out))
        assert result.exit_code == 0, result.output
    (found,) = json.loads((out / "results.json").read_text(encoding="utf-8"))["results"]
    assert [j["model"] for j in found["metrics"]["generation"]["jury"]["judges"]] == [A, B]
    sweep.write_text(sweep.read_text(encoding="utf-8") + f"judge: {A}\n", encoding="utf-8")
    with FakeLLMServer(reply=replies()) as server:
        refused = run(tmp_path, server, "run", str(sweep), "-o", str(tmp_path / "y"))
    assert refused.exit_code == 2
    assert "judge and judges: give one of them" in refused.output
