"""Grade the course exercises.

    python judge.py                 grade everything in exercises/
    python judge.py 01              one chapter;  python judge.py lookup   one exercise
    python judge.py hint lookup     a hint, without the answer
    python judge.py quiz 01         print a chapter's quiz questions
    python judge.py list            every exercise with its status and points
    python judge.py progress        every chapter: how many exercises pass and which are left
    python judge.py doctor          check the environment and the course model
    python judge.py check           prove every stub fails and every solution passes
    python judge.py --solutions     grade solutions/ instead
    python judge.py --class DIR --gradebook grades.csv    grade each student folder in DIR
        --workers N (default: one per core, as memory allows), --scheduler ADDRESS (a Dask cluster)
        --feedback DIR (a Markdown and an HTML report per student), --lms-csv FILE [--lms canvas|moodle]
    python judge.py gradescope-package autograder.zip       build the Gradescope autograder upload
    python judge.py handout DIR [--git] [--github-classroom]  build the students' copy (tools/handout.py)
Reports: --json FILE, --junit FILE, --gradescope FILE, --classroom FILE.
Language: --lang zh (or en) before or after any command; else GRADING_LANG, else the locale (LANG=zh_CN.UTF-8).
Exit code 0 only when everything graded passed.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent
sys.path.insert(0, str(REPO))

from grading.i18n import LANGUAGES, _, show  # noqa: E402  (after the course folder is on the path)
from grading.model import status_text  # noqa: E402


def say(text: str = "", **kwargs) -> None:
    """Print `text` (marked messages) in the chosen language (--lang, GRADING_LANG or the locale)."""
    print(show(text), **kwargs)


def _positive(text: str) -> int:
    """--workers N: a whole number of at least 1."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return int(text)


COMMANDS = ("check", "doctor", "list", "hint", "quiz", "gradescope-package", "progress", "handout")


def _titles(chapters) -> dict[str, str]:
    return {c.number: c.title for c in chapters}


def cmd_grade(args) -> int:
    from grading.catalog import chapters_for
    from grading.engine import scheduler
    from grading.engine.sandbox import detect
    from grading.reports import console

    source = Path(args.source) if args.source else REPO / ("solutions" if args.solutions else "exercises")
    if not source.is_dir():
        say(_("No folder {folder}. Run the judge from the course folder, or pass --source DIR.", folder=str(source)))
        return 2
    start = time.perf_counter()
    printer = console.ConsolePrinter(_titles(chapters_for(args.target)), verbose=not args.quiet, source=source)
    say(_("Learner code runs in: {isolation}", isolation=detect().text()), flush=True)
    results = scheduler.grade(source, args.target, memory_mb=args.memory_mb, workers=args.workers, on_result=printer)
    printer.totals(results)
    seconds = time.perf_counter() - start
    say(_("Graded {folder} in {seconds:.1f} s.", folder=str(source), seconds=seconds))
    notes = None  # which failures come from another of the learner's functions: read once for every report
    if args.json or args.gradescope or args.classroom:
        from grading import dependencies

        notes = dependencies.notes_for(results, dependencies.learner_files(source))
    if args.json:
        console.to_json(results, Path(args.json), str(source), notes)
    if args.junit:
        console.to_junit(results, Path(args.junit))
    if args.gradescope or args.classroom:
        from grading.reports import exports

        if args.gradescope:
            exports.write_gradescope(results, Path(args.gradescope), seconds, source, notes=notes)
        if args.classroom:
            exports.write_classroom(results, Path(args.classroom), source, notes=notes)
    return 0 if results and all(r.passed for r in results) else 1


def cmd_class(args) -> int:
    from grading.catalog import load_chapters
    from grading.engine import scheduler
    from grading.engine.sandbox import detect
    from grading.reports.gradebook import progress_line, write_class_outputs

    folder = Path(args.class_dir)
    students = sorted(p for p in folder.iterdir() if (p / "exercises").is_dir()) if folder.is_dir() else []
    if not students:
        say(_("No student folders in {folder}: expected {folder}/<student>/exercises/.", folder=str(folder)))
        return 2
    say(_("Learner code runs in: {isolation}", isolation=detect().text()), flush=True)
    class_start = time.perf_counter()
    finished: list[str] = []

    def on_done(i: int, _source: Path, results: list) -> None:  # called from the scheduler's checking thread, once per student
        finished.append(students[i].name)
        now = time.perf_counter()
        say(f"[{len(finished)}/{len(students)}] {students[i].name}\n"
            + progress_line(len(finished), len(students), results, (now - class_start) / len(finished),
                            now - class_start), flush=True)

    try:  # each student's chapters are graded in sandboxed learner processes of warm workers (--workers, --scheduler)
        graded = grade_class(args, [s / "exercises" for s in students], on_done, blocked_extra=[folder])
    except Exception as exc:  # a failure of the judge itself, never one student's code
        say(_("Could not grade the class: {error}", error=str(exc)))
        return 2
    rows = {s.name: results for s, results in zip(students, graded)}
    gradebook = Path(args.gradebook or "gradebook.csv")
    write_class_outputs(rows, {s.name: s / "exercises" for s in students}, _titles(load_chapters()),
                        gradebook, json_path=args.json, feedback_dir=args.feedback, lms_csv=args.lms_csv,
                        lms_format=args.lms)
    return 0


