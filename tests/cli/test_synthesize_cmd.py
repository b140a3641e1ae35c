"""`lasagna benchmark synthesize`: the dry run, every refusal, and full runs against the fake
server, through the real `lasagna` executable."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from lasagna_judge.testing import FakeLLMServer, Fault

LASAGNA = Path(sys.executable).with_name("lasagna")
ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "docs"


def lasagna(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    base = dict(os.environ)
    # Anything that tried the network would fail fast on a closed local port (proxies are
    # honoured); the fake model server on 127.0.0.1 is reached directly.
    base.update(HTTP_PROXY="http://127.0.0.1:9", HTTPS_PROXY="http://127.0.0.1:9")
    base.update(NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    base.pop("MODEL_NAME", None)
    base.update(env or {})
    return subprocess.run(
        [str(LASAGNA), *args], capture_output=True, text=True, env=base, cwd=cwd, timeout=300
    )


def number(pattern: str, text: str) -> int:
    found = re.search(pattern, text)
    assert found is not None, f"{pattern!r} not in {text!r}"
    return int(found.group(1).replace(",", ""))


def write_docs(folder: Path, extra: dict[str, str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i, topic in enumerate(["harbour", "lighthouse", "ferry"]):
        body = " ".join(f"{topic}{j}" for j in range(60))
        (folder / f"{topic}.md").write_text(f"The {topic} fact {i}. {body}", encoding="utf-8")
    for name, text in (extra or {}).items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def model_reply(request: dict[str, Any]) -> str | Fault:
    user = request["messages"][-1]["content"]
    if "Write one" in user:
        if "FAULT500" in user:
            return Fault(status=500)
        # each item its own question: its passages' documents and opening words, and which
        # of a passage's questions it is
        docs = " and ".join(re.findall(r"from (\S+?):", user)) or "?"
        opening = re.search(r"<passage>\n(\S+ \S+ \S+)", user)
        use = re.search(r"this is question (\d+) from it", user)
        question = f"What does {docs} say about {opening.group(1) if opening else '?'}"
        question += f" (question {use.group(1)})?" if use else "?"
        if "on the subject" in user:
            return json.dumps({"question": question[:-1] + ", beyond what it states?"})
        return json.dumps({"question": question, "answer": "a fact"})
    if "Reference answer:" in user:
        return json.dumps({"reason": "stated", "supported": "yes"})
    return json.dumps({"reason": "not stated", "answered": "no"})


def run_env(tmp_path: Path) -> dict[str, str]:
    return {"OPENAI_API_KEY": "sk-test-key", "LASAGNA_CACHE_DIR": str(tmp_path / "cache")}


def test_help_lists_every_flag() -> None:
    result = lasagna("benchmark", "synthesize", "--help")
    assert result.returncode == 0
    for flag in (
        "--n",
        "--out",
        "--mix",
        "--seed",
        "--model",
        "--base-url",
        "--dry-run",
        "--overwrite",
        "--concurrency",
        "--chunker",
        "--chunk-words",
    ):
        assert flag in result.stdout


def test_dry_run_on_the_examples_prints_the_plan_and_writes_nothing(tmp_path: Path) -> None:
    first = lasagna(
        "benchmark", "synthesize", str(EXAMPLES), "--n", "10", "--dry-run", cwd=tmp_path
    )
    assert first.returncode == 0, first.stderr
    out = first.stdout
    assert out.startswith("Dry run: no LLM is called and nothing is written.")
    assert re.search(r"Documents:\s+4 read from .*examples/docs \(\.md 3, \.txt 1\)", out)
    assert "guides/skerra-walks.md" in out
    assert "harbour-map.svg: unsupported file type .svg" in out
    assert re.search(r"Passages:\s+8 from 4 documents \(fixed chunker: 200-word windows", out)
    assert "Questions:  10 (factoid 6, multihop 3, unanswerable 1), seed 42" in out
    plan_lines = [line for line in out.splitlines() if re.search(r"synth-\d{4}  ", line)]
    assert len(plan_lines) == 10 and plan_lines[0].startswith("Plan:       synth-0001  ")
    assert sum("multihop" in line and " + " in line for line in plan_lines) == 3
    assert "LLM calls:  20 (2 per question" in out
    assert re.search(r"Tokens in:\s+[\d,]+, counted exactly with the cl100k_base tokenizer", out)
    assert "Cost:       give --model and --prices to price the run" in out
    assert list(tmp_path.iterdir()) == []  # nothing written, not even synthetic_qa.jsonl
    again = lasagna(
        "benchmark", "synthesize", str(EXAMPLES), "--n", "10", "--dry-run", cwd=tmp_path
    )
    assert again.stdout == first.stdout
    other_seed = lasagna("benchmark", "synthesize", str(EXAMPLES), "--n", "10", "--dry-run",
                         "--seed", "7")  # fmt: skip
    assert "seed 7" in other_seed.stdout
    other_plan = [line for line in other_seed.stdout.splitlines() if "synth-00" in line]
    assert other_plan != plan_lines


def test_a_dry_run_loads_neither_pydantic_nor_numpy() -> None:
    # 27 MB and 0.2 s of its memory and time goals: the schemas are counted from their
    # text, the partners and neighbours from overlaps in plain Python.
    code = (
        "import sys\n"
        "from lasagna_cli._app import main\n"
        f"sys.argv = ['lasagna', 'benchmark', 'synthesize', {str(EXAMPLES)!r}, '--dry-run']\n"
        "try:\n    main()\nexcept SystemExit as stop:\n    assert not stop.code, stop.code\n"
        "print(sorted(m for m in ('pydantic', 'numpy', 'typer') if m in sys.modules))\n"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert found.stdout.splitlines()[-1] == "['typer']", found.stderr


def test_dry_run_prices_the_run_with_a_price_table(tmp_path: Path) -> None:
    prices = tmp_path / "prices.toml"
    prices.write_text('"openai/gpt-4o-mini" = [0.15, 0.6]\n', encoding="utf-8")
    args = ["benchmark", "synthesize", str(EXAMPLES), "--n", "10", "--dry-run"]
    result = lasagna(*args, "--model", "openai/gpt-4o-mini", "--prices", str(prices))
    assert result.returncode == 0, result.stderr
    tokens_in = number(r"Tokens in:\s+([\d,]+)", result.stdout)
    tokens_out = number(r"at most ([\d,]+) \(each", result.stdout)
    cost = (tokens_in * 0.15 + tokens_out * 0.6) / 1e6
    assert f"Cost:       at most ${cost:,.4f} for openai/gpt-4o-mini" in result.stdout
    unpriced = lasagna(*args, "--model", "openai/other", "--prices", str(prices))
    assert "no price for openai/other" in unpriced.stdout


def test_reuse_is_warned_with_the_largest_n(tmp_path: Path) -> None:
    result = lasagna("benchmark", "synthesize", str(EXAMPLES), "--n", "40", "--dry-run")
    assert result.returncode == 0
    assert "warning: 24 factoid questions asked but the corpus has 8 passages" in result.stderr
    assert "the largest n without reuse is 13" in result.stderr


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--n", "0"], 2, "error: --n: expected a whole number >= 1, got 0"),
        (["--n", "ten"], 2, "error: --n: expected a whole number, got 'ten'"),
        (["--mix", "factoid=0.7,multihop=0.2"], 2, "error: mix shares must sum to 1"),
        (["--mix", "factoids=1"], 2, "did you mean 'factoid'?"),
        (["--mix", "factoid=1,unanswerable=-0"], 0, None),
        (["--chunker", "pages"], 2, "error: unknown chunker 'pages'"),
        (["--chunk-words", "10"], 2, "give at least 20"),
        (["--seed", "x"], 2, "error: --seed: expected a whole number"),
        (["--concurrency", "0"], 2, "error: --concurrency: expected a whole number >= 1"),
    ],
)
def test_bad_flags_get_one_line(args: list[str], code: int, message: str | None) -> None:
    result = lasagna("benchmark", "synthesize", str(EXAMPLES), "--dry-run", *args)
    assert result.returncode == code
    if message is not None:
        assert message in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
        assert "Traceback" not in result.stderr


def test_bad_corpus_paths_and_contents(tmp_path: Path) -> None:
    missing = lasagna("benchmark", "synthesize", str(tmp_path / "nope"), "--dry-run")
    assert missing.returncode == 2
    assert missing.stderr.strip() == (
        f"error: corpus not found: {str(tmp_path / 'nope')!r}: expected a folder of documents "
        "or one file"
    )
    (tmp_path / "only.png").write_bytes(b"\x89PNG")
    unreadable = lasagna("benchmark", "synthesize", str(tmp_path), "--dry-run")
    assert unreadable.returncode == 1
    assert "no readable document" in unreadable.stderr and "only.png" in unreadable.stderr
    one = tmp_path / "one"
    one.mkdir()
    (one / "a.md").write_text(" ".join(["word"] * 80), encoding="utf-8")
    single = lasagna("benchmark", "synthesize", str(one), "--dry-run")
    assert single.returncode == 1
    assert "multihop questions need passages from two documents" in single.stderr
    short = tmp_path / "short"
    short.mkdir()
    (short / "a.md").write_text("too short", encoding="utf-8")
    nothing = lasagna("benchmark", "synthesize", str(short), "--dry-run")
    assert nothing.returncode == 1 and "no passage in" in nothing.stderr
    for result in (unreadable, single, nothing):
        assert len(result.stderr.strip().splitlines()) == 1


def test_existing_out_is_refused_without_overwrite(tmp_path: Path) -> None:
    out = tmp_path / "qa.jsonl"
    out.write_text("keep me\n", encoding="utf-8")
    result = lasagna(
        "benchmark", "synthesize", str(EXAMPLES), "--out", str(out), "--model", "openai/x",
        env=run_env(tmp_path),
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"error: {out} exists: pass --overwrite to replace it, or choose another --out"
    )
    assert out.read_text(encoding="utf-8") == "keep me\n"
    dry = lasagna("benchmark", "synthesize", str(EXAMPLES), "--out", str(out), "--dry-run")
    assert dry.returncode == 0 and "exists: the real run needs --overwrite" in dry.stdout


def test_a_folder_as_out_is_refused_before_any_call(tmp_path: Path) -> None:
    folder = tmp_path / "qa"
    folder.mkdir()
    with FakeLLMServer(reply=model_reply) as server:
        for extra in (["--dry-run"], ["--overwrite", "--model", "openai/m"]):
            result = lasagna(
                "benchmark", "synthesize", str(EXAMPLES), "--out", str(folder),
                "--base-url", server.base_url, *extra, env=run_env(tmp_path),
            )  # fmt: skip
            assert result.returncode == 2
            assert result.stderr.strip() == (
                f"error: --out {folder} is a folder: give the path of a .jsonl file"
            )
        assert server.calls == 0


def test_ctrl_c_writes_nothing_and_says_how_to_resume(tmp_path: Path, ctrl_c_when: Any) -> None:
    out = tmp_path / "qa.jsonl"
    env = {**os.environ, **run_env(tmp_path)}
    env.pop("MODEL_NAME", None)
    with FakeLLMServer(reply=model_reply, latency=30.0) as server:
        command = [
            str(LASAGNA), "benchmark", "synthesize", str(EXAMPLES), "--n", "6",
            "--out", str(out), "--model", "openai/m", "--base-url", server.base_url,
        ]  # fmt: skip
        returncode, _, stderr = ctrl_c_when(command, env, lambda: server.calls > 0)
    assert returncode == 130
    assert stderr.strip().splitlines()[-1] == (
        f"interrupted: {out} was not written; finished calls are cached, so the same command "
        "(with --overwrite if the file exists) resumes where this one stopped"
    )
    assert "Traceback" not in stderr and not out.exists()


def test_a_run_without_a_model_is_refused_before_any_call(tmp_path: Path) -> None:
    result = lasagna("benchmark", "synthesize", str(EXAMPLES), "--out", str(tmp_path / "o.jsonl"))
    assert result.returncode == 2 and "no model" in result.stderr
    assert not (tmp_path / "o.jsonl").exists()


def test_full_run_with_faults_then_resume_byte_identical(tmp_path: Path) -> None:
    docs = write_docs(tmp_path / "docs", {"flaky.md": "FAULT500 " + "flaky " * 40})
    out = tmp_path / "qa.jsonl"
    env = run_env(tmp_path)
    args = ["benchmark", "synthesize", str(docs), "--n", "8", "--out", str(out), "--seed", "3"]
    args += ["--model", "openai/fake-model", "--concurrency", "4"]
    prices = tmp_path / "prices.json"
    prices.write_text('{"fake-model": [1000000, 0]}', encoding="utf-8")  # $1 per input token
    args += ["--prices", str(prices)]
    failing = True

    def reply(request: dict[str, Any]) -> str | Fault:
        user = request["messages"][-1]["content"]
        if not failing and "FAULT500" in user:
            user = user.replace("FAULT500", "fine")
            request = {**request, "messages": [*request["messages"][:-1], {"content": user}]}
        return model_reply(request)

    with FakeLLMServer(reply=reply) as server:
        first = lasagna(*args, "--base-url", server.base_url, env=env)
        assert first.returncode == 0, first.stderr
        lines = first.stdout.strip().splitlines()
        errors = number(r"error (\d+)", lines[1])
        assert errors >= 1
        assert re.fullmatch(
            rf"Wrote {8 - errors} rows? to {re.escape(str(out))}: factoid \d+, multihop \d+, "
            r"unanswerable \d+ \(model openai/fake-model\)",
            lines[0],
        )
        assert lines[1] == (
            f"Dropped {errors}: unparseable 0, placeholder 0, too-short 0, unsupported 0, "
            f"answered 0, unclear 0, duplicate 0, near-duplicate 0, error {errors}"
        )
        assert "run the same command again" in lines[2] and "500" in lines[2]
        spent = re.fullmatch(
            r"Calls: +(\d+) calls made this run \(cache hits are free\), ([\d,]+) tokens in, "
            r"[\d,]+ out, \$([\d,.]+)",
            lines[3],
        )
        assert spent is not None, lines[3]
        assert int(spent.group(1)) == server.calls  # every request, retries included
        assert float(spent.group(3).replace(",", "")) == int(spent.group(2).replace(",", ""))
        assert lines[-1] == (
            "Synthetic questions are for development: report results on human-written questions."
        )
        assert "sk-test-key" not in first.stdout + first.stderr + out.read_text(encoding="utf-8")

        failing = False
        calls = server.calls
        second = lasagna(*args, "--overwrite", "--base-url", server.base_url, env=env)
        assert second.returncode == 0, second.stderr
        assert server.calls - calls == 2 * errors  # only the failed questions are called again
        rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
        assert [r["id"] for r in rows] == [f"synth-{i:04d}" for i in range(1, 9)]
        first_bytes = out.read_bytes()

        calls = server.calls
        third = lasagna(*args, "--overwrite", "--base-url", server.base_url, env=env)
        assert third.returncode == 0 and server.calls == calls
        assert (
            "Calls:      0 calls made this run (cache hits are free), 0 tokens in, 0 out, $0.0000"
            in third.stdout
        )
        assert out.read_bytes() == first_bytes
    for row in rows:
        meta = row["metadata"]
        assert (
            meta["synthetic"] is True and meta["seed"] == 3 and meta["model"] == "openai/fake-model"
        )
        assert ("answer" in row) == (not meta["unanswerable"])
    valid = lasagna("benchmark", "validate-data", str(out))
    assert valid.returncode == 0, valid.stdout + valid.stderr
    assert "valid JSONL data" in valid.stdout


def test_every_call_failing_writes_nothing_and_exits_1(tmp_path: Path) -> None:
    docs = write_docs(tmp_path / "docs")
    out = tmp_path / "qa.jsonl"
    with FakeLLMServer(reply=Fault(status=500)) as server:
        result = lasagna(
            "benchmark", "synthesize", str(docs), "--n", "3", "--out", str(out),
            "--model", "openai/fake", "--base-url", server.base_url, "--no-cache",
            env=run_env(tmp_path),
        )  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.strip().startswith(
        f"error: every question failed on a call error, so {out} was not written"
    )
    assert not out.exists()


@pytest.mark.parametrize("fmt", ["ragas", "deepeval"])
def test_format_writes_rows_another_tool_reads_that_read_back_identically(
    fmt: str, tmp_path: Path
) -> None:
    """`--format ragas|deepeval`: the same questions as the default format (the second run
    is answered by the cache), in the tool's fields, and `load_data` reads them back as the
    same rows."""
    from lasagna_synth import load_data

    docs = write_docs(tmp_path / "docs")
    env = run_env(tmp_path)
    ours, theirs = tmp_path / "ours.jsonl", tmp_path / f"{fmt}.jsonl"
    with FakeLLMServer(reply=model_reply) as server:
        base = ["benchmark", "synthesize", str(docs), "--n", "5", "--model", "openai/fake"]
        base += ["--base-url", server.base_url]
        first = lasagna(*base, "--out", str(ours), env=env)
        assert first.returncode == 0, first.stderr
        calls = server.calls
        second = lasagna(*base, "--out", str(theirs), "--format", fmt, env=env)
        assert second.returncode == 0, second.stderr
        assert server.calls == calls
    named = {"ragas": "RAGAS samples", "deepeval": "DeepEval goldens"}[fmt]
    assert second.stdout.startswith(f"Wrote 5 rows to {theirs} as {named}: ")
    written = [json.loads(line) for line in theirs.read_text(encoding="utf-8").splitlines()]
    question = {"ragas": "user_input", "deepeval": "input"}[fmt]
    assert all(question in row and "question" not in row for row in written)
    # Their formats have no field for the evidence spans; everything else reads back the same.
    ours_rows = [replace(row, evidence=()) for row in load_data(ours).rows()]
    assert load_data(theirs).rows() == ours_rows
    assert all(row.evidence for row in load_data(ours).rows())
    valid = lasagna("benchmark", "validate-data", str(theirs))
    assert valid.returncode == 0, valid.stdout + valid.stderr


def test_an_unknown_format_is_refused_before_any_call(tmp_path: Path) -> None:
    result = lasagna(
        "benchmark", "synthesize", str(EXAMPLES), "--format", "ragaz", "--model", "openai/x",
        "--base-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path / "o.jsonl"),
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "error: --format: expected one of lasagna, ragas, deepeval, found 'ragaz' "
        "(did you mean \"ragas\"?); see 'lasagna benchmark synthesize --help'"
    )
