"""The course's judge: `judge.py` on the command line, `check()` in a notebook. Layers: grading/README.md.

In a notebook: `from grading import check`, then `check("top_p_filter")`, `check("04")` or `check()`.
"""
from __future__ import annotations


def check(target: str | None = None, **kwargs):
    """Grade your current exercises/ file(s) as `python judge.py` does; see grading.notebook.check."""
    from .notebook import check as _check

    return _check(target, **kwargs)


def show_quiz(chapter: str) -> None:
    """Print a chapter's quiz questions (answers go into the QUIZ dict of its exercise file)."""
    from .catalog import find_chapter, load_chapters
    from .i18n import _, show

    c = find_chapter(load_chapters(), chapter)
    if c is None or not c.quiz:
        print(show(_("Chapter {chapter} has no quiz yet.", chapter=chapter)))
        return
    file = "exercises/" + c.module + ".py"
    print(show(_("Chapter {chapter} quiz: answer in {file}, e.g. QUIZ = {example}", chapter=c.number, file=file,
                 example="{1: 'b', 2: 'a'}")))
    for q in c.quiz:
        print(f"\n{q.id}. " + show(q.text))
        for key, text in q.choices.items():
            print(f"   {key}) " + show(text))
