"""The response schemas of the writing and checking calls, as pydantic models.

Only a run imports this module (the judge enforces and parses them); what a dry run needs of
them, their JSON Schema text, is in `_prompts.SCHEMA_JSON`, so that a dry run never imports
pydantic. A test checks that the two agree.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, StringConstraints

Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class AnsweredQuestion(BaseModel):
    """A question and its short reference answer."""

    question: Text = Field(description="The question, understandable without the passages.")
    answer: Text = Field(description="The short answer, as stated in the passages.")


class OpenQuestion(BaseModel):
    """A question the passage does not answer."""

    question: Text = Field(description="The question, understandable without the passage.")


class SupportCheck(BaseModel):
    """Is the reference answer supported by the source passages?"""

    reason: str = Field(description="One sentence: why.")
    supported: Literal["yes", "no", "unclear"]


class AnswerCheck(BaseModel):
    """Do the passages answer the question?"""

    reason: str = Field(description="One sentence: why.")
    answered: Literal["yes", "no", "unclear"]
