"""Every quiz question has exactly one right option, and the right option is never the giveaway longest one (in
English or in Chinese)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from grading import i18n
from grading.catalog import load_chapters
from grading.model import quiz_hash

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
QUESTIONS = [(c.number, q) for c in load_chapters() for q in c.quiz]


@pytest.mark.parametrize("chapter,question", QUESTIONS, ids=[f"{c}-q{q.id}" for c, q in QUESTIONS])
def test_one_right_option_and_not_the_longest(chapter, question):
    right = [k for k in question.choices if quiz_hash(chapter, question.id, k) == question.answer_hash]
    assert len(right) == 1, f"chapter {chapter} question {question.id}: {len(right)} options match the stored hash"
    for lang in i18n.LANGUAGES:
        lengths = {k: len(i18n.render(v, lang)) for k, v in question.choices.items()}
        longest_wrong = max(n for k, n in lengths.items() if k != right[0])
        assert lengths[right[0]] <= longest_wrong, (
            f"chapter {chapter} question {question.id} ({lang}): the right option is the longest one ({lengths}); "
            "balance the options so length gives nothing away")


def test_every_quiz_is_large_enough():
    for c in load_chapters():
        if c.quiz:
            assert len(c.quiz) >= 4, f"chapter {c.number} has only {len(c.quiz)} quiz questions"


def _right_letter(chapter, question) -> str:
    return next(k for k in question.choices if quiz_hash(chapter, question.id, k) == question.answer_hash)


def test_right_answers_are_spread_over_the_letters():
    letters = [_right_letter(c, q) for c, q in QUESTIONS]
    counts = {k: letters.count(k) for k in "abcd"}
    assert max(counts.values()) - min(counts.values()) <= 1, (
        f"right answers per letter over the course: {counts}; spread them so no letter is a safe guess")
    for c in load_chapters():
        own = [_right_letter(c.number, q) for q in c.quiz]
        assert max(own.count(k) for k in "abcd") <= (len(own) + 3) // 4 + 1, f"chapter {c.number}: right answers {own}"


def test_no_position_has_a_favourite_letter():
    by_position: dict[int, list[str]] = {}
    for c, q in QUESTIONS:
        by_position.setdefault(q.id, []).append(_right_letter(c, q))
    for position, letters in by_position.items():
        most = max(letters.count(k) for k in "abcd")
        assert most <= (len(letters) + 3) // 4 + 1, (
            f"question {position} of the quizzes: right answers {letters}; a learner who noticed would guess it")


def test_every_chapter_has_a_numeric_question():
    for c in load_chapters():
        if c.quiz:
            assert any(re.search(r"\d", v) for q in c.quiz for v in q.choices.values()
                       if re.fullmatch(r"[\d.,\s/]+", v)), f"chapter {c.number} has no question with numbers to work out"


def _headings(notebook: Path) -> list[str]:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return [_plain(line.lstrip("#")) for c in cells if c["cell_type"] == "markdown"
            for line in "".join(c["source"]).splitlines() if line.startswith("#")]


def _plain(text: str) -> str:
    return text.replace("`", "").replace("->", "→").strip().lower()


@pytest.mark.parametrize("chapter,question", QUESTIONS, ids=[f"{c}-q{q.id}" for c, q in QUESTIONS])
def test_review_pointer_names_a_real_section(chapter, question):
    found = re.search(r"notebook (\d\d[a-z]?)\b", question.review)
    assert found, f"chapter {chapter} question {question.id}: the review text names no notebook: {question.review!r}"
    notebooks = sorted(NOTEBOOKS.glob(f"{found.group(1)}_*.ipynb"))
    assert len(notebooks) == 1, f"chapter {chapter} question {question.id}: no notebook {found.group(1)}_*.ipynb"
    quoted = re.findall(r"'([^']+)'", question.review)
    headings = _headings(notebooks[0])
    for title in quoted:
        assert any(_plain(title) in h for h in headings), (
            f"chapter {chapter} question {question.id}: {notebooks[0].name} has no section {title!r}")
