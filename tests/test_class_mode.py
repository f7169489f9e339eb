"""--class grades every student folder, whatever its layout, and every report flag works in both modes.

One class run (module fixture `klass`) holds the layouts students really hand in, an empty folder, a broken archive,
a notebooks-only folder, a file not saved as UTF-8 and an error message that tries to overwrite the teacher's
terminal; the tests read its reports. Exercise `embedding_backward` only (no course model): the class stays fast.
"""
from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

import pytest
from answers import solution_source
from browser import launch_args, require_browser

from grading import submissions
from grading.model import CaseResult, ExerciseResult
from grading.reports import learner_text

REPO = Path(__file__).resolve().parent.parent
EXERCISE = "embedding_backward"
FILE = "ch01_embeddings.py"
SOLUTION = solution_source("ch01_embeddings")
WRONG = SOLUTION + '''

def embedding_backward(grad_out, ids, vocab_size):
    return torch.zeros(vocab_size, grad_out.shape[-1], dtype=grad_out.dtype)
'''
FORGERY = "\x1b[2K\r6/6 passed, 20/20"  # erase the line, back to its start, write a verdict
HOSTILE = SOLUTION + f"\nraise ValueError({FORGERY!r})\n"
LATIN1 = ("# café\n" + SOLUTION).encode("latin-1", "replace")


def run_judge(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "judge.py"), *args], cwd=REPO, capture_output=True, text=True,
                          timeout=900, env={**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})})


def _zip(path: Path, files: dict[str, bytes]) -> None:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)


def make_class(root: Path) -> Path:
    k = root / "class"
    put = lambda rel, text: (k / rel).parent.mkdir(parents=True, exist_ok=True) or (  # noqa: E731
        (k / rel).write_bytes(text if isinstance(text, bytes) else text.encode()))
    put(f"alice/exercises/{FILE}", SOLUTION)  # the course's layout
    put(f"bob/Exercises/{FILE}", WRONG)  # capitalised
    put(f"carol/submission/exercises/{FILE}", SOLUTION)  # one level deeper
    put(f"dave/{FILE}", SOLUTION)  # loose
    put("dave/notes.txt", "my notes")
    _zip(k / "erin.zip", {f"course-main/exercises/{FILE}": SOLUTION.encode(), "course-main/README.md": b"x"})
    (k / "frank").mkdir()
    with tarfile.open(k / "frank" / "work.tar.gz", "w:gz") as tf:  # an archive in the student's folder
        info = tarfile.TarInfo(FILE)
        info.size = len(SOLUTION.encode())
        tf.addfile(info, io.BytesIO(SOLUTION.encode()))
    put("gina/01a_embedding_lookup.ipynb", "{}")  # notebooks only
    (k / "hank").mkdir()  # nothing handed in
    (k / "ivan.zip").write_bytes(b"PK\x03\x04 this is not a zip file")  # broken archive
    put(f"mallory/exercises/{FILE}", HOSTILE)
    put(f"olga/exercises/{FILE}", LATIN1)
    put(f"pat/exercises/{FILE}", "def oops(:\n")  # loses the chapter to a syntax error
    # a file name that tries to rewrite the line (Windows allows no control character in a name: a plain one there)
    put("quinn/report.txt" if os.name == "nt" else "quinn/\x1b[2K\rreport.txt", "not an exercise")
    return k


GRADED = {"alice", "bob", "carol", "dave", "erin", "frank", "mallory", "olga", "pat"}
NOT_GRADED = {"gina", "hank", "ivan", "quinn"}


@pytest.fixture(scope="module")
def klass(tmp_path_factory):
    root = tmp_path_factory.mktemp("class_mode")
    k, out = make_class(root), root / "out"
    proc = run_judge("--class", str(k), EXERCISE, "--trusted-class", "--gradebook", str(out / "grades.csv"),
                     "--json", str(out / "class.json"), "--feedback", str(out / "feedback"), "--lms-csv",
                     str(out / "canvas.csv"), "--junit", str(out / "junit"), "--gradescope", str(out / "gradescope"),
                     "--classroom", str(out / "classroom"), "--excel")
    return k, out, proc


def gradebook(path: Path) -> dict[str, dict]:
    text = path.read_bytes().decode("utf-8-sig")
    return {r["student"]: r for r in csv.DictReader(io.StringIO(text))}


