"""The course's grading engine: checks per chapter (chNN_*.py) and the machinery `judge.py` uses.

In a notebook: `from grading import check`, then `check("top_p_filter")`, `check("04")` or `check()`.
"""
from __future__ import annotations


def check(target: str | None = None, **kwargs):
    """Grade your current exercises/ file(s) as `python judge.py` does; see grading.checking.check."""
    from .checking import check as _check

    return _check(target, **kwargs)


def show_quiz(chapter: str) -> None:
    """Print a chapter's quiz questions (answers go into the QUIZ dict of its exercise file)."""
    from .runner import load_chapters

    for c in load_chapters():
        if c.number == str(chapter).zfill(2) and c.quiz:
            print(f"Chapter {c.number} quiz: answer in exercises/{c.module}.py, e.g. QUIZ = {{1: 'b', 2: 'a'}}")
            for q in c.quiz:
                print(f"\n{q.id}. {q.text}")
                for key, text in q.choices.items():
                    print(f"   {key}) {text}")
            return
    print(f"Chapter {chapter} has no quiz yet.")

