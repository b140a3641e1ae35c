"""The one door to LLMs for lasagna, and grading that never lies."""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from lasagna_judge._cache import default_cache_path
from lasagna_judge._errors import JudgeError, JudgeUsageError, LLMCallError, MissingExtraError
from lasagna_judge._fake import scripted_note
from lasagna_judge._llm import LLM
from lasagna_judge._make_llm import has_batch_api, make_llm, parse_model
from lasagna_judge._providers import BATCH_PROVIDERS, PROVIDERS, is_reasoning_model
from lasagna_judge._proxies import Proxies
from lasagna_judge._retry import RetryPolicy, is_retryable_status, parse_retry_after
from lasagna_judge._types import Completion, Structured, Usage
from lasagna_judge._usage import BATCH_PRICE, is_scripted, price_for, read_prices

if TYPE_CHECKING:
    from lasagna_judge._batch import (
        BatchReport,
        BatchRequest,
        batch_api,
        cancel_batch,
        run_batch,
    )
    from lasagna_judge._batch_apis import BatchError, BatchStatus
    from lasagna_judge._batch_state import BatchState
    from lasagna_judge._bias import BIAS_FILLER, BiasCheck, check_bias
    from lasagna_judge._calibrate import (
        Agreement,
        Calibration,
        FileCalibration,
        calibrate,
        calibrate_files,
        judge_label,
        normalize_label,
    )
    from lasagna_judge._claims import (
        CLAIMS_PROMPT,
        MAX_CLAIM_CHARS,
        MAX_CLAIMS,
        ClaimCall,
        Diagnosis,
        check_claims,
        diagnose,
        extract_claims,
        judge_relevance,
    )
    from lasagna_judge._embed import Embedder
    from lasagna_judge._grade_file import (
        AnswerRow,
        FileGrading,
        JuryGrading,
        constant_judge,
        did_you_mean_field,
        grade_answers,
        grade_answers_by_jury,
        read_answers,
        read_jsonl,
        ungraded,
    )
    from lasagna_judge._grading import (
        GRADE_FIELDS,
        Grade,
        GradeItem,
        GradeModel,
        check_items,
        error_grade,
        grade,
        grade_batch,
        grade_requests,
    )
    from lasagna_judge._jury import (
        JURY_AGGREGATE,
        JuryAgreement,
        Verdict,
        grade_jury,
        jury_agreement,
    )
    from lasagna_judge._make_embedder import DEFAULT_EMBEDDER, make_embedder, parse_embedder
    from lasagna_judge._parse import ParsedScore, parse_score
    from lasagna_judge._rubrics import BUILTIN_RUBRICS, Prompt, Rubric, build_prompt, load_rubric
    from lasagna_judge._summary import GradeSummary, summarize_grades
    from lasagna_judge._toml import TomlError, load_toml
    from lasagna_judge._yaml import load_yaml

