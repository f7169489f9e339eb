"""Which of the learner's exercise functions call which others, read from the learner file's syntax tree, and the
note a report shows when a failure comes from another of the learner's own functions.

When `top_p_filter` fails because it calls the learner's own broken `softmax`, the feedback says so: the real fix is
in `softmax`. The judge reads each learner file's call graph once (call_graph, grading/engine/scheduler.py) and
records the failing functions each result calls (ExerciseResult.fails_through, grading/engine/checker.py); the
reports only word it (note, blocking). Nothing is imported or run here; an unreadable file gives no calls.
"""
from __future__ import annotations

import ast
from typing import Iterable

from .i18n import _
from .model import NOT_ATTEMPTED, ExerciseResult, status_text


def call_graph(code: str, names: Iterable[str]) -> dict[str, list[str]]:
    """For each exercise function in the learner file's `code`, the other exercise functions it uses, directly or
    through module-level helper functions (an exercise reached through another exercise is that one's business)."""
    names = set(names)
    try:
        tree = ast.parse(code)
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


def note(result: ExerciseResult) -> str:
    """A sentence saying that `result` uses the learner's own failing functions (fix those first), or ''."""
    notes = []
    for dep, status in result.fails_through:
        if status == NOT_ATTEMPTED:
            notes.append(_("{name} calls your {dep}, which is not written yet (it raises NotImplementedError); "
                           "write {dep} first", name=result.name, dep=dep))
        else:
            notes.append(_("{name} calls your {dep}, which fails its own checks ({status}); fix {dep} first, this "
                           "exercise may pass once it does", name=result.name, dep=dep, status=status_text(status)))
    return ("; ".join(notes) + ".") if notes else ""


def blocking(results: list[ExerciseResult]) -> dict[tuple[str, str], list[str]]:
    """(chapter, exercise) -> the names of the learner's own failing functions it uses, for every result that has
    some."""
    return {(r.chapter, r.name): [dep for dep, _status in r.fails_through] for r in results if r.fails_through}


def notes_for(results: list[ExerciseResult]) -> dict[tuple[str, str], str]:
    """(chapter, exercise) -> its note, for every result that has one."""
    return {(r.chapter, r.name): note(r) for r in results if r.fails_through}


def notes_by_student(rows: dict[str, list[ExerciseResult]]) -> dict[str, dict]:
    """notes_for every student of a class."""
    return {name: notes_for(results) for name, results in rows.items()}
