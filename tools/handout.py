"""Build the copy of the course a teacher gives to students: everything a student needs, no answer.

    python judge.py handout DIR [--git] [--github-classroom]     (or: python tools/handout.py DIR ...)

DIR gets the files of the course's last commit (`git archive HEAD`: uncommitted edits, such as exercises a
teacher solved in their own copy, never get in) without:
- solutions/ and mutants/ (complete answers, and answers one named mistake away from complete),
- the history (.git), the maintainer tools that read the answers (LEFT_OUT_FILES), the course's CI (.ci/) and
  the teachers' templates/,
- every test file that holds the body of an answer (found by tools/answer_scan.py; tests that only read the
  answers stay and skip there, because of the marker file below).
It puts a section for students at the top of README.md (templates/handout/README.md; the course's README follows),
the .gitignore for student work (templates/handout/gitignore) and HANDOUT_MARKER, which makes the tests that need
the answers skip with that reason. `make test` (python course.py test) is the hand-out's test command, as in
the course. Then it scans the whole hand-out and refuses (raises HandoutError) if any file holds a solution's
body, or a mutant's body anywhere but in the judge's checks (which name mistakes by computing them).

--git makes DIR a fresh repository with one commit; --github-classroom adds templates/github-classroom/classroom.yml
as .github/workflows/classroom.yml (a GitHub Classroom template repository; `judge.py --lang zh handout ...` makes
its feedback Chinese). The course's own workflows (.github/workflows/: CI, website) are left out. Both READMEs get
the students' part in their language (templates/handout/README.md and README.zh.md), ended by STUDENTS_PART_END.
"""
from __future__ import annotations

import argparse
import io
import os
import json
import re
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from answer_scan import Leak, answer_index, find_leaks, leaks_in  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
HANDOUT_MARKER = ".course-handout"  # tests/answers.py reads the same name
LEFT_OUT_DIRS = {
    "solutions/": "the reference solutions",
    "mutants/": "wrong answers, each one named mistake away from a solution",
    ".ci/": "the course's own CI",
    ".github/workflows/": "the course's CI and website workflows (long jobs on every student push; Pages is off in a "
                          "student's copy); --github-classroom adds the Classroom workflow",
    "templates/": "teachers' templates",
}
LEFT_OUT_FILES = {  # maintainer tools that read the answers
    "tools/mutants.py": "the mutant proof (reads mutants/ and solutions/)",
    "tools/bench.py": "the class benchmark (builds students from solutions/ and mutants/)",
    "tools/handout.py": "this builder (scans solutions/ and mutants/)",
    "tools/answer_scan.py": "the answer scan (reads solutions/ and mutants/)",
    "tools/stubs.py": "makes exercises/ from solutions/ (which a hand-out leaves out)",
    "tests/test_workflows.py": "the tests of the course's workflows, which a hand-out leaves out",
}
TEMPLATE = REPO / "templates" / "handout"
STUDENTS_PART_END = "<!-- end of the students' part: the course's README follows -->"
# Sentences of the course's READMEs that are untrue in a hand-out, and what the hand-out says instead.
README_EDITS = {
    "README.md": [("The reference answers\nare in `solutions/` with the same file names; each is the one source of its exercise file\n"
                   "(`python -m tools.stubs write` makes `exercises/` from it, `python -m tools.stubs check` proves the two agree).",
                   "This copy has no reference\nanswers (your teacher has them).")],
    "README.zh.md": [("参考答案在 `solutions/` 中，文件名相同；\n它们是练习文件的唯一来源（`python -m tools.stubs write` 由它们生成 `exercises/`，"
                      "`python -m tools.stubs check`\n检查两者一致）。", "本副本不含参考答案（答案在老师那里）。")],
}
EXAMPLE = {"example_chapter": "04", "example_file": "exercises/ch04_sampling.py", "example_exercise": "top_p_filter"}


class HandoutError(Exception):
    """The hand-out cannot be built, or would give an answer away."""


@dataclass
class Handout:
    """What build_handout wrote."""
    dest: Path
    commit: str
    files: list[str]                                         # relative paths written
    left_out: dict[str, str] = field(default_factory=dict)   # relative path -> why


