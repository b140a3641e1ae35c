"""`scripted_reply`: a FakeLLMServer script that answers lasagna's own calls as a plausible
model would, from nothing but the request: what the `fake/` model family serves
(`lasagna_judge._fake`), and a reply function any test may give a FakeLLMServer.

    with FakeLLMServer(reply=scripted_reply) as server: ...

A call is recognised by the schema it asks for (a tool's parameters, or response_format):

- a grade (`reasoning`, `score`): the reference's key words found in the answer give the
  score on the rubric's scale ("must be 0 or 4", "from 0 to 4"), with a sentence saying why;
- a question to write (synthesize): one from the passage shown, its answer copied from it
  (`_scripted_questions`); its check: "yes" when the passages hold the reference answer,
  and, for an unanswerable one, "yes" only when one sentence holds most of its words;
- claims (diagnostics): the text's sentences; their labels: "entailment" when the premise
  holds a claim's words, else "neutral"; relevance: from the words answer and question share;
- a plain call (an answer): the sentence of the prompt's passages that shares most words
  with its question, as a model quoting its context would; "Not mentioned" (or whatever the
  prompt asks a model to reply when it does not know) when none shares a word.

Any other schema gets the simplest reply that fits it (`_schema_dummy`). Every choice is
drawn from the request (its model name and messages): the same request, the same reply.
The figures such replies earn are those of a keyword matcher, and mean nothing about any
model.
"""

from __future__ import annotations

import json
import re
from typing import Any

from lasagna_judge.testing import _scripted_questions as questions
from lasagna_judge.testing._schema_dummy import _requested_schema, _schema_dummy
from lasagna_judge.testing._scripted_text import (
    between,
    clip,
    content_words,
    coverage,
    seed,
    sentences,
    words,
)

_REPLY_EXACTLY = re.compile(r"reply exactly \"([^\"]+)\"", re.IGNORECASE)
_NUMBERED = re.compile(r"^\s*\d+\.\s+(.*\S)\s*$", re.MULTILINE)
_SHORT_PREMISE = 20
"""A premise of fewer words (a reference answer) is read with its question."""
_WRONG_PICK = 5
"""One answer in this many quotes the second-best sentence: a model is sometimes wrong."""


def scripted_reply(request: dict[str, Any]) -> str:
    """The reply to one chat request (its JSON body): see the module's doc."""
    model = str(request.get("model", ""))
    prompt = _user_text(request)
    schema = _requested_schema(request)
    if schema is None:
        return _answer(prompt, model)
    fields = set(schema.get("properties") or ())
    reply: dict[str, Any] | None = None
    if {"reasoning", "score"} <= fields:
        reply = _grade(_all_text(request), prompt)
    elif fields == {"question", "answer"}:
        write = questions.multihop if "Passage 2" in prompt else questions.factoid
        reply = write(prompt, model)
    elif fields == {"question"}:
        reply = questions.unanswerable(prompt, model)
    elif fields == {"reason", "supported"}:
        reply = _supported(prompt)
    elif fields == {"reason", "answered"}:
        reply = _answered(prompt)
    elif fields == {"claims"}:
        reply = _claims(prompt)
    elif fields == {"labels"}:
        reply = _labels(prompt)
    elif fields == {"relevance"}:
        reply = _relevance(prompt)
    return _schema_dummy(request) if reply is None else json.dumps(reply, ensure_ascii=False)


def _texts(request: dict[str, Any], roles: tuple[str, ...]) -> list[str]:
    found = []
    for message in request.get("messages") or []:
        if not isinstance(message, dict) or message.get("role") not in roles:
            continue
        content = message.get("content")
        if isinstance(content, list):
            content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        found.append(str(content or ""))
    return found


def _user_text(request: dict[str, Any]) -> str:
    """The prompt: the first user message (a re-ask's later messages add nothing to read)."""
    found = _texts(request, ("user",))
    return found[0] if found else ""


def _all_text(request: dict[str, Any]) -> str:
    return "\n\n".join(_texts(request, ("system", "developer", "user")))


# -- answers ---------------------------------------------------------------------------------


def _answer(prompt: str, model: str) -> str:
    asked = _REPLY_EXACTLY.search(prompt)
    declined = asked.group(1) if asked else "I don't know."
    question = between(prompt, "Question:", "\n")
    if question is None:  # a template of one's own: the question is its last line
        lines = [line for line in prompt.strip().splitlines() if line.strip()]
        question, context = (lines[-1], "\n".join(lines[:-1])) if lines else ("", "")
    else:
        context = between(prompt, "Passages:", "\n\nQuestion:") or prompt.rpartition("Question:")[0]
    wanted = set(content_words(question))
    scored = [
        (len(wanted & set(words(s))), -i, s)
        for i, s in enumerate(sentences(context))
        if not _is_instruction(s)
    ]
    ranked = [s for overlap, _, s in sorted(scored, reverse=True) if overlap > 0]
    if not ranked:
        return declined
    wrong = len(ranked) > 1 and seed(model, prompt) % _WRONG_PICK == 0
    return clip(ranked[1] if wrong else ranked[0])


