"""The course's judge: `judge.py` on the command line, `check()` in a notebook. Layers: grading/README.md.

In a notebook: `from grading import check`, then `check("top_p_filter")`, `check("04")` or `check()`.
"""
from __future__ import annotations


def check(target: str | None = None, **kwargs):
    """Grade your current exercises/ file(s) as `python judge.py` does; see grading.notebook.check."""
    from .notebook import check as _check

    return _check(target, **kwargs)


def show_quiz(chapter: str, lang: str | None = None) -> None:
    """Print a chapter's quiz questions (answers go into the QUIZ dict of its exercise file), in `lang`, else in
    the language check() would answer in: GRADING_LANG, the notebook's edition (notebooks/zh/ -> Chinese), the
    locale (lesson_utils/edition.py)."""
    from lesson_utils.edition import language

    from .catalog import find_chapter, load_chapters
    from .i18n import _, render

    lang = language(lang)
    c = find_chapter(load_chapters(), chapter)
    if c is None or not c.quiz:
        print(render(_("Chapter {chapter} has no quiz yet.", chapter=chapter), lang))
        return
    file = "exercises/" + c.module + ".py"
    print(render(_("Chapter {chapter} quiz: answer in {file}, e.g. QUIZ = {example}", chapter=c.number, file=file,
                   example="{1: 'b', 2: 'a'}"), lang))
    for q in c.quiz:
        print(f"\n{q.id}. " + render(q.text, lang))
        for key, text in q.choices.items():
            print(f"   {key}) " + render(text, lang))