def is_check_module(rel: str) -> bool:
    """The judge's checks: they compute the named mistakes (so they hold mutant bodies) but never a solution."""
    return rel.startswith("grading/checks/")


def forbidden(leaks: list[Leak]) -> list[Leak]:
    """The leaks a hand-out must not have: any solution body; a mutant body outside the judge's checks."""
    return [leak for leak in leaks
            if not (leak.answer.startswith("mutants/") and is_check_module(leak.file.split("#")[0]))]


def _git(*args: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, check=True)
    except FileNotFoundError:
        raise HandoutError("git is not installed: the hand-out is built from a git clone of the course.") from None
    except subprocess.CalledProcessError as exc:
        raise HandoutError(f"git {' '.join(args)} failed in {REPO}: {exc.stderr.decode(errors='replace').strip()}. "
                           "Build the hand-out from a git clone of the course (a ZIP download has no commit).") from None


def _committed_files() -> tuple[str, dict[str, bytes]]:
    """The last commit's id and its files (path -> bytes)."""
    commit = _git("rev-parse", "HEAD").stdout.decode().strip()
    archive = tarfile.open(fileobj=io.BytesIO(_git("archive", "--format=tar", commit).stdout))
    return commit, {m.name: archive.extractfile(m).read() for m in archive.getmembers() if m.isfile()}


def _uncommitted() -> list[str]:
    out = _git("status", "--porcelain", "--untracked-files=no").stdout.decode()
    return [line[3:] for line in out.splitlines() if line.strip()]


def handout_readme(name: str, text: str) -> str:
    """The course's README `name` as a hand-out holds it: README_EDITS applied (HandoutError when one no longer
    matches, so that a changed README cannot keep an untrue sentence)."""
    for old, new in README_EDITS[name]:
        if old not in text:
            raise HandoutError(f"{name} no longer has {old!r}: update README_EDITS in tools/handout.py")
        text = text.replace(old, new)
    return text


def classroom_workflow(lang: str | None = None) -> bytes:
    """templates/github-classroom/classroom.yml, with the judge's feedback in `lang` (GRADING_LANG) when given."""
    text = (REPO / "templates/github-classroom/classroom.yml").read_text(encoding="utf-8")
    if lang:
        line = '          HF_HUB_OFFLINE: "1"\n'
        if line not in text:
            raise HandoutError("templates/github-classroom/classroom.yml has no HF_HUB_OFFLINE line to set the "
                               "language beside")
        text = text.replace(line, line + f'          GRADING_LANG: "{lang}"\n', 1)
    return text.encode("utf-8")


QUIZ_HASH = re.compile(rb'(Question\(\s*\d+\s*,.*?\},\s*)"([0-9a-f]{20})"', re.S)  # Question(id, text, choices, "hash",


def hide_quiz_answers(files: dict[str, bytes]) -> int:
    """Blank every quiz answer hash in the judge's checks (files changed in place); the number blanked. The
    students' judge then says each answered question is graded by the teacher: no answer can be tried until it
    passes (the hash's salt is public, so a hash in the hand-out would give its answer away too)."""
    blanked = 0
    for rel in [r for r in files if is_check_module(r) and r.endswith(".py")]:
        files[rel], n = QUIZ_HASH.subn(rb'\1""', files[rel])
        blanked += n
    return blanked


