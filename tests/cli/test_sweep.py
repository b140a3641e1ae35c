"""`lasagna benchmark sweep`: checks before any call, the result files, resuming, failures.

LLM behaviour goes through the real HTTP fake server (lasagna_judge.testing), never a mock.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from lasagna_cli._app import app
from lasagna_judge.testing import FakeLLMServer, Fault
from lasagna_synth import TEMP_PREFIX

DATASETS: dict[str, Any] = {
    "facts": {
        "q1": {"input": "What is the capital of France?", "output": "Paris"},
        "q2": {"input": "Who wrote Hamlet?", "output": ["Shakespeare", "William Shakespeare"]},
        "q3": {"input": "Say anything."},
    },
    "quiz": {
        "m1": {
            "input": "Which vitamin do oranges have most of?",
            "output": {
                "type": "MCQ",
                "options": {"a": "Vitamin A", "b": "Vitamin C"},
                "answer": "b",
            },
        },
        "m2": {
            "input": "How many legs has a spider?",
            "output": {"type": "MCQ", "options": {"a": "six", "b": "eight"}, "answer": "b"},
        },
    },
}

SETUPS = """\
[short]
provider = "fake"
model = "model-short"
temperature = 0.0
tokens = 32
system_prompt = '''{{ file("prompt.txt") }}'''