def test_every_student_folder_is_a_row(klass):
    k, out, proc = klass
    # some students could not be graded (a class where all were, low scores or not, exits 0: test_reports.py's)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    book = gradebook(out / "grades.csv")
    assert set(book) == GRADED | NOT_GRADED
    for name in ("alice", "carol", "dave", "erin", "frank"):
        assert book[name][EXERCISE] == "1", (name, book[name])
    assert book["bob"][EXERCISE] == "0" and book["mallory"][EXERCISE] == "0"
    for name in NOT_GRADED:
        assert book[name]["points"] == "0" and book[name]["note"], book[name]
    assert "notebooks only" in book["gina"]["note"] and "empty" in book["hank"]["note"]
    assert "could not unpack ivan.zip" in book["ivan"]["note"]
    assert "UTF-8" in book["olga"]["note"]
    lines = proc.stdout.splitlines()
    first_graded = next(i for i, line in enumerate(lines) if line.startswith("[1/"))
    assert all(any(line.startswith(f"Not graded: {n}") for line in lines[:first_graded]) for n in NOT_GRADED)
    summary_at = proc.stdout.index("Class summary (")
    assert proc.stdout.rindex("Not graded (4)") < summary_at  # listed first in the summary
    assert "submission/exercises/" in proc.stdout and "loose files" in proc.stdout and "erin.zip" in proc.stdout


def test_learner_text_cannot_forge_the_teachers_screen(klass):
    k, out, proc = klass
    assert "\x1b" not in proc.stdout and "\r" not in proc.stdout
    assert "\\x1b[2K\\r6/6 passed" in (out / "feedback" / "mallory.md").read_text(encoding="utf-8")
    for path in [*(out / "feedback").iterdir(), out / "class.json", out / "grades-summary.md",
                 *(out / "gradescope").iterdir(), *(out / "classroom").iterdir(), *(out / "junit").iterdir()]:
        text = path.read_text(encoding="utf-8")
        assert "\x1b" not in text and "\\u001b" not in text, path


def test_escape_keeps_text_and_shows_controls():
    assert learner_text.escape("ok\n\tline") == "ok\n\tline"
    assert learner_text.escape(FORGERY) == "\\x1b[2K\\r6/6 passed, 20/20"
    assert learner_text.escape("a\u202eb") == "a\\u202eb"
    from grading import i18n

    marked = i18n._("Importing {file} failed:\n{traceback}", file=FILE, traceback=i18n.verbatim(FORGERY))
    for lang in ("en", "zh"):  # inside a message's arguments too, whatever the language it is shown in
        shown = i18n.render(learner_text.escape(marked), lang)
        assert "\x1b" not in shown and "\r" not in shown and "\\x1b[2K\\r6/6" in shown, shown


def test_feedback_names_the_exercise_file_never_a_scratch_path(klass):
    k, out, proc = klass
    mallory = (out / "feedback" / "mallory.md").read_text(encoding="utf-8")
    assert f'File "exercises/{FILE}", line' in mallory, mallory
    olga = (out / "feedback" / "olga.md").read_text(encoding="utf-8")
    assert "Save the file as UTF-8" in olga and "/tmp" not in olga, olga
    r = ExerciseResult("01", "x", "error", [CaseResult("c", False, 0.0, f'File "/tmp/abc/{FILE}", line 3')])
    assert learner_text.tidy(r).cases[0].message == f'File "exercises/{FILE}", line 3'


def test_report_flags_with_a_class_write_one_file_per_student(klass):
    k, out, proc = klass
    everyone = GRADED | NOT_GRADED
    for folder, ext in (("junit", "xml"), ("gradescope", "json"), ("classroom", "json"), ("feedback", "md")):
        assert {p.stem for p in (out / folder).glob(f"*.{ext}")} == everyone, folder
    ivan = json.loads((out / "gradescope" / "ivan.json").read_text(encoding="utf-8"))
    assert ivan["score"] == 0 and "could not unpack" in ivan["output"]
    assert json.loads((out / "classroom" / "bob.json").read_text())["status"] == "fail"
    assert set(json.loads((out / "class.json").read_text())["students"]) == everyone
    canvas = (out / "canvas.csv").read_bytes()
    assert canvas.startswith(b"\xef\xbb\xbf") and (out / "grades.csv").read_bytes().startswith(b"\xef\xbb\xbf")
    assert {r[0] for r in csv.reader(io.StringIO(canvas.decode("utf-8-sig")))} >= everyone