# Grading, calibration, embeddings and rubrics load on first use: a command that only
# calls an LLM (synthesize) then imports neither their pydantic models nor lasagna-metrics.
_LAZY = {
    **dict.fromkeys(("BIAS_FILLER", "BiasCheck", "check_bias"), "lasagna_judge._bias"),
    **dict.fromkeys(
        (
            "Agreement",
            "Calibration",
            "FileCalibration",
            "calibrate",
            "calibrate_files",
            "judge_label",
            "normalize_label",
        ),
        "lasagna_judge._calibrate",
    ),
    **dict.fromkeys(
        (
            "CLAIMS_PROMPT",
            "MAX_CLAIM_CHARS",
            "MAX_CLAIMS",
            "ClaimCall",
            "Diagnosis",
            "check_claims",
            "diagnose",
            "extract_claims",
            "judge_relevance",
        ),
        "lasagna_judge._claims",
    ),
    "Embedder": "lasagna_judge._embed",
    **dict.fromkeys(
        (
            "AnswerRow",
            "FileGrading",
            "JuryGrading",
            "constant_judge",
            "did_you_mean_field",
            "grade_answers",
            "grade_answers_by_jury",
            "read_answers",
            "read_jsonl",
            "ungraded",
        ),
        "lasagna_judge._grade_file",
    ),
    **dict.fromkeys(
        (
            "GRADE_FIELDS",
            "Grade",
            "GradeItem",
            "GradeModel",
            "check_items",
            "error_grade",
            "grade",
            "grade_batch",
            "grade_requests",
        ),
        "lasagna_judge._grading",
    ),
    **dict.fromkeys(("GradeSummary", "summarize_grades"), "lasagna_judge._summary"),
    **dict.fromkeys(
        ("BatchReport", "BatchRequest", "batch_api", "cancel_batch", "run_batch"),
        "lasagna_judge._batch",
    ),
    "BatchState": "lasagna_judge._batch_state",
    **dict.fromkeys(("BatchError", "BatchStatus"), "lasagna_judge._batch_apis"),
    **dict.fromkeys(
        ("JURY_AGGREGATE", "JuryAgreement", "Verdict", "grade_jury", "jury_agreement"),
        "lasagna_judge._jury",
    ),
    **dict.fromkeys(
        ("DEFAULT_EMBEDDER", "make_embedder", "parse_embedder"), "lasagna_judge._make_embedder"
    ),
    **dict.fromkeys(("ParsedScore", "parse_score"), "lasagna_judge._parse"),
    **dict.fromkeys(
        ("BUILTIN_RUBRICS", "Prompt", "Rubric", "build_prompt", "load_rubric"),
        "lasagna_judge._rubrics",
    ),
    "load_yaml": "lasagna_judge._yaml",
    "load_toml": "lasagna_judge._toml",
    "TomlError": "lasagna_judge._toml",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'lasagna_judge' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "BATCH_PRICE",
    "BATCH_PROVIDERS",
    "BIAS_FILLER",
    "BUILTIN_RUBRICS",
    "CLAIMS_PROMPT",
    "DEFAULT_EMBEDDER",
    "GRADE_FIELDS",
    "JURY_AGGREGATE",
    "LLM",
    "MAX_CLAIMS",
    "MAX_CLAIM_CHARS",
    "PROVIDERS",
    "Agreement",
    "AnswerRow",
    "BatchError",
    "BatchReport",
    "BatchRequest",
    "BatchState",
    "BatchStatus",
    "BiasCheck",
    "Calibration",
    "ClaimCall",
    "Completion",
    "Diagnosis",
    "Embedder",
    "FileCalibration",
    "FileGrading",
    "Grade",
    "GradeItem",
    "GradeModel",
    "GradeSummary",
    "JudgeError",
    "JudgeUsageError",
    "JuryAgreement",
    "JuryGrading",
    "LLMCallError",
    "MissingExtraError",
    "ParsedScore",
    "Prompt",
    "Proxies",
    "RetryPolicy",
    "Rubric",
    "Structured",
    "TomlError",
    "Usage",
    "Verdict",
    "batch_api",
    "build_prompt",
    "calibrate",
    "calibrate_files",
    "cancel_batch",
    "check_bias",
    "check_claims",
    "check_items",
    "constant_judge",
    "default_cache_path",
    "diagnose",
    "did_you_mean_field",
    "error_grade",
    "extract_claims",
    "grade",
    "grade_answers",
    "grade_answers_by_jury",
    "grade_batch",
    "grade_jury",
    "grade_requests",
    "has_batch_api",
    "is_reasoning_model",
    "is_retryable_status",
    "is_scripted",
    "judge_label",
    "judge_relevance",
    "jury_agreement",
    "load_rubric",
    "load_toml",
    "load_yaml",
    "make_embedder",
    "make_llm",
    "normalize_label",
    "parse_embedder",
    "parse_model",
    "parse_retry_after",
    "parse_score",
    "price_for",
    "read_answers",
    "read_jsonl",
    "read_prices",
    "run_batch",
    "scripted_note",
    "summarize_grades",
    "ungraded",
]