def grade_class(args, sources: list[Path], on_done, blocked_extra: list[Path]) -> list[list]:
    """The class graded here on --workers workers, or on the Dask cluster at --scheduler; says which first."""
    from grading.engine import scheduler, worker_pool

    if args.scheduler:
        from grading.engine import cluster

        client = cluster.connect(args.scheduler)
        say(_("Grading {students} students on the Dask cluster at {address} ({workers} workers).",
              students=len(sources), address=args.scheduler, workers=len(client.scheduler_info()["workers"])),
            flush=True)
        with client:
            return cluster.grade_on_cluster(client, sources, args.target, memory_mb=args.memory_mb, on_done=on_done)
    if args.workers:
        say(_("Grading {students} students on {workers} workers (--workers).", students=len(sources),
              workers=args.workers), flush=True)
    else:
        count = worker_pool.default_workers()
        say(_("Grading {students} students on {workers} workers: one per core ({cores}), as memory allows "
              "({memory} MB available, about {per} MB per worker); --workers N to change it.",
              students=len(sources), workers=count.count, cores=count.cores, memory=count.memory_mb or "?",
              per=worker_pool.WORKER_MB), flush=True)
    return scheduler.grade_many(sources, args.target, memory_mb=args.memory_mb, workers=args.workers,
                                on_done=on_done, blocked_extra=blocked_extra)


def cmd_check(args) -> int:
    """Every stub must fail its checks and every solution must pass them."""
    if not (REPO / "solutions").is_dir() or not (REPO / "tools" / "mutants.py").is_file():
        print("python judge.py check proves the course's solutions and mutants, and this copy has neither (a "
              "students' hand-out). Grade your own work with: python judge.py")
        return 2
    from grading.engine import scheduler
    from tools import mutants  # every plausible wrong answer in mutants/ must fail too (issue 14)

    start = time.perf_counter()
    from grading import i18n
    from grading.catalog import load_chapters

    stubs, sols = scheduler.grade_many([REPO / "exercises", REPO / "solutions"], args.target, memory_mb=args.memory_mb,
                                       workers=args.workers, lang=i18n.MARKED)  # checked for untranslated text, then shown in English
    modules = {c.number: c.module for c in load_chapters()}
    untranslated = sorted({leak for r in stubs + sols if i18n.has_catalog(modules[r.chapter])
                           for leak in i18n.untranslated(r, "zh")})
    stubs, sols = [i18n.localize(r, "en") for r in stubs], [i18n.localize(r, "en") for r in sols]
    problems = [f"stub {r.name} passes its checks; it must not" for r in stubs if r.passed]
    problems += [f"stub {r.name} is '{r.status}'; an untouched stub must be 'not attempted'"
                 for r in stubs if r.status not in ("not attempted", "passed")]
    for r in sols:
        if not r.passed:
            failed = [f"{c.name}: {c.message}" for c in r.cases if not c.passed]
            problems.append(f"solution {r.name} is '{r.status}':\n      " + "\n      ".join(failed))
    proof_start = time.perf_counter()
    proved, notes = mutants.prove(args.target, memory_mb=args.memory_mb)
    per_exercise = mutants.counts()
    problems += mutants.problems(proved, None if args.target else per_exercise)
    problems += [f"no Chinese for: {leak[:200]!r} (python -m tools.messages update, translate, compile)"
                 for leak in untranslated]
    for r in sols:
        mine = [m for m in proved if m.mutant.exercise == r.name]
        killed = f"mutants: {sum(m.ok for m in mine)}/{per_exercise[r.name]} fail" if r.name in per_exercise else ""
        print(f"  {r.name:<26} stub: {next(s.status for s in stubs if s.name == r.name):<14} solution: "
              f"{r.status:<14} {killed}")
    print("".join(f"  note: {n}\n" for n in notes) + f"\nChecked {len(sols)} exercises and {len(proved)} mutants in "
          f"{time.perf_counter() - start:.1f} s (mutants: {time.perf_counter() - proof_start:.1f} s).")
    if problems:
        print("PROBLEMS:\n  " + "\n  ".join(problems))
        return 1
    print("All stubs fail and all solutions pass.\nEvery mutant in mutants/ fails.")
    return 0