def _is_instruction(sentence: str) -> bool:
    """A line of the prompt's own instructions rather than of its passages."""
    lowered = sentence.lower()
    return lowered.startswith(("answer from the passages", "if they do not", "if you do not"))


# -- grades ----------------------------------------------------------------------------------


def _scale(text: str) -> tuple[list[int], bool]:
    """The scores a rubric allows, and whether it is pass/fail (two values)."""
    two = re.search(r"must be (-?\d+) or (-?\d+)", text)
    if two:
        low, high = sorted((int(two.group(1)), int(two.group(2))))
        return [low, high], True
    span = re.search(r"from (-?\d+) to (-?\d+)", text)
    if span:
        low, high = sorted((int(span.group(1)), int(span.group(2))))
        if high - low <= 100:
            return list(range(low, high + 1)), False
    return [0, 1, 2, 3, 4], False


def _grade(text: str, prompt: str) -> dict[str, Any]:
    from lasagna_metrics import is_refusal

    scale, binary = _scale(text)
    references = [
        r.strip() for r in (between(prompt, "Reference answer(s):", "\n") or "").split(" | ")
    ]
    references = [r for r in references if r]
    prediction = between(prompt, "Answer to grade:", "\n\n") or ""
    if not references or not prediction:
        return {"reasoning": "The answer cannot be matched against a reference.", "score": scale[0]}
    best = max(references, key=lambda r: coverage(r, prediction))
    share = coverage(best, prediction)
    if is_refusal(prediction) and not is_refusal(best):
        return {
            "reasoning": f'The answer declines to answer, while the reference gives "{best}".',
            "score": scale[0],
        }
    if binary:
        score = scale[1] if share >= 0.6 else scale[0]
    else:
        score = scale[round(share * (len(scale) - 1))]
    if score == scale[-1]:
        reasoning = (
            f'The answer states the core fact of the reference ("{best}"); its wording and '
            "any extra detail do not change it."
        )
    elif score == scale[0]:
        reasoning = (
            f'The answer does not state the reference\'s fact ("{best}"); it says something else.'
        )
    else:
        missing = [w for w in content_words(best) if w not in set(words(prediction))]
        reasoning = (
            f'The answer is partly right: it has some of the reference ("{best}") but misses '
            f'"{" ".join(missing[:4])}".'
        )
    return {"reasoning": reasoning, "score": score}


# -- synthesize's checks ---------------------------------------------------------------------


def _supported(prompt: str) -> dict[str, str]:
    from lasagna_metrics import normalize_answer

    passages = normalize_answer(" ".join(questions.passages_of(prompt)))
    answer = between(prompt, "Reference answer:", "\n") or ""
    parts = [p for p in (normalize_answer(a) for a in answer.split(";")) if p]
    missing = [p for p in parts if p not in passages]
    if parts and not missing:
        return {"reason": f'The passages state "{answer}".', "supported": "yes"}
    shown = missing[0] if missing else answer
    return {"reason": f'The passages do not state "{shown}".', "supported": "no"}


def _answered(prompt: str) -> dict[str, str]:
    question = between(prompt, "Question:", "\n") or ""
    for passage in questions.passages_of(prompt):
        for sentence in sentences(passage):
            if coverage(question, sentence) >= 0.75:
                return {
                    "reason": f'A passage answers it: "{clip(sentence, 25)}"',
                    "answered": "yes",
                }
    return {"reason": "None of the passages says what the question asks.", "answered": "no"}


# -- diagnostics -----------------------------------------------------------------------------


def _claims(prompt: str) -> dict[str, list[str]]:
    from lasagna_metrics import is_refusal

    text = between(prompt, "Text:\n") or ""
    if not text or is_refusal(text):
        return {"claims": []}
    claims = []
    for sentence in sentences(text):
        for part in re.split(r";\s+", sentence):
            part = part.strip().rstrip(".")
            if content_words(part) and part not in claims:
                claims.append(part + ".")
    return {"claims": claims[:8]}


def _labels(prompt: str) -> dict[str, list[str]]:
    premise = between(prompt, "Premise:\n", "\n\nClaims:") or ""
    claims = _NUMBERED.findall(prompt.rpartition("Claims:")[2])
    if len(premise.split()) >= _SHORT_PREMISE:
        labels = ["entailment" if coverage(c, premise) >= 0.7 else "neutral" for c in claims]
        return {"labels": labels}
    # A short answer is read with its question ("ragù and béchamel" says which two sauces):
    # a claim that states it, or only repeats the question, is what the premise says.
    question = between(prompt, "Question:", "\n\nPremise:") or ""
    labels = [
        "entailment"
        if coverage(premise, c) >= 0.5 or coverage(c, f"{question} {premise}") >= 0.7
        else "neutral"
        for c in claims
    ]
    return {"labels": labels}


def _relevance(prompt: str) -> dict[str, str]:
    from lasagna_metrics import is_refusal

    question = between(prompt, "Question:", "\n\nAnswer:") or ""
    answer = between(prompt, "Answer:\n") or ""
    if is_refusal(answer):
        return {"relevance": "noncommittal"}
    shared = coverage(question, answer)
    label = "relevant" if shared >= 0.3 else "partial" if shared > 0 else "irrelevant"
    return {"relevance": label}
