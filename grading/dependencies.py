"""Which of the learner's exercise functions call which others, read from the learner file's syntax tree.

When `top_p_filter` fails because it calls the learner's own broken `softmax`, the feedback says so: the
real fix is in `softmax`. Nothing is imported or run here; an unreadable file gives no calls.
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterable

from .i18n import _
from .model import NOT_ATTEMPTED, ExerciseResult, status_text


def exercise_calls(learner_file: Path, names: Iterable[str]) -> dict[str, list[str]]:
    """For each exercise function in the file, the other exercise functions it uses, directly or through
    module-level helper functions (an exercise reached through another exercise is that one's business)."""
    try:
        text = Path(learner_file).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    return calls_in_source(text, names)


def calls_in_source(text: str, names: Iterable[str]) -> dict[str, list[str]]:
    """exercise_calls for the text of a learner file."""
    names = set(names)
    try:
        tree = ast.parse(text)
    except Exception:  # SyntaxError, or RecursionError/MemoryError on absurdly nested code: no calls known
        return {}
    functions = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    uses = {name: {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id in functions and n.id != name}
            for name, fn in functions.items()}
    result = {}
    for name in names & functions.keys():
        found, seen, todo = [], {name}, sorted(uses[name])
        while todo:
            other = todo.pop(0)
            if other in seen:
                continue
            seen.add(other)
            if other in names:
                found.append(other)
            else:
                todo.extend(sorted(uses.get(other, ())))
        result[name] = sorted(found)
    return result


def failing_dependencies(result: ExerciseResult, calls: dict[str, list[str]],
                         by_name: dict[str, ExerciseResult]) -> list[ExerciseResult]:
    """The results of the learner's other exercise functions that a failing `result` uses and that fail too."""
    if result.passed:
        return []
    return [by_name[o] for o in calls.get(result.name, ()) if o in by_name and not by_name[o].passed]


def note_text(result: ExerciseResult, failing: list[ExerciseResult]) -> str:
    """A sentence saying that `result` uses the learner's own failing functions (fix those first), or ''."""
    notes = []
    for dep in failing:
        if dep.status == NOT_ATTEMPTED:
            notes.append(_("{name} calls your {dep}, which is not written yet (it raises NotImplementedError); "
                           "write {dep} first", name=result.name, dep=dep.name))
        else:
            notes.append(_("{name} calls your {dep}, which fails its own checks ({status}); fix {dep} first, this "
                           "exercise may pass once it does", name=result.name, dep=dep.name,
                           status=status_text(dep.status)))
    return ("; ".join(notes) + ".") if notes else ""


def dependency_note(result: ExerciseResult, calls: dict[str, list[str]], by_name: dict[str, ExerciseResult]) -> str:
    """note_text for the failing functions `result` uses, given the chapter's calls and results."""
    return note_text(result, failing_dependencies(result, calls, by_name))


def blocking(results: list[ExerciseResult], files: dict[str, Path]) -> dict[tuple[str, str], list[ExerciseResult]]:
    """(chapter, exercise) -> the failing results of the learner's own functions it uses, for every failing result;
    `files` maps a chapter number to the learner's file for it (see learner_files)."""
    by_chapter: dict[str, dict[str, ExerciseResult]] = {}
    for r in results:
        by_chapter.setdefault(r.chapter, {})[r.name] = r
    out = {}
    for chapter, by_name in by_chapter.items():
        path = files.get(chapter)
        if path is None or all(r.passed for r in by_name.values()):
            continue
        graph = exercise_calls(path, by_name)
        for r in by_name.values():
            failing = failing_dependencies(r, graph, by_name)
            if failing:
                out[(chapter, r.name)] = failing
    return out


def notes_for(results: list[ExerciseResult], files: dict[str, Path]) -> dict[tuple[str, str], str]:
    """(chapter, exercise) -> its dependency note, for every result that has one."""
    by_key = {(r.chapter, r.name): r for r in results}
    return {k: note_text(by_key[k], deps) for k, deps in blocking(results, files).items()}


def notes_by_student(rows: dict[str, list[ExerciseResult]], sources: dict[str, Path]) -> dict[str, dict]:
    """notes_for every student of a class, each learner file parsed once (the reports all read these)."""
    return {name: notes_for(results, learner_files(sources.get(name))) for name, results in rows.items()}


def chapter_exercises(chapter: str) -> list[str]:
    """The names of a chapter's exercises."""
    from .catalog import load_chapters

    return [e.name for c in load_chapters() if c.number == chapter for e in c.exercises]


def learner_files(source: Path | None) -> dict[str, Path]:
    """Chapter number -> the learner's file for it in `source` (an exercises/ folder); {} without a source."""
    if source is None:
        return {}
    from .catalog import load_chapters

    return {c.number: Path(source) / f"{c.module}.py" for c in load_chapters() if (Path(source) / f"{c.module}.py").exists()}