def cmd_progress(args) -> int:
    """Every chapter's exercises with their status, and what is left (the same as check() in a notebook)."""
    from grading.catalog import load_chapters
    from grading.engine import scheduler
    from grading.reports.console import progress_lines

    source = Path(args.source) if args.source else REPO / ("solutions" if args.solutions else "exercises")
    results = scheduler.grade(source, args.target, memory_mb=args.memory_mb, workers=args.workers)
    chapters = load_chapters()
    for chapter in chapters:
        mine = [r for r in results if r.chapter == chapter.number]
        if mine:
            say(_("Chapter {chapter}: {title}", chapter=chapter.number, title=chapter.title)
                + f"   (exercises/{chapter.module}.py)")
            for r in mine:
                say(f"  {'✓' if r.passed else '·'} {r.name:<28} " + status_text(r.status))
    say("\n" + "\n".join(progress_lines(results, chapters)))
    return 0


def cmd_list(args) -> int:
    from grading.catalog import load_chapters
    from grading.engine import scheduler
    from grading.reports import points

    results = {r.name: r for r in scheduler.grade(REPO / "exercises", args.target, memory_mb=args.memory_mb,
                                                  workers=args.workers)}
    course = [0.0, 0.0]
    for chapter in load_chapters():
        scored = [(e, points.score(results[e.name], e) if e.name in results else None) for e in chapter.exercises]
        got = sum(s.points for _, s in scored if s)
        top = sum(points.max_points(e) for e in chapter.exercises)
        course = [course[0] + got, course[1] + top]
        say(_("Chapter {chapter}: {title}", chapter=chapter.number, title=chapter.title)
            + f"   (exercises/{chapter.module}.py, " + _("{points}/{top} points", points=points.fmt(got),
                                                           top=points.fmt(top)) + ")")
        for e, s in scored:
            status = show(status_text(results[e.name].status)) if e.name in results else ""
            pts = f"{points.fmt(s.points) if s else '-'}/{points.fmt(points.max_points(e))}"
            kind = (_("(1 per question)") if e.partial_credit and e.is_quiz
                    else (_("(partial credit)") if e.partial_credit else ""))
            say(f"  {e.name:<26} {status:<14} {pts:>6} " + _("pts") + f" {show(kind):<16} " + e.summary)
    say("\n" + _("Course: {points}/{top} points. A coding exercise scores all or nothing unless marked partial "
                 "credit; a quiz scores per question.", points=points.fmt(course[0]), top=points.fmt(course[1])))
    return 0


def cmd_hint(args) -> int:
    from grading.catalog import load_chapters

    for chapter in load_chapters():
        for e in chapter.exercises:
            if e.name == args.target:
                say(_("{name} (chapter {chapter}): {summary}", name=e.name, chapter=chapter.number, summary=e.summary)
                    + "\n" + _("Hint: {hint}", hint=e.hint))
                return 0
    say(_("No exercise called {name}. Try: python judge.py list", name=repr(args.target)))
    return 2


def cmd_quiz(args) -> int:
    from grading import show_quiz
    from grading.catalog import find_chapter, load_chapters

    chapters = load_chapters()
    wanted = find_chapter(chapters, args.target) if args.target else None
    for chapter in chapters:
        if chapter.quiz and (not args.target or chapter is wanted):
            show_quiz(chapter.number)
            print()
    return 0