[quiz-only]
provider = "fake"
model = "model-quiz"
system_prompt = "Answer with the option id. {{ env("SWEEP_TEST_STYLE", "Be terse.") }}"
prompt = "Q: {{INPUT}}\\nOptions:\\n{{ CHOICE }}"
datasets = ["quiz"]
"""

CONFIG = """\
[providers.fake]
api = "openai"
base_url = "{base_url}"
api_key_env = "SWEEP_TEST_KEY"
"""

SECRET = "sk-test-very-secret-value-1234"


def make_files(folder: Path, base_url: str, setups: str = SETUPS) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "datasets.json").write_text(json.dumps(DATASETS))
    (folder / "prompt.txt").write_text("You answer briefly.\nQuestion: {{INPUT}}")
    (folder / "setups.toml").write_text(setups)
    (folder / "config.toml").write_text(CONFIG.format(base_url=base_url))
    return {
        "datasets": folder / "datasets.json",
        "setups": folder / "setups.toml",
        "config": folder / "config.toml",
        "out": folder / "out",
    }


def sweep(paths: dict[str, Path], *extra: str, env: dict[str, str] | None = None) -> Any:
    args = [
        "benchmark", "sweep",
        "--datasets", str(paths["datasets"]),
        "--benchmark", str(paths["setups"]),
        "--config", str(paths["config"]),
        "--output", str(paths["out"]),
        *extra,
    ]  # fmt: skip
    environment = {"SWEEP_TEST_KEY": SECRET, **(env or {})}
    return CliRunner().invoke(app, args, env=environment)


def answer(request: dict[str, Any]) -> str:
    """The quiz model picks the right option for m1 and a wrong one for m2."""
    text = request["messages"][-1]["content"]
    if request["model"] == "model-quiz":
        return "b" if "Vitamin" in text else "(a) six"
    return "Paris" if "France" in text else "I think it was Marlowe."


@pytest.fixture
def server() -> Any:
    with FakeLLMServer(reply=answer) as fake:
        yield fake


def result_files(out: Path) -> list[Path]:
    return sorted(p for p in out.rglob("*") if p.is_file())


def test_every_task_gets_one_result_file_in_the_exact_layout(tmp_path: Path, server: Any) -> None:
    paths = make_files(tmp_path, server.base_url)
    result = sweep(paths)
    assert result.exit_code == 0, result.output
    out = paths["out"]
    expected = [out / "facts" / q / "short.json" for q in ("q1", "q2", "q3")]
    expected += [
        out / "quiz" / q / f"{s}.json" for q in ("m1", "m2") for s in ("quiz-only", "short")
    ]
    assert result_files(out) == sorted(expected)
    assert server.calls == 7
    text = (out / "quiz" / "m1" / "quiz-only.json").read_text()
    assert text.startswith('{"ok": {"result": "b", "stats": {') and text.count("\n") == 1
    record = json.loads(text)
    assert set(record) == {"ok"}
    assert record["ok"]["result"] == "b"
    stats = record["ok"]["stats"]
    assert stats["input_tokens"] > 0 and stats["output_tokens"] > 0
    assert stats["generation_time_s"] >= 0
    assert stats["retrieval_time_s"] is None and stats["passages"] is None
    assert stats["setup"]["name"] == "quiz-only"
    assert stats["setup"]["provider"] == {
        "name": "fake",
        "api": "openai",
        "base_url": server.base_url,
        "api_key_env": "SWEEP_TEST_KEY",
    }
    # The prompt the model saw: placeholders filled, env() default used, options listed.
    sent = next(r for r in server.requests if "spider" not in json.dumps(r)
                and r["model"] == "model-quiz")  # fmt: skip
    assert sent["messages"][0] == {
        "role": "system", "content": "Answer with the option id. Be terse.",
    }  # fmt: skip
    assert sent["messages"][1]["content"] == (
        "Q: Which vitamin do oranges have most of?\nOptions:\na: Vitamin A\nb: Vitamin C"
    )
    assert stats["context_length"] == sum(len(m["content"]) for m in sent["messages"])
    # file() text keeps its placeholders and they are filled per task.
    short = [r for r in server.requests if r["model"] == "model-short"]
    france = next(r for r in short if "France" in json.dumps(r))
    assert france["messages"] == [
        {"role": "user", "content": "You answer briefly.\nQuestion: What is the capital of France?"}
    ]  # a system_prompt alone is kag's whole prompt: one user message
    assert france["max_tokens"] == 32 and france["temperature"] == 0.0
    # Its MCQ options only where the template shows {{CHOICE}}, as in kag.
    spider = next(r for r in short if "spider" in json.dumps(r))
    assert spider["messages"] == [
        {"role": "user", "content": "You answer briefly.\nQuestion: How many legs has a spider?"}
    ]


def test_every_result_file_is_json_s_own_encoding_of_its_content(
    tmp_path: Path, server: Any
) -> None:
    """The store encodes each setup's description once and splices it in: the bytes must be
    those json.dumps(sort_keys=True) gives for the whole content, whatever the setup."""
    from lasagna_cli.engine.records._store import dump_task_json

    paths = make_files(tmp_path, server.base_url)
    assert sweep(paths).exit_code == 0
    files = result_files(paths["out"])
    assert len(files) == 7
    for path in files:
        data = path.read_bytes()
        assert data == dump_task_json(json.loads(data)), path


def test_no_secret_reaches_a_result_file_or_the_output(tmp_path: Path, server: Any) -> None:
    paths = make_files(tmp_path, server.base_url)
    result = sweep(paths)
    assert result.exit_code == 0
    assert server.headers[0]["authorization"] == f"Bearer {SECRET}"
    for path in result_files(paths["out"]):
        assert SECRET not in path.read_text()
    assert SECRET not in result.output


def test_a_failed_task_is_recorded_and_does_not_stop_the_others(
    tmp_path: Path, server: Any
) -> None:
    server.reply = lambda request: (
        Fault(status=400) if "Hamlet" in json.dumps(request) else answer(request)
    )
    paths = make_files(tmp_path, server.base_url)
    result = sweep(paths, "--parallel", "3")
    assert result.exit_code == 1
    failed = json.loads((paths["out"] / "facts" / "q2" / "short.json").read_text())
    assert set(failed) == {"error"} and "400" in failed["error"]
    assert len(result_files(paths["out"])) == 7
    assert "6 done, 1 failed, 0 skipped of 7 tasks" in result.output
    assert "facts/q2/short.json" in result.output  # the failure is logged
    # --continue alone keeps the recorded failure; --retry-errors runs it again.
    server.reply = answer
    calls = server.calls
    again = sweep(paths, "--continue")
    assert again.exit_code == 0 and server.calls == calls
    assert "nothing to do" in again.output
    retried = sweep(paths, "--continue", "--retry-errors")
    assert retried.exit_code == 0, retried.output
    assert server.calls == calls + 1
    assert "1 done, 0 failed, 6 skipped" in retried.output
    fixed = json.loads((paths["out"] / "facts" / "q2" / "short.json").read_text())
    assert fixed["ok"]["result"] == "I think it was Marlowe."


def test_continue_skips_finished_tasks_and_reruns_missing_or_empty_ones(
    tmp_path: Path, server: Any
) -> None:
    paths = make_files(tmp_path, server.base_url)
    assert sweep(paths).exit_code == 0
    out = paths["out"]
    (out / "facts" / "q1" / "short.json").unlink()
    (out / "quiz" / "m2" / "short.json").write_text("")  # empty: not finished
    (out / "quiz" / "m1" / f"{TEMP_PREFIX}abc").write_text('{"ok": ')  # a killed write
    before = (out / "quiz" / "m1" / "short.json").read_bytes()
    calls = server.calls
    result = sweep(paths, "--continue")
    assert result.exit_code == 0, result.output
    assert server.calls == calls + 2
    assert "2 done, 0 failed, 5 skipped" in result.output
    assert "removed 1 temporary files" in result.output
    assert not list(out.rglob(f"{TEMP_PREFIX}*"))
    assert (out / "quiz" / "m1" / "short.json").read_bytes() == before
    assert json.loads((out / "quiz" / "m2" / "short.json").read_text())["ok"]


def test_without_continue_finished_results_are_never_overwritten(
    tmp_path: Path, server: Any
) -> None:
    paths = make_files(tmp_path, server.base_url)
    assert sweep(paths).exit_code == 0
    calls = server.calls
    result = sweep(paths)
    assert result.exit_code == 2
    assert "already holds 7 of these 7 results" in result.output and "--continue" in result.output
    assert server.calls == calls


def test_prefix_and_skip(tmp_path: Path, server: Any) -> None:
    paths = make_files(tmp_path, server.base_url)
    result = sweep(paths, "--prefix", "run2-", "--skip", "quiz-only")
    assert result.exit_code == 0, result.output
    names = {p.name for p in result_files(paths["out"])}
    assert names == {"run2-short.json"}
    assert len(result_files(paths["out"])) == 5


def test_unknown_skip_name_is_a_usage_error_before_any_call(tmp_path: Path, server: Any) -> None:
    paths = make_files(tmp_path, server.base_url)
    result = sweep(paths, "--skip", "shrot")
    assert result.exit_code == 2
    assert (
        "--skip: no setup named 'shrot'" in result.output
        and 'did you mean "short"' in result.output
    )
    assert server.calls == 0 and not paths["out"].exists()


def test_a_missing_key_variable_is_named_before_any_call(tmp_path: Path, server: Any) -> None:
    paths = make_files(tmp_path, server.base_url)
    result = CliRunner().invoke(
        app,
        ["benchmark", "sweep", "--datasets", str(paths["datasets"]), "--benchmark",
         str(paths["setups"]), "--output", str(paths["out"])],
        env={"SWEEP_TEST_KEY": ""},
    )  # fmt: skip
    assert result.exit_code == 2
    assert "$SWEEP_TEST_KEY, which is not set" in result.output
    assert "setup 'short'" in result.output  # config.toml beside the setups is the default
    assert server.calls == 0


def test_a_builtin_provider_without_its_key_names_the_setup_not_a_flag(
    tmp_path: Path, server: Any
) -> None:
    setups = '[gpt]\nprovider = "openai"\nmodel = "gpt-4o-mini"\n'
    paths = make_files(tmp_path, server.base_url, setups)
    result = sweep(paths, env={"OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""})
    assert result.exit_code == 2
    assert result.stderr.startswith(
        "error: setup 'gpt': openai/gpt-4o-mini needs OPENAI_API_KEY, or a server: "
        "OPENAI_BASE_URL for any OpenAI-compatible endpoint; or use local/smollm2"
    )
    assert "--model" not in result.stderr and "--base-url" not in result.stderr
    assert server.calls == 0


def _error(tmp_path: Path, base_url: str, setups: str, config: str | None = None) -> str:
    paths = make_files(tmp_path, base_url, setups)
    if config is not None:
        paths["config"].write_text(config)
    result = sweep(paths)
    assert result.exit_code in (1, 2), result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    return lines[0]


BASE = 'provider = "fake"\nmodel = "m"\n'


@pytest.mark.parametrize(
    ("setups", "expected"),
    [
        (
            f'[a]\n{BASE}prompt = "{{{{QUESTION}}}}"\n',
            "setup 'a': prompt: unknown placeholder {{QUESTION}}",
        ),
        (f'[a]\n{BASE}prompt = "{{{{ INPT }}}}"\n', 'did you mean "INPUT"'),
        (
            f'[a]\n{BASE}[b]\n{BASE}prompt = "{{{{ input }}}}"\n',
            "line 7 (setup 'b'): template error: undefined value: `input` is undefined; prompt",
        ),
        (
            f"[a]\n{BASE}system_prompt = '''{{{{ file(\"nope.txt\") }}}}'''\n",
            "file('nope.txt'): not found",
        ),
        (
            '[a]\nprovider = "nowhere"\nmodel = "m"\n',
            "setup 'a': provider 'nowhere' is not a provider of the config",
        ),
        (
            f'[a]\n{BASE}retriever = "bm25"\ndatabase = "docs"\nprompt = "{{{{RETRIEVAL}}}}"\n',
            "setup 'a': retriever 'bm25' is not a retriever of the config",
        ),
        (
            f'[a]\n{BASE}prompt = "{{{{RETRIEVAL}}}} {{{{INPUT}}}}"\n',
            "setup 'a': {{RETRIEVAL}} needs passages",
        ),
        (f'[a]\n{BASE}api_key = "sk-123"\n', "API keys belong in the environment"),
        (f"[a]\n{BASE}temprature = 0.5\n", 'did you mean "temperature"'),
        (f'[a]\n{BASE}datasets = ["quizz"]\n', "datasets: 'quizz' is not in the datasets file"),
        (f"[Big_Setup]\n{BASE}", "setup 'Big_Setup': expected a component name"),
        (f"[a]\n{BASE}tokens = 0\n", "expected `tokens`"),
        ('[a]\nmodel = "m"\n', "setup 'a': missing `provider`"),
    ],
)
def test_bad_setups_are_one_line_naming_the_setup(
    tmp_path: Path, server: Any, setups: str, expected: str
) -> None:
    line = _error(tmp_path, server.base_url, setups)
    assert expected in line
    assert server.calls == 0


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ('[providers.x]\napi = "opnai"\n', 'did you mean "openai"'),
        (
            '[providers.x]\napi_key_env = "sk-abc-123"\n',
            "expected the NAME of an environment variable",
        ),
        ('[databases.docs]\ndocuments = "missing-folder"\n', "folder not found"),
        ('[retrievers.r]\ntype = "graph"\n', "expected one of bm25"),
        ("[retrievers.r]\ntop_k = 0\n", "top_k: expected an integer from 1 to 1000"),
        ("[providers\n", "not valid TOML"),
    ],
)
def test_bad_config_is_one_line(tmp_path: Path, server: Any, config: str, expected: str) -> None:
    line = _error(tmp_path, server.base_url, f"[a]\n{BASE}", config)
    assert expected in line
    assert "sk-abc-123" not in line


@pytest.mark.parametrize(
    ("datasets", "expected"),
    [
        ({"Facts": {"q1": {"input": "x"}}}, "dataset 'Facts': expected a component name"),
        ({"facts": {"q.1": {"input": "x"}}}, "question 'q.1': expected a component name"),
        ({"facts": {"q1": {"inptu": "x"}}}, "unknown key 'inptu' (did you mean \"input\"?)"),
        ({"facts": {"q1": {"input": ""}}}, "expected `input` to be a non-empty string"),
        (
            {
                "facts": {
                    "q1": {
                        "input": "x",
                        "output": {"type": "MCQ", "options": {"a": "1"}, "answer": "c"},
                    }
                }
            },
            "`output.answer` 'c' is not one of the option ids a",
        ),
        (
            {"facts": {"q1": {"input": "x", "output": {"type": "choice"}}}},
            'expected `output.type` to be "MCQ"',
        ),
        ([], "expected an object of datasets"),
    ],
)
def test_bad_datasets_are_one_line_naming_the_key(
    tmp_path: Path, server: Any, datasets: Any, expected: str
) -> None:
    paths = make_files(tmp_path, server.base_url, f"[a]\n{BASE}")
    paths["datasets"].write_text(json.dumps(datasets))
    result = sweep(paths)
    assert result.exit_code == 1
    assert expected in result.output and len(result.output.strip().splitlines()) == 1
    assert server.calls == 0


@pytest.mark.parametrize(
    ("flag", "make", "code", "expected"),
    [
        ("setups", lambda p: p.mkdir(), 2, "expected a setups file, found a folder"),
        ("config", lambda p: p.mkdir(), 2, "expected a config file, found a folder"),
        ("setups", lambda p: p.write_bytes(b"\xff\xfe[a]"), 1, "not UTF-8 text (byte 0)"),
        ("config", lambda p: p.write_bytes(b"\xff"), 1, "not UTF-8 text (byte 0)"),
        ("out", lambda p: p.write_text("x"), 2, "exists and is not a folder"),
    ],
)
def test_a_folder_or_a_file_in_the_wrong_place_is_one_line(
    tmp_path: Path, server: Any, flag: str, make: Any, code: int, expected: str
) -> None:
    paths = make_files(tmp_path, server.base_url, f"[a]\n{BASE}")
    paths[flag] = tmp_path / f"wrong-{flag}"
    make(paths[flag])
    result = sweep(paths)
    assert result.exit_code == code, result.output
    assert expected in result.output and len(result.output.strip().splitlines()) == 1
    assert server.calls == 0


def test_an_output_folder_that_cannot_be_made_is_refused_before_any_call(
    tmp_path: Path, server: Any
) -> None:
    paths = make_files(tmp_path, server.base_url, f"[a]\n{BASE}")
    (tmp_path / "a-file").write_text("x")
    paths["out"] = tmp_path / "a-file" / "out"
    result = sweep(paths)
    assert result.exit_code == 2, result.output
    assert "cannot create the folder" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert server.calls == 0


def test_env_helper_reads_the_environment(tmp_path: Path, server: Any) -> None:
    setups = (
        '[a]\nprovider = "fake"\nmodel = "{{ env("SWEEP_TEST_MODEL") }}"\n'
        'prompt = "{{INPUT}}"\ndatasets = ["facts"]\n'
    )
    paths = make_files(tmp_path, server.base_url, setups)
    missing = sweep(paths)  # an unset variable is "", as kag's env() gives it
    assert missing.exit_code == 1 and "expected `model` to be a model name" in missing.output
    result = sweep(paths, env={"SWEEP_TEST_MODEL": "from-env"})
    assert result.exit_code == 0, result.output
    assert {r["model"] for r in server.requests} == {"from-env"}


def test_placeholders_inside_a_question_are_not_filled_twice(tmp_path: Path, server: Any) -> None:
    paths = make_files(
        tmp_path, server.base_url, f'[a]\n{BASE}prompt = "[{{{{INPUT}}}}] {{{{CHOICE}}}}"\n'
    )
    mcq = {"type": "MCQ", "options": {"b": "{{INPUT}}", "a": "x"}}
    question = {"input": "literal {{CHOICE}} here", "output": mcq}
    paths["datasets"].write_text(json.dumps({"d": {"q": question}}))
    assert sweep(paths).exit_code == 0
    content = server.requests[0]["messages"][-1]["content"]
    assert content == "[literal {{CHOICE}} here] a: x\nb: {{INPUT}}"  # kag's key order


def test_a_placeholder_the_task_lacks_fails_that_task_as_kag_does(
    tmp_path: Path, server: Any
) -> None:
    paths = make_files(
        tmp_path, server.base_url, f'[a]\n{BASE}prompt = "{{{{INPUT}}}} {{{{CHOICE}}}}"\n'
    )
    result = sweep(paths)
    assert result.exit_code == 1, result.output
    failed = json.loads((paths["out"] / "facts" / "q1" / "a.json").read_text())
    assert "Failed to render the prompt template" in failed["error"] and "CHOICE" in failed["error"]
    assert json.loads((paths["out"] / "quiz" / "m1" / "a.json").read_text())["ok"]


def test_progress_summary_counts_to_stderr(tmp_path: Path, server: Any) -> None:
    paths = make_files(tmp_path, server.base_url)
    result = sweep(paths, "--parallel", "2")
    assert "sweep: 7 done, 0 failed, 0 skipped of 7 tasks in" in result.output
    assert "tasks/s" in result.output
    assert os.path.isdir(paths["out"])


@settings(max_examples=200, deadline=None)
@given(
    st.text(min_size=1),
    st.dictionaries(st.text(min_size=1, max_size=3), st.text(), min_size=1, max_size=4),
)
def test_prompts_carry_the_question_verbatim(text: str, options: dict[str, str]) -> None:
    from lasagna_cli.engine._data import Question
    from lasagna_cli.engine.config._config import PromptSpec
    from lasagna_cli.engine.plan._prompts import build_messages

    prompt = PromptSpec("template", "sys {{CHOICE}}", "<{{INPUT}}>")
    question = Question("q", text, options=options or None)
    system, user = build_messages(prompt, question, ())
    assert user == {"role": "user", "content": f"<{text}>"}
    choices = "\n".join(f"{k}: {options[k]}" for k in sorted(options))
    assert system == {"role": "system", "content": f"sys {choices}"}


def test_tasks_run_with_fewer_young_collections_and_the_default_comes_back(
    tmp_path: Path,
) -> None:
    import gc

    from lasagna_cli.engine._gc import YOUNG_THRESHOLD

    seen: list[int] = []

    def reply(request: dict[str, Any]) -> str:
        seen.append(gc.get_threshold()[0])  # the server runs in this process: same collector
        return answer(request)

    before = gc.get_threshold()
    with FakeLLMServer(reply=reply) as fake:
        result = sweep(make_files(tmp_path, fake.base_url))
    assert result.exit_code == 0, result.output
    assert seen and set(seen) == {YOUNG_THRESHOLD}
    assert gc.get_threshold() == before
