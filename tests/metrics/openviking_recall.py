"""The oracle for evidence recall: OpenViking's RAG benchmark, benchmark/RAG/src/core/
metrics.py, MetricsCalculator.normalize_answer, check_recall, calculate_f1 and
check_refusal, copied statement for statement (as functions: the methods use no state).
Not part of any package: the tests and benchmarks/metrics_speed.py load this file by path.
"""

import collections
import re
import string


def normalize_answer(s):
    s = str(s).replace(",", "")

    def remove_articles(text):
        return re.sub(r"\b(a|an|the|and)\b", " ", text)

    def white_space_fix(text):
        return " ".join(text.split())

    def remove_punc(text):
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    return white_space_fix(remove_articles(remove_punc(s.lower())))


def check_recall(retrieved_texts, evidence_list, soft_threshold=0.8, min_soft_match_tokens=4):
    if not evidence_list:
        return 0.0
    combined_retrieved = " ".join(retrieved_texts)
    normalized_retrieved = normalize_answer(combined_retrieved)
    ret_tokens = set(normalized_retrieved.split())
    hit_count = 0
    for evidence in evidence_list:
        if evidence in combined_retrieved:
            hit_count += 1
            continue
        normalized_ev = normalize_answer(evidence)
        ev_tokens = set(normalized_ev.split())
        if not ev_tokens:
            continue
        if len(ev_tokens) < min_soft_match_tokens:
            continue
        overlap_count = len(ev_tokens & ret_tokens)
        coverage = overlap_count / len(ev_tokens)
        if coverage >= soft_threshold:
            hit_count += 1
    return hit_count / len(evidence_list)


def calculate_f1(prediction, ground_truth):
    pred_tokens = normalize_answer(prediction).split()
    truth_tokens = normalize_answer(ground_truth).split()
    common = collections.Counter(pred_tokens) & collections.Counter(truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0.0
    precision = 1.0 * num_same / len(pred_tokens)
    recall = 1.0 * num_same / len(truth_tokens)
    return (2 * precision * recall) / (precision + recall)


def check_refusal(text):
    refusals = ["not mentioned", "no information", "cannot be answered", "none", "unknown",
                "don't know"]  # fmt: skip
    return any(r in text.lower() for r in refusals)
