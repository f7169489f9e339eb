"""judge.py's command line, checked before anything runs: what each command takes (words, flags, report paths)
and, for anything it does not take, a message that says where it belongs. Nothing the user gives is dropped
silently: it takes effect or is refused."""
from __future__ import annotations

import argparse

from .i18n import _, verbatim


def whole_number(text: str) -> int:
    """--workers N: a whole number of at least 1."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return int(text)


def megabytes(text: str) -> int:
    """--memory-mb N: megabytes, at least LEAST_MEMORY_MB (a negative limit would be no limit at all)."""
    from .worker.limits import LEAST_MEMORY_MB, MEMORY_MB

    if not text.isdigit() or int(text) < LEAST_MEMORY_MB:
        raise argparse.ArgumentTypeError(f"expected megabytes, a whole number of at least {LEAST_MEMORY_MB} (the "
                                         f"default is {MEMORY_MB}), got {text!r}")
    return int(text)


REPORT_FLAGS = ("gradebook", "json", "junit", "feedback", "gradescope", "classroom", "lms_csv", "excel")
CLASS_ONLY = ("trusted_class", "student", "update", "container")
ONE_FOLDER_ONLY = ("source", "solutions", "quiet")
GRADING_LIMITS = ("memory_mb", "workers")  # the commands that run learner code take them


def extra_words(command: str | None, words: list[str]) -> str:
    """A message when more words were given than `command` takes (none is dropped silently), or ''."""
    most = 0 if command == "doctor" else 1
    if len(words) <= most:
        return ""
    usage = {
        None: _("python judge.py grades one chapter or one exercise (04, softmax), or the whole course with none."),
        "hint": _("python judge.py hint takes one exercise: python judge.py hint lookup"),
        "quiz": _("python judge.py quiz takes one chapter (quiz 04), or none for every quiz."),
        "doctor": _("python judge.py doctor takes nothing more: it checks the whole setup."),
        "gradescope-package": _("python judge.py gradescope-package takes one file: the zip it writes."),
    }.get(command) or _("python judge.py {command} takes one chapter or exercise, or none for the whole course.",
                        command=command)
    return _("{words} would be left out: {usage}", words=verbatim(" ".join(words[most:])), usage=usage)


def unwritable_reports(args, command: str | None) -> str:
    """A message for a report path that cannot be written, told before grading (grading/reports/paths.py), or ''."""
    if command is not None:
        return ""
    from .reports.paths import unwritable

    outputs = {d: getattr(args, d) for d in REPORT_FLAGS if d != "excel"}
    if args.class_dir and not args.gradebook:
        outputs["gradebook"] = "gradebook.csv"  # where --class writes it by default (grading/class_run.py)
    return unwritable(outputs, per_student_folders=bool(args.class_dir))


def misplaced_flags(args, command: str | None) -> str:
    """A message for the first flag given where it does nothing (a flag either works or is refused), or ''."""
    def flag(dest: str) -> str:
        return "--" + dest.replace("_", "-") if dest != "quiet" else "-q"

    given = [d for d in (*REPORT_FLAGS, *CLASS_ONLY, *ONE_FOLDER_ONLY, "class_dir", "lms", *GRADING_LIMITS)
             if getattr(args, d)]
    if command is not None:
        allowed = {"progress": ("source", "solutions", *GRADING_LIMITS), "list": GRADING_LIMITS,
                   "prove": GRADING_LIMITS, "check": GRADING_LIMITS}.get(command, ())
        bad = [d for d in given if d not in allowed]
        if bad:
            return _("{flag} does nothing with '{command}': it belongs to grading (python judge.py [CHAPTER] "
                     "[--source DIR], or --class DIR).", flag=flag(bad[0]), command=command)
        return ""
    if args.lms and not args.lms_csv:
        return _("--lms chooses the format of --lms-csv FILE: give --lms-csv too.")
    if args.excel and not (args.class_dir or args.gradebook or args.lms_csv):
        return _("--excel changes the CSV files (--gradebook, --lms-csv): give one of them too.")
    mode, wrong = (_("--class (a class folder)"), ONE_FOLDER_ONLY) if args.class_dir else (
        _("one folder (python judge.py [--source DIR])"), CLASS_ONLY)
    bad = [d for d in given if d in wrong]
    if bad:
        other = _("one folder (python judge.py [--source DIR])") if args.class_dir else _("--class DIR")
        return _("{flag} belongs to {other}, not to {mode}.", flag=flag(bad[0]), other=other, mode=mode)
    return ""