def build_handout(dest: Path, git: bool = False, classroom: bool = False, lang: str | None = None,
                  quiz_answers: bool = True) -> Handout:
    """Write the students' copy of the course into dest (a new or empty folder); see the module docstring."""
    dest = Path(dest).resolve()
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise HandoutError(f"{dest} exists and is not an empty folder: choose a new folder for the hand-out.")
    commit, files = _committed_files()
    left_out = {rel: why for rel in files for prefix, why in LEFT_OUT_DIRS.items() if rel.startswith(prefix)}
    left_out |= {rel: why for rel, why in LEFT_OUT_FILES.items() if rel in files}
    index = answer_index(REPO)
    tests = {rel: files[rel] for rel in files if rel.startswith("tests/") and rel not in left_out}
    for leak in leaks_in(tests, index):
        left_out.setdefault(leak.file.split("#")[0], f"holds the body of {leak.answer} (line {leak.line})")
    if not quiz_answers:
        left_out["tests/test_quizzes.py"] = "checks the quiz answers, which this hand-out leaves out"
    kept = {rel: data for rel, data in files.items() if rel not in left_out}
    if not quiz_answers and not hide_quiz_answers(kept):
        raise HandoutError("--hide-quiz-answers found no quiz answer in grading/checks/: update QUIZ_HASH in "
                           "tools/handout.py")
    notebooks = sorted(p for p in kept if re.fullmatch(r"notebooks/\d\d[a-z]?_\w+\.ipynb", p))
    fields = dict(last_chapter=Path(notebooks[-1]).name[:2] if notebooks else "the last", **EXAMPLE,
                  chinese=" (`notebooks/zh/` has them in Chinese: 中文版)" if any(p.startswith("notebooks/zh/")
                                                                               for p in kept) else "")
    for readme in README_EDITS:  # each README gets the students' part in its language, then the course's own
        if readme in kept:
            students = (TEMPLATE / readme).read_text(encoding="utf-8").format(**fields)
            kept[readme] = (students + f"\n{STUDENTS_PART_END}\n\n---\n\n"
                            + handout_readme(readme, kept[readme].decode("utf-8"))).encode("utf-8")
    kept[".gitignore"] = (TEMPLATE / "gitignore").read_bytes()
    if classroom:
        kept[".github/workflows/classroom.yml"] = classroom_workflow(lang)
    kept[HANDOUT_MARKER] = (json.dumps({"built_from": commit, "left_out": _summary(left_out)}, indent=1)
                            + "\n").encode()
    _write(dest, kept)

    leaks = forbidden(find_leaks(dest, index))
    if leaks:
        raise HandoutError(f"the hand-out in {dest} would give answers away; fix these files (a notebook or a "
                           "helper must never hold an answer's body):\n  " + "\n  ".join(map(str, leaks)))
    if git:
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "Course hand-out"]):
            subprocess.run(["git", "-C", str(dest), *args], check=True)
    return Handout(dest, commit, sorted(kept), left_out)


def _summary(left_out: dict[str, str]) -> list[str]:
    """The left-out folders, then each other left-out file (never the mutants' names: they name the mistakes)."""
    folders = sorted({prefix for prefix in LEFT_OUT_DIRS for rel in left_out if rel.startswith(prefix)})
    return folders + sorted(rel for rel in left_out if not rel.startswith(tuple(LEFT_OUT_DIRS)))


def _write(root: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    if "judge.py" in files:
        (root / "judge.py").chmod(0o755)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python judge.py handout", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dest", type=Path, help="a new (or empty) folder for the hand-out")
    p.add_argument("--git", action="store_true", help="make it a fresh git repository with one commit")
    p.add_argument("--hide-quiz-answers", action="store_true",
                   help="for a graded assignment: the students' judge does not say whether a quiz answer is right "
                        "(they could try each choice until it passes); grade the quiz with your own copy")
    p.add_argument("--github-classroom", dest="classroom", action="store_true",
                   help="add the GitHub Classroom workflow as .github/workflows/classroom.yml")
    args = p.parse_args(argv)
    try:
        changed = _uncommitted()
        handout = build_handout(args.dest, git=args.git, classroom=args.classroom,
                                lang=os.environ.get("GRADING_LANG") or None,  # judge.py --lang sets it
                                quiz_answers=not args.hide_quiz_answers)
    except HandoutError as exc:
        print(f"No hand-out built: {exc}")
        return 2
    print(f"Wrote {handout.dest}: {len(handout.files)} files from commit {handout.commit[:12]}. Left out:")
    for item in _summary(handout.left_out):
        why = LEFT_OUT_DIRS.get(item) or handout.left_out[item]
        print(f"  {item}: {why}")
    if changed:
        print(f"Not included: uncommitted changes to {len(changed)} file(s) ({', '.join(changed[:3])}"
              f"{', ...' if len(changed) > 3 else ''}); commit them and build again to include them.")
    print("Students start with README.md; `make test` there checks their set-up.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