def test_report_flags_with_one_folder(klass, tmp_path):
    k, out, _proc = klass
    args = ["--gradebook", "g.csv", "--json", "r.json", "--feedback", "fb", "--lms-csv", "m.csv", "--lms", "moodle",
            "--junit", "j.xml", "--gradescope", "gs.json", "--classroom", "c.json"]
    proc = run_judge(EXERCISE, "--source", str(k / "bob" / "Exercises"),
                     *[str(tmp_path / a) if i % 2 and a != "moodle" else a for i, a in enumerate(args)])
    assert proc.returncode == 1, proc.stdout + proc.stderr  # bob's answer is wrong
    assert gradebook(tmp_path / "g.csv")["bob"][EXERCISE] == "0"
    assert (tmp_path / "fb" / "bob.md").is_file() and (tmp_path / "fb" / "bob.html").is_file()
    assert list(csv.reader((tmp_path / "m.csv").open()))[1][0] == "bob"
    for name in ("r.json", "j.xml", "gs.json", "c.json"):
        assert (tmp_path / name).stat().st_size > 0, name


@pytest.mark.parametrize("args, says", [
    (["list", "--json", "x.json"], "--json does nothing with 'list'"),
    (["--class", "k", "--source", "x"], "--source belongs to one folder"),
    (["--class", "k", "--solutions"], "--solutions belongs to one folder"),
    (["--trusted-class"], "--trusted-class belongs to --class DIR"),
    (["--update"], "--update belongs to --class DIR"),
    (["--lms", "moodle"], "give --lms-csv too"),
    (["--excel"], "--excel changes the CSV files"),
    (["doctor", "--memory-mb", "100"], "--memory-mb does nothing with 'doctor'"),
    (["hint", "lookup", "--workers", "2"], "--workers does nothing with 'hint'"),
    (["01", "02"], "02 would be left out: python judge.py grades one chapter or one exercise"),
    (["01", "-q", "02"], "unrecognized arguments: 02"),  # a word after a flag: argparse refuses it
    (["doctor", "01"], "01 would be left out: python judge.py doctor takes nothing more"),
    (["hint", "lookup", "softmax"], "softmax would be left out"),
    (["--memory-mb", "-5", "01"], "at least 64"),  # a negative limit would have been no limit at all
    (["--memory-mb", "5", "01"], "expected megabytes"),
])
def test_a_flag_is_refused_where_it_does_nothing(args, says):
    proc = run_judge(*args)
    assert proc.returncode == 2 and says in proc.stderr, proc.stderr


def test_a_report_path_that_cannot_be_written_is_refused_before_grading(tmp_path):
    """A folder given for a file, a file for a folder: told at once (exit 2), not as a traceback after the class."""
    a_file, a_folder = tmp_path / "notes.txt", tmp_path / "out"
    a_file.write_text("x")
    a_folder.mkdir()
    cases = [(["00", "--json", str(a_folder)], f"--json {a_folder} is a folder, and it needs a file name"),
             (["00", "--feedback", str(a_file)], f"--feedback {a_file} is a file, and it needs a folder"),
             (["00", "--junit", str(a_folder)], "--junit"),  # one folder: one file
             (["--class", str(tmp_path), "00", "--junit", str(a_file)], "--junit"),  # a class: a folder of files
             (["--class", str(tmp_path), "00", "--gradebook", str(a_folder)], "--gradebook"),
             (["00", "--gradebook", str(tmp_path / "g.csv"), "--json", str(tmp_path / "g-summary.md")],
              f"--gradebook and --json would both write {tmp_path / 'g-summary.md'}"),
             (["--class", str(tmp_path), "00", "--json", "gradebook.csv"], "would both write")]  # the default
    for args, says in cases:
        proc = run_judge(*args)
        assert proc.returncode == 2 and says in proc.stderr, (args, proc.stderr)
    package = run_judge("gradescope-package", str(a_folder))
    assert package.returncode == 2 and f"for example python judge.py gradescope-package {a_folder / 'autograder.zip'}" \
        in package.stdout, package.stdout + package.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "out"]  # nothing written, nothing graded


