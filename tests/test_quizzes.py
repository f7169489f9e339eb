"""Every quiz question has exactly one right option, and the right option is never the giveaway longest one."""
from __future__ import annotations

import pytest

from grading.catalog import load_chapters
from grading.model import quiz_hash

QUESTIONS = [(c.number, q) for c in load_chapters() for q in c.quiz]


@pytest.mark.parametrize("chapter,question", QUESTIONS, ids=[f"{c}-q{q.id}" for c, q in QUESTIONS])
def test_one_right_option_and_not_the_longest(chapter, question):
    right = [k for k in question.choices if quiz_hash(chapter, question.id, k) == question.answer_hash]
    assert len(right) == 1, f"chapter {chapter} question {question.id}: {len(right)} options match the stored hash"
    lengths = {k: len(v) for k, v in question.choices.items()}
    longest_wrong = max(n for k, n in lengths.items() if k != right[0])
    assert lengths[right[0]] <= longest_wrong, (
        f"chapter {chapter} question {question.id}: the right option is the longest one ({lengths}); "
        "balance the options so length gives nothing away")


def test_every_quiz_is_large_enough():
    for c in load_chapters():
        if c.quiz:
            assert len(c.quiz) >= 4, f"chapter {c.number} has only {len(c.quiz)} quiz questions"
