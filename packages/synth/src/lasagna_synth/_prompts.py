"""The prompts and output schemas: one to write each type of question, one to check it.

Prompt building is pure: the same item gives the same messages, so the judge's cache finds
them again on a rerun. A prompt's id (`factoid-v1`, ...) changes with its wording; its
sha256 covers the writing and checking templates and both schemas, and goes into each row.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lasagna_synth._corpus import Passage
from lasagna_synth._mix import QuestionType

if TYPE_CHECKING:
    from pydantic import BaseModel

Message = dict[str, str]

# Caps on the reply of each call: they bound the output tokens in the dry run's estimate.
WRITE_MAX_TOKENS = 400
CHECK_MAX_TOKENS = 300

# Each schema of `_schemas` as `json.dumps(Model.model_json_schema())` gives it: what the
# dry run counts and the prompt's sha256 covers, without importing pydantic (which a
# dry run does not need). A test checks them against the models.
SCHEMA_JSON = {
    "AnsweredQuestion": (
        '{"description": "A question and its short reference answer.", "properties": '
        '{"question": {"description": "The question, understandable without the passages.", '
        '"minLength": 1, "title": "Question", "type": "string"}, "answer": {"description": '
        '"The short answer, as stated in the passages.", "minLength": 1, "title": "Answer", '
        '"type": "string"}}, "required": ["question", "answer"], "title": "AnsweredQuestion", '
        '"type": "object"}'
    ),
    "OpenQuestion": (
        '{"description": "A question the passage does not answer.", "properties": '
        '{"question": {"description": "The question, understandable without the passage.", '
        '"minLength": 1, "title": "Question", "type": "string"}}, "required": ["question"], '
        '"title": "OpenQuestion", "type": "object"}'
    ),
    "SupportCheck": (
        '{"description": "Is the reference answer supported by the source passages?", '
        '"properties": {"reason": {"description": "One sentence: why.", "title": "Reason", '
        '"type": "string"}, "supported": {"enum": ["yes", "no", "unclear"], "title": '
        '"Supported", "type": "string"}}, "required": ["reason", "supported"], "title": '
        '"SupportCheck", "type": "object"}'
    ),
    "AnswerCheck": (
        '{"description": "Do the passages answer the question?", "properties": {"reason": '
        '{"description": "One sentence: why.", "title": "Reason", "type": "string"}, '
        '"answered": {"enum": ["yes", "no", "unclear"], "title": "Answered", "type": '
        '"string"}}, "required": ["reason", "answered"], "title": "AnswerCheck", "type": '
        '"object"}'
    ),
}


WRITER_SYSTEM = (
    "You write questions for a benchmark that tests question answering over a collection of "
    "documents. Each question must make sense on its own to someone who has not seen the "
    "passages: name its subject explicitly and never refer to 'the passage', 'the text', "
    "'the document' or 'the author'. Write in the language of the passages."
)
CHECKER_SYSTEM = (
    "You check questions written for a question answering benchmark. Judge only from the "
    "passages shown, not from your own knowledge, and be strict."
)

_FACTOID = (
    "Passage from {doc_1}:\n{passage_1}\n\n"
    "Write one factoid question that this passage answers with a short fact: a name, a "
    "number, a date, a place or a short phrase. The answer must be stated in the passage; "
    "give it as it is written there, in a few words.{variation}"
)
_MULTIHOP = (
    "Passage 1, from {doc_1}:\n{passage_1}\n\n"
    "Passage 2, from {doc_2}:\n{passage_2}\n\n"
    "Write one question whose answer needs a fact from passage 1 and a fact from passage 2: "
    "neither passage alone may be enough to answer it. The answer must follow from the two "
    "passages together; give it in a few words.{variation}"
)
_UNANSWERABLE = (
    "Passage from {doc_1}:\n{passage_1}\n\n"
    "Write one question on the subject of this passage that a reader of it would plausibly "
    "ask, but that the passage does not answer: it must neither state nor imply the answer. "
    "Do not ask about something the passage says is unknown.{variation}"
)
_CHECK_SUPPORT = (
    "{passages}\n\nQuestion: {question}\nReference answer: {answer}\n\n"
    "Is the reference answer a correct answer to the question, supported by the passages "
    "above? Answer 'yes' if the passages support it, 'no' if they do not or if it is wrong, "
    "and 'unclear' if the question is ambiguous or cannot be judged from the passages."
)
_CHECK_ANSWERED = (
    "{passages}\n\nQuestion: {question}\n\n"
    "Do the passages above answer this question, fully or in part? Answer 'yes' if any of "
    "them states or implies the answer, 'no' if none does, and 'unclear' if the question is "
    "ambiguous or cannot be judged from the passages."
)
_VARIATION = (
    "\n\nThis passage serves several questions; this is question {use} from it: ask about a "
    "different fact than the first question one would ask."
)


def passage_block(text: str) -> str:
    """How every prompt shows a passage; always right after a line break."""
    return f"<passage>\n{text}\n</passage>"


@dataclass(frozen=True)
class PromptSpec:
    """The templates and schemas of one question type (schemas by their model's name in
    `_schemas`)."""

    id: str
    write_template: str
    write_schema_name: str
    check_template: str
    check_schema_name: str

    @property
    def write_schema(self) -> type[BaseModel]:
        return _model(self.write_schema_name)

    @property
    def check_schema(self) -> type[BaseModel]:
        return _model(self.check_schema_name)

    @property
    def sha256(self) -> str:
        return _spec_sha256(self)


def _model(name: str) -> type[BaseModel]:
    from lasagna_synth import _schemas

    model: type[BaseModel] = getattr(_schemas, name)
    return model


@functools.cache
def _spec_sha256(spec: PromptSpec) -> str:
    """A spec's sha256, computed once: it goes into every row."""
    parts = {
        "id": spec.id,
        "passage": passage_block("{text}"),
        "write": [WRITER_SYSTEM, spec.write_template],
        "write_schema": json.loads(SCHEMA_JSON[spec.write_schema_name]),
        "check": [CHECKER_SYSTEM, spec.check_template],
        "check_schema": json.loads(SCHEMA_JSON[spec.check_schema_name]),
    }
    data = json.dumps(parts, sort_keys=True, ensure_ascii=False).encode()
    return hashlib.sha256(data).hexdigest()