def test_a_whole_class_archive_gets_how_to_unpack_it(tmp_path):
    archive = tmp_path / "class.zip"
    _zip(archive, {"alice/ch00_pipeline.py": b"QUIZ = {}\n"})
    proc = run_judge("--class", str(archive), "00")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"python -m zipfile -e {archive} {tmp_path / 'class'}, then --class {tmp_path / 'class'}" in proc.stdout
    assert run_judge("--class", str(tmp_path / "nope"), "00").stdout.startswith("No class folder")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0 or not shutil.which("setpriv"),
                    reason="a folder a user cannot write: as root, through setpriv")
def test_a_report_in_a_folder_the_teacher_cannot_write_is_refused_before_grading():
    base = Path(tempfile.mkdtemp(prefix="judge-locked-", dir="/tmp"))  # pytest's own tmp is root's alone
    try:
        base.chmod(0o755)
        locked, hidden = base / "locked", base / "hidden"
        locked.mkdir(mode=0o755)  # root's: another user can look in, not write
        hidden.mkdir(mode=0o700)  # nor even look in
        for target, blocked in ((locked / "r.json", locked), (locked / "new" / "r.json", locked),
                                (hidden / "r.json", hidden / "r.json")):
            done = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable,
                                   str(REPO / "judge.py"), "00", "--json", str(target)], cwd=base, capture_output=True,
                                  text=True, timeout=120, env={**os.environ, "HF_HUB_OFFLINE": "1"})
            assert done.returncode == 2 and f"you cannot write to {blocked}." in done.stderr, done.stderr
    finally:
        shutil.rmtree(base)


