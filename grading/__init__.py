"""The course's grading engine: checks per chapter (chNN_*.py) and the machinery `judge.py` uses."""
from __future__ import annotations


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


class CheckResult:
    """What `check()` returns: `.passed` is True only when every graded exercise passed."""

    def __init__(self, results: list) -> None:
        self.results = results

    @property
    def passed(self) -> bool:
        return bool(self.results) and all(r.passed for r in self.results)

    def __repr__(self) -> str:
        lines = []
        for r in self.results:
            marks = "".join("✓" if c.passed else "✗" for c in r.cases)
            lines.append(f"{r.name:<26} {r.status:<14} {marks}")
            first = next((c for c in r.cases if not c.passed), None)
            if first is not None and r.status != "not attempted":
                lines.append(f"    {first.name}: {first.message}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        import html

        rows = []
        for r in self.results:
            marks = "".join("✓" if c.passed else "✗" for c in r.cases)
            first = next((c for c in r.cases if not c.passed), None)
            detail = "" if first is None or r.status == "not attempted" else f"{first.name}: {first.message}"
            rows.append(f"<tr><td><code>{html.escape(r.name)}</code></td><td>{html.escape(r.status)}</td>"
                        f"<td>{marks}</td><td><pre>{html.escape(detail)}</pre></td></tr>")
        return "<table><tr><th>exercise</th><th>status</th><th>cases</th><th>first failure</th></tr>" + "".join(rows) + "</table>"


def check(target: str | None = None) -> CheckResult:
    """Grade your current exercises/ files from a notebook: check("top_p_filter"), check("04") or check()."""
    from .runner import REPO, grade

    return CheckResult(grade(REPO / "exercises", target))