def cmd_gradescope_package(args) -> int:
    """Build the Gradescope autograder upload (setup.sh, run_autograder, the judge; never solutions/)."""
    from tools.gradescope_package import build_package

    path = Path(args.target or "autograder.zip")
    names = build_package(path)
    say(_("Wrote {path} ({n} files, {kb} KB): upload it as the assignment's autograder in Gradescope (Configure "
          "Autograder > Zip file upload).", path=str(path), n=len(names), kb=path.stat().st_size // 1024))
    return 0


def cmd_doctor(args) -> int:
    from grading.engine.sandbox import backend_check, doctor_check
    from lesson_utils.doctor import print_doctor

    return 0 if print_doctor(extra=[doctor_check, backend_check]) else 1


def console_safe() -> None:
    """A console that cannot show a character (a Windows console in cp1252 and a ✓, a name in Chinese) shows '?'
    instead of the judge stopping with UnicodeEncodeError halfway through a class."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="replace")
        except (AttributeError, ValueError):
            pass


def cmd_handout(argv: list[str]) -> int:
    """Build the students' copy of the course (its own options: python judge.py handout --help)."""
    if not (REPO / "tools" / "handout.py").is_file():
        print("This copy is a students' hand-out: the hand-out builder is in the course repository.")
        return 2
    from tools.handout import main as handout_main

    return handout_main(argv)


def take_lang(argv: list[str]) -> list[str]:
    """Take `--lang X` / `--lang=X` out of argv (it works before or after any command, the hand-out's included)
    and make X the language of everything the judge says, through GRADING_LANG (grading/i18n.py)."""
    import os

    rest, i = [], 0
    while i < len(argv):
        a = argv[i]
        if a == "--lang" or a.startswith("--lang="):
            value = a.split("=", 1)[1] if "=" in a else (argv[i + 1] if i + 1 < len(argv) else "")
            i += 1 if "=" in a else 2
            if value not in LANGUAGES:
                raise SystemExit(f"--lang: choose one of {', '.join(LANGUAGES)} (got {value!r})")
            os.environ["GRADING_LANG"] = value
            continue
        rest.append(a)
        i += 1
    return rest


def main(argv: list[str] | None = None) -> int:
    argv = take_lang(sys.argv[1:] if argv is None else list(argv))
    if argv[:1] == ["handout"]:
        return cmd_handout(argv[1:])
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("words", nargs="*", help="a command (check, doctor, list, hint NAME, quiz NN, gradescope-package ZIP) "
                   "or a chapter/exercise")
    p.add_argument("--solutions", action="store_true", help="grade solutions/ instead of exercises/")
    p.add_argument("--source", help="grade the exercise files in this folder")
    p.add_argument("--class", dest="class_dir", help="grade every DIR/<student>/exercises/ folder")
    p.add_argument("--gradebook", help="CSV file for --class (default gradebook.csv)")
    p.add_argument("--json", help="write a JSON report here")
    p.add_argument("--junit", help="write a JUnit XML report here")
    p.add_argument("--feedback", metavar="DIR", help="with --class: write DIR/<student>.md and .html feedback reports")
    p.add_argument("--gradescope", metavar="FILE", help="write Gradescope's results.json here")
    p.add_argument("--classroom", metavar="FILE", help="write a GitHub Classroom runner result (JSON) here")
    p.add_argument("--lms-csv", metavar="FILE", help="with --class: write a grade CSV for Canvas or Moodle import")
    p.add_argument("--lms", choices=["canvas", "moodle"], default="canvas", help="format of --lms-csv (default canvas)")
    p.add_argument("--memory-mb", type=int, default=6144, help="memory limit for learner code (default 6144)")
    p.add_argument("--workers", type=_positive, help="grading workers (default: one per core, as memory allows)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="with --class: grade on the Dask cluster whose scheduler is "
                   "at ADDRESS (tcp://host:8786; needs the cluster extra)")
    p.add_argument("-q", "--quiet", action="store_true", help="statuses only, no feedback")
    p.add_argument("--lang", choices=LANGUAGES, help="the language of every message: en or zh (default: GRADING_LANG, "
                   "else the locale); teacher files keep their English column names")
    args = p.parse_args(argv)
    console_safe()
    words = list(args.words)
    command = words.pop(0) if words and words[0] in COMMANDS else None
    args.target = words[0] if words else None
    if command == "hint" and not args.target:
        p.error("hint needs an exercise name: python judge.py hint lookup")
    if command == "gradescope-package":
        return cmd_gradescope_package(args)
    if args.scheduler and args.workers:
        p.error("--workers and --scheduler: choose one (on a cluster, its Dask workers are the workers)")
    if args.class_dir:
        return cmd_class(args)
    if args.scheduler:
        p.error("--scheduler grades a class on a cluster: add --class DIR")
    handler = {"check": cmd_check, "doctor": cmd_doctor, "list": cmd_list, "hint": cmd_hint, "quiz": cmd_quiz,
               "progress": cmd_progress}
    return handler.get(command, cmd_grade)(args)


if __name__ == "__main__":
    sys.exit(main())