def test_without_an_os_sandbox_a_class_is_refused_and_regrading_one_student_changes_only_that_row(klass, tmp_path):
    k, out, _proc = klass
    refused = run_judge("--class", str(k), EXERCISE, "--gradebook", str(tmp_path / "x.csv"),
                        env={"GRADING_SANDBOX": "none"})
    assert refused.returncode == 2 and "--trusted-class" in refused.stdout and "WSL2" in refused.stdout
    assert not (tmp_path / "x.csv").exists()

    work = tmp_path / "out"
    shutil.copytree(out, work)
    before = gradebook(work / "grades.csv")
    fb_before = {p.name: p.read_bytes() for p in (work / "feedback").iterdir()}
    fixed = tmp_path / "class"
    shutil.copytree(k, fixed)
    (fixed / "bob" / "Exercises" / FILE).write_text(SOLUTION, encoding="utf-8")
    (fixed / "alice" / "exercises" / FILE).write_text(WRONG, encoding="utf-8")  # not re-graded: must not change
    proc = run_judge("--class", str(fixed), EXERCISE, "--student", "bob", "--trusted-class", "--gradebook",
                     str(work / "grades.csv"), "--feedback", str(work / "feedback"), env={"GRADING_SANDBOX": "none"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    after = gradebook(work / "grades.csv")
    assert set(after) == set(before)
    assert after["bob"][EXERCISE] == "1" and "trusted class" in after["bob"]["isolation"]
    assert "trusted class" in (work / "grades-summary.md").read_text(encoding="utf-8")
    assert "trusted class" in (work / "feedback" / "bob.md").read_text(encoding="utf-8")
    assert {n: r for n, r in after.items() if n != "bob"} == {n: r for n, r in before.items() if n != "bob"}
    changed = {p.name for p in (work / "feedback").iterdir() if p.read_bytes() != fb_before.get(p.name)}
    assert changed == {"bob.md", "bob.html"}


def test_archives_are_unpacked_safely(tmp_path):
    evil = tmp_path / "evil.zip"
    _zip(evil, {"../outside.py": b"x = 1"})
    with pytest.raises(submissions.ArchiveError):
        submissions.unpack(evil, tmp_path / "scratch")
    assert not (tmp_path / "outside.py").exists()
    linked = tmp_path / "linked.tar.gz"
    with tarfile.open(linked, "w:gz") as tf:
        info = tarfile.TarInfo(FILE)
        info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tf.addfile(info)
    with pytest.raises(submissions.ArchiveError):
        submissions.unpack(linked, tmp_path / "scratch2")
    big = tmp_path / "big.zip"
    _zip(big, {f"f{i}.py": b"" for i in range(submissions.MAX_MEMBERS + 1)})
    with pytest.raises(submissions.ArchiveError):
        submissions.unpack(big, tmp_path / "scratch3")


MEASURE = """<script>
window.addEventListener('load', () => {
  const imgs = [...document.images].map(i => [i.id, i.complete, i.naturalWidth, i.naturalHeight]);
  document.body.setAttribute('data-measured', JSON.stringify(imgs));
});
</script>"""


def test_the_class_summary_page_renders_with_its_plots(klass, tmp_path):
    import html
    import re

    k, out, proc = klass
    page = (out / "grades-summary.html").read_text(encoding="utf-8")
    assert "grades-summary.html" in proc.stdout
    hardest = page.index("Pass rate per exercise, hardest first")
    assert page.index("Not graded (4)") < hardest and "could not unpack ivan.zip" in page
    lost = page[page.index("lost a whole chapter"):]
    assert "<b>pat</b>: chapter 01: SyntaxError at import" in lost and "mallory" not in lost.split("</ul>")[0]
    assert "\x1b" not in page
    assert "Learner code runs in: bubblewrap" in page or "trusted class" in page  # which wall it ran behind
    copy = tmp_path / "page.html"
    copy.write_text(page.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    args = [require_browser(), *launch_args(), "--headless", "--disable-gpu", "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", copy.as_uri()]
    dom = subprocess.run(args, capture_output=True, text=True, timeout=120).stdout
    found = re.search(r'data-measured="([^"]*)"', dom)
    assert found, f"Chromium did not run the measuring script; its output began: {dom[:300]!r}"
    images = {i: (done, w, h) for i, done, w, h in json.loads(html.unescape(found.group(1)))}
    assert set(images) == {"pass-rate", "points"}
    assert all(done and w > 100 and h > 50 for done, w, h in images.values()), images  # decoded, not broken


def test_the_summary_page_speaks_the_teachers_language(klass):
    from grading import class_run
    from grading.reports import summary, summary_page

    _k, out, _proc = klass
    rows, subs = class_run.load_state(out / "grades-results.json")
    ungraded = {n: s.reason for n, s in subs.items() if s.reason}
    page = summary_page.to_html(summary.summarize(rows), rows, ungraded, "zh")
    assert '<html lang="zh">' in page and "Pass rate per exercise" not in page
    assert "未评分（4）" in page


def test_lang_reaches_the_gradescope_package(tmp_path):
    proc = run_judge("--lang", "zh", "gradescope-package", str(tmp_path / "a.zip"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with zipfile.ZipFile(tmp_path / "a.zip") as zf:
        assert "GRADING_LANG=zh" in zf.read("run_autograder").decode()


def test_regrading_one_chapter_keeps_the_other_chapters():
    from grading import class_run

    def r(chapter, name, status):
        return ExerciseResult(chapter, name, status, [CaseResult("c", status == "passed")])

    old = {"alice": [r("01", "lookup", "wrong answer"), r("02", "logits", "passed")], "bob": [r("01", "lookup", "passed")]}
    new = {"alice": [r("01", "lookup", "passed")], "carol": []}
    merged = class_run.merge(old, new, "01")
    assert [(x.chapter, x.status) for x in merged["alice"]] == [("01", "passed"), ("02", "passed")]
    assert merged["bob"] == old["bob"] and merged["carol"] == []
    assert class_run.merge(old, new, None)["alice"] == new["alice"]  # a whole re-grade replaces everything


def test_find_submissions_reports_every_entry(tmp_path):
    k = make_class(tmp_path)
    _zip(k / "alice.zip", {f"exercises/{FILE}": b"x = 1"})  # beside alice/: noted, never silently dropped
    found = {s.student: s for s in submissions.find_submissions(k, tmp_path / "scratch")}
    assert set(found) == GRADED | NOT_GRADED
    assert found["alice"].layout == "exercises/" and any("alice.zip" in n for n in found["alice"].notes)
    assert found["bob"].layout == "Exercises/" and found["carol"].layout == "submission/exercises/"
    assert found["dave"].layout == "loose files" and found["erin"].layout == "erin.zip: course-main/exercises/"
    assert found["frank"].layout == "work.tar.gz: loose files"
    assert all(not found[n].graded and found[n].reason for n in NOT_GRADED)
