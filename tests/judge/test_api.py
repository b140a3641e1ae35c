"""The public surface of lasagna_judge is what __all__ says, and importing it stays light."""

from __future__ import annotations

import subprocess
import sys

import lasagna_judge

PUBLIC = sorted(
    [
        # the LLM door
        "LLM",
        "Completion",
        "JudgeError",
        "LLMCallError",
        "MissingExtraError",
        "Proxies",
        "RetryPolicy",
        "is_retryable_status",
        "parse_retry_after",
        "Structured",
        "Usage",
        "default_cache_path",
        "is_reasoning_model",
        "make_llm",
        "parse_model",
        # grading
        "BUILTIN_RUBRICS",
        "GRADE_FIELDS",
        "Agreement",
        "Calibration",
        "Grade",
        "GradeItem",
        "GradeModel",
        "GradeSummary",
        "ParsedScore",
        "Prompt",
        "Rubric",
        "build_prompt",
        "calibrate",
        "calibrate_files",
        "FileCalibration",
        "cancel_batch",
        "check_items",
        "error_grade",
        "grade",
        "grade_batch",
        "judge_label",
        "load_rubric",
        "load_toml",
        "load_yaml",
        # the providers, and which have a batch API
        "BATCH_PROVIDERS",
        "PROVIDERS",
        "has_batch_api",
        # grading a file of answers
        "AnswerRow",
        "FileGrading",
        "JudgeUsageError",
        "JuryGrading",
        "constant_judge",
        "did_you_mean_field",
        "grade_answers",
        "grade_answers_by_jury",
        "read_answers",
        "read_jsonl",
        "ungraded",
        "TomlError",
        "normalize_label",
        "parse_score",
        "summarize_grades",
        # a jury of judges, and the judge's biases
        "BIAS_FILLER",
        "BiasCheck",
        "check_bias",
        "JuryAgreement",
        "JURY_AGGREGATE",
        "Verdict",
        "grade_jury",
        "jury_agreement",
        # claim-level diagnosis
        "CLAIMS_PROMPT",
        "MAX_CLAIMS",
        "MAX_CLAIM_CHARS",
        "ClaimCall",
        "Diagnosis",
        "check_claims",
        "judge_relevance",
        "diagnose",
        "extract_claims",
        # embeddings
        "DEFAULT_EMBEDDER",
        "Embedder",
        "make_embedder",
        "parse_embedder",
        # pricing
        "price_for",
        "read_prices",
        # the scripted fake/ models, and the note on the figures they make
        "is_scripted",
        "scripted_note",
        # requests that can wait, at the batch price
        "BATCH_PRICE",
        "BatchError",
        "BatchReport",
        "BatchRequest",
        "BatchState",
        "BatchStatus",
        "batch_api",
        "grade_requests",
        "run_batch",
    ]
)


def test_all_is_pinned_and_every_name_exists() -> None:
    assert sorted(lasagna_judge.__all__) == PUBLIC
    for name in lasagna_judge.__all__:
        assert hasattr(lasagna_judge, name), name


def test_private_modules_stay_private() -> None:
    public_modules = [
        name
        for name in vars(lasagna_judge)
        if not name.startswith("_") and type(getattr(lasagna_judge, name)).__name__ == "module"
    ]
    # testing and http are public submodules (documented); they show up here once
    # any earlier test imported them.
    assert set(public_modules) <= {"testing", "http"}


def test_importing_the_package_loads_no_sdk_and_no_scikit_learn() -> None:
    code = (
        "import sys, lasagna_judge; "
        "print(','.join(m for m in ('openai', 'instructor', 'anthropic', 'llama_cpp', "
        "'sklearn', 'yaml', 'numpy') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.strip() == ""