PROMPTS: dict[QuestionType, PromptSpec] = {
    "factoid": PromptSpec(
        "factoid-v1", _FACTOID, "AnsweredQuestion", _CHECK_SUPPORT, "SupportCheck"
    ),
    "multihop": PromptSpec(
        "multihop-v1", _MULTIHOP, "AnsweredQuestion", _CHECK_SUPPORT, "SupportCheck"
    ),
    "unanswerable": PromptSpec(
        "unanswerable-v1", _UNANSWERABLE, "OpenQuestion", _CHECK_ANSWERED, "AnswerCheck"
    ),
}
"""Per question type, the versioned prompts and response schemas that write and check it."""


def write_messages(
    question_type: QuestionType, passages: Sequence[Passage], use: int = 1
) -> list[Message]:
    """The messages asking for one question of `question_type` from `passages`."""
    fields = {"variation": _VARIATION.format(use=use) if use > 1 else ""}
    for i, passage in enumerate(passages, start=1):
        fields[f"doc_{i}"] = passage.doc_id
        fields[f"passage_{i}"] = passage_block(passage.text)
    user = PROMPTS[question_type].write_template.format(**fields)
    return [{"role": "system", "content": WRITER_SYSTEM}, {"role": "user", "content": user}]


def check_messages(
    question_type: QuestionType,
    passages: Sequence[Passage],
    question: str,
    answer: str | None = None,
) -> list[Message]:
    """The messages checking a written question against the passages it is judged on."""
    shown = "\n\n".join(
        f"Passage {i}, from {p.doc_id}:\n{passage_block(p.text)}"
        for i, p in enumerate(passages, start=1)
    )
    user = PROMPTS[question_type].check_template.format(
        passages=shown, question=question, answer=answer or ""
    )
    return [{"role": "system", "content": CHECKER_SYSTEM}, {"role": "user", "content": user}]
