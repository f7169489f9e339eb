"""Grade the course exercises.

    python judge.py                 grade everything in exercises/
    python judge.py 01              one chapter;  python judge.py lookup   one exercise
    python judge.py hint lookup     a hint, without the answer
    python judge.py quiz 01         print a chapter's quiz questions
    python judge.py list            every exercise with its status
    python judge.py doctor          check the environment and the course model
    python judge.py check           prove every stub fails and every solution passes
    python judge.py --solutions     grade solutions/ instead
    python judge.py --class DIR --gradebook grades.csv    grade each student folder in DIR
Reports: --json FILE, --junit FILE. Exit code 0 only when everything graded passed.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent
sys.path.insert(0, str(REPO))

COMMANDS = ("check", "doctor", "list", "hint", "quiz")


def _titles(chapters) -> dict[str, str]:
    return {c.number: c.title for c in chapters}


def cmd_grade(args) -> int:
    from grading import report, runner

    source = Path(args.source) if args.source else REPO / ("solutions" if args.solutions else "exercises")
    if not source.is_dir():
        print(f"No folder {source}. Run the judge from the course folder, or pass --source DIR.")
        return 2
    start = time.perf_counter()
    results = runner.grade(source, args.target, memory_mb=args.memory_mb)
    report.print_results(results, _titles(runner.load_chapters()), verbose=not args.quiet)
    print(f"Graded {source} in {time.perf_counter() - start:.1f} s.")
    if args.json:
        report.to_json(results, Path(args.json), str(source))
    if args.junit:
        report.to_junit(results, Path(args.junit))
    return 0 if results and all(r.passed for r in results) else 1


def cmd_class(args) -> int:
    from grading import report, runner

    folder = Path(args.class_dir)
    students = sorted(p for p in folder.iterdir() if (p / "exercises").is_dir()) if folder.is_dir() else []
    if not students:
        print(f"No student folders in {folder}: expected {folder}/<student>/exercises/.")
        return 2
    checker = runner.Checker()
    rows = {}
    for i, student in enumerate(students, 1):
        print(f"[{i}/{len(students)}] {student.name} ...", flush=True)
        try:
            results = runner.grade(student / "exercises", args.target, memory_mb=args.memory_mb, checker=checker)
        except Exception as exc:  # one student's folder must never stop the class
            print(f"    could not grade {student.name}: {exc}")
            results = []
        rows[student.name] = results
        print(f"    {sum(r.passed for r in results)}/{len(results)} exercises passed")
    gradebook = Path(args.gradebook or "gradebook.csv")
    report.write_gradebook(rows, gradebook)
    print(f"Gradebook written to {gradebook}")
    if args.json:
        import json
        data = {name: [{"chapter": r.chapter, "name": r.name, "status": r.status,
                        "failed_cases": [c.name for c in r.cases if not c.passed]} for r in rs]
                for name, rs in rows.items()}
        Path(args.json).write_text(json.dumps(data, indent=2), encoding="utf-8")
    return 0


def cmd_check(args) -> int:
    """Every stub must fail its checks and every solution must pass them."""
    from grading import runner

    start = time.perf_counter()
    stubs = runner.grade(REPO / "exercises", args.target, memory_mb=args.memory_mb)
    sols = runner.grade(REPO / "solutions", args.target, memory_mb=args.memory_mb)
    problems = [f"stub {r.name} passes its checks; it must not" for r in stubs if r.passed]
    problems += [f"stub {r.name} is '{r.status}'; an untouched stub must be 'not attempted'"
                 for r in stubs if r.status not in ("not attempted", "passed")]
    for r in sols:
        if not r.passed:
            failed = [f"{c.name}: {c.message}" for c in r.cases if not c.passed]
            problems.append(f"solution {r.name} is '{r.status}':\n      " + "\n      ".join(failed))
    for r in sols:
        print(f"  {r.name:<26} stub: {next(s.status for s in stubs if s.name == r.name):<14} solution: {r.status}")
    print(f"\nChecked {len(sols)} exercises in {time.perf_counter() - start:.1f} s.")
    if problems:
        print("PROBLEMS:\n  " + "\n  ".join(problems))
        return 1
    print("All stubs fail and all solutions pass.")
    return 0


def cmd_list(args) -> int:
    from grading import runner

    results = {r.name: r.status for r in runner.grade(REPO / "exercises", args.target, memory_mb=args.memory_mb)}
    for chapter in runner.load_chapters():
        print(f"Chapter {chapter.number}: {chapter.title}   (exercises/{chapter.module}.py)")
        for e in chapter.exercises:
            print(f"  {e.name:<26} {results.get(e.name, ''):<14} {e.summary}")
    return 0


def cmd_hint(args) -> int:
    from grading import runner

    for chapter in runner.load_chapters():
        for e in chapter.exercises:
            if e.name == args.target:
                print(f"{e.name} (chapter {chapter.number}): {e.summary}\nHint: {e.hint}")
                return 0
    print(f"No exercise called {args.target!r}. Try: python judge.py list")
    return 2


def cmd_quiz(args) -> int:
    from grading import runner, show_quiz

    for chapter in runner.load_chapters():
        if chapter.quiz and (not args.target or chapter.number == args.target.zfill(2)):
            show_quiz(chapter.number)
            print()
    return 0


def cmd_doctor(args) -> int:
    from lesson_utils.doctor import print_doctor

    return 0 if print_doctor() else 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("words", nargs="*", help="a command (check, doctor, list, hint NAME, quiz NN) or a chapter/exercise")
    p.add_argument("--solutions", action="store_true", help="grade solutions/ instead of exercises/")
    p.add_argument("--source", help="grade the exercise files in this folder")
    p.add_argument("--class", dest="class_dir", help="grade every DIR/<student>/exercises/ folder")
    p.add_argument("--gradebook", help="CSV file for --class (default gradebook.csv)")
    p.add_argument("--json", help="write a JSON report here")
    p.add_argument("--junit", help="write a JUnit XML report here")
    p.add_argument("--memory-mb", type=int, default=6144, help="memory limit for learner code (default 6144)")
    p.add_argument("-q", "--quiet", action="store_true", help="statuses only, no feedback")
    args = p.parse_args(argv)
    words = list(args.words)
    command = words.pop(0) if words and words[0] in COMMANDS else None
    args.target = words[0] if words else None
    if command == "hint" and not args.target:
        p.error("hint needs an exercise name: python judge.py hint lookup")
    if args.class_dir:
        return cmd_class(args)
    handler = {"check": cmd_check, "doctor": cmd_doctor, "list": cmd_list, "hint": cmd_hint, "quiz": cmd_quiz}
    return handler.get(command, cmd_grade)(args)


if __name__ == "__main__":
    sys.exit(main())
