"""Find each student's exercise files in a class folder, in the layouts students really hand in.

    class/alice/exercises/ch01_embeddings.py          the course's own layout
    class/bob/Exercises/...                           any capitalisation
    class/carol/submission/exercises/...              one folder deeper (a repository copy, a zip's top folder)
    class/dave/ch01_embeddings.py                     loose files
    class/erin/erin.zip   or   class/erin.tar.gz      one archive per student, unpacked into a scratch folder
    class/frank/01_embeddings.ipynb                   notebooks only: reported, not graded (the graded functions
                                                      live in exercises/chNN_*.py)

Every entry of the class folder becomes a Submission: graded from `folder`, or not graded with `reason` (the
student still gets a row with 0 points). Archives are unpacked safely: no absolute or `..` paths, no links or
devices, at most MAX_MEMBERS members and MAX_BYTES unpacked, and only .py and .ipynb files are written.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import tarfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from .i18n import _, verbatim
from .reports.learner_text import utf8_advice

EXERCISE_FILE = re.compile(r"ch\d\d_\w+\.py")
ARCHIVES = (".zip", ".tar.gz", ".tgz")
MAX_MEMBERS = 2000
MAX_BYTES = 50 << 20  # unpacked, per archive
KEPT_SUFFIXES = (".py", ".ipynb")
IGNORED_DIRS = {"solutions", "__macosx", ".git", ".ipynb_checkpoints", "__pycache__"}


@dataclass
class Submission:
    """One student: where their exercise files are (`folder`), or why none were graded (`reason`)."""

    student: str
    folder: Path | None = None
    layout: str = ""  # how it was found, e.g. "exercises/", "submission/exercises/", "loose files", "alice.zip"
    reason: str = ""  # a marked message (grading/i18n.py) when folder is None
    notes: list[str] = field(default_factory=list)  # e.g. a file that is not UTF-8

    @property
    def graded(self) -> bool:
        return self.folder is not None


class ArchiveError(Exception):
    """An archive that cannot be unpacked safely."""


def _exercise_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file() and not p.is_symlink() and EXERCISE_FILE.fullmatch(p.name))


def folder_digest(folder: Path) -> str:
    """Who a grading request's code belongs to (a spawn worker keeps a spare for its owner's next request): the
    folder and each of its chapter files, byte for byte; another folder, or one edited file, is someone else."""
    h = hashlib.sha256(str(Path(folder).resolve()).encode() + b"\0")
    try:
        for p in _exercise_files(Path(folder)):
            data = p.read_bytes()
            h.update(p.name.encode() + b"\0" + len(data).to_bytes(8, "big") + data)
    except OSError:  # a folder or file that cannot be read: this request's own, kept for nobody
        h.update(os.urandom(16))
    return h.hexdigest()[:32]


def _dirs(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir()
                  if p.is_dir() and not p.is_symlink() and p.name.lower() not in IGNORED_DIRS
                  and not p.name.startswith("."))


def _archive_name(p: Path) -> bool:
    return p.is_file() and not p.is_symlink() and p.name.lower().endswith(ARCHIVES)


def _stem(p: Path) -> str:
    name = p.name
    for suffix in ARCHIVES:
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return name


def class_folder_problem(folder: Path) -> str:
    """Why `folder` cannot be graded as a class folder (--class), with the fix, or ''."""
    if folder.is_dir():
        return ""
    if _archive_name(folder):  # a whole class downloaded as one archive (Moodle, Canvas)
        dest = folder.with_name(_stem(folder))
        tool = "zipfile" if folder.name.lower().endswith(".zip") else "tarfile"
        return _("{folder} is one archive for the whole class: unpack it, then grade the folder: python -m {tool} -e "
                 "{folder} {dest}, then --class {dest}", folder=verbatim(folder), tool=tool, dest=verbatim(dest))
    return _("No class folder {folder}: give the folder that holds one folder (or archive) per student.",
             folder=str(folder))


def locate(root: Path) -> tuple[Path | None, str]:
    """(the folder holding the exercise files, its layout) in `root`: an exercises folder (any case) at depth one
    or two first, then loose chNN_*.py files in `root`; (None, "") when there is none."""
    level1 = _dirs(root)
    for candidates in (level1, [d for top in level1 for d in _dirs(top)]):
        found = [d for d in candidates if d.name.lower() == "exercises" and _exercise_files(d)]
        if found:
            best = max(found, key=lambda d: len(_exercise_files(d)))
            return best, best.relative_to(root).as_posix() + "/"
    if _exercise_files(root):
        return root, "loose files"
    return None, ""


def _safe_name(name: str) -> PurePosixPath | None:
    """The member's path inside the scratch folder, or None for a directory entry; ArchiveError if it escapes."""
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or re.match(r"^[A-Za-z]:", name):
        raise ArchiveError(_("it holds a path outside its own folder: {name}", name=verbatim(name)))
    return path if path.parts else None


def _check_totals(count: int, size: int) -> None:
    if count > MAX_MEMBERS:
        raise ArchiveError(_("it has more than {n} files", n=MAX_MEMBERS))
    if size > MAX_BYTES:
        raise ArchiveError(_("it unpacks to more than {mb} MB", mb=MAX_BYTES >> 20))


def unpack(archive: Path, dest: Path) -> None:
    """Unpack the .py and .ipynb files of `archive` into `dest` (ArchiveError when it is broken or unsafe)."""
    dest.mkdir(parents=True, exist_ok=True)
    try:
        if archive.name.lower().endswith(".zip"):
            with zipfile.ZipFile(archive) as zf:
                infos = zf.infolist()
                _check_totals(len(infos), sum(i.file_size for i in infos))
                for info in infos:
                    rel = _safe_name(info.filename)
                    mode = info.external_attr >> 16
                    if stat.S_ISLNK(mode):
                        raise ArchiveError(_("it holds a link: {name}", name=verbatim(info.filename)))
                    if rel is None or info.is_dir() or not rel.name.endswith(KEPT_SUFFIXES):
                        continue
                    _write(dest, rel, zf.read(info))
        else:
            with tarfile.open(archive, "r:gz") as tf:
                members = tf.getmembers()
                _check_totals(len(members), sum(m.size for m in members if m.isfile()))
                for m in members:
                    rel = _safe_name(m.name)
                    if m.issym() or m.islnk():
                        raise ArchiveError(_("it holds a link: {name}", name=verbatim(m.name)))
                    if not (m.isfile() or m.isdir()):
                        raise ArchiveError(_("it holds a device or special file: {name}", name=verbatim(m.name)))
                    if rel is None or not m.isfile() or not rel.name.endswith(KEPT_SUFFIXES):
                        continue
                    _write(dest, rel, tf.extractfile(m).read())
    except ArchiveError:
        raise
    except (zipfile.BadZipFile, tarfile.TarError, OSError, EOFError, ValueError) as exc:
        raise ArchiveError(verbatim(f"{type(exc).__name__}: {exc}")) from None


def _write(dest: Path, rel: PurePosixPath, data: bytes) -> None:
    path = dest.joinpath(*rel.parts)
    if not path.resolve().is_relative_to(dest.resolve()):
        raise ArchiveError(_("it holds a path outside its own folder: {name}", name=verbatim(str(rel))))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _notebooks(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def _why_nothing(root: Path) -> str:
    """Why `root` (a student's folder or unpacked archive) has nothing to grade."""
    if not any(root.iterdir()):
        return _("no submission found: the folder is empty")
    notebooks = _notebooks(root)
    if notebooks:
        return _("notebooks only ({files}): the graded functions are in exercises/chNN_*.py; ask for the exercises "
                 "folder (the judge never grades a notebook)",
                 files=verbatim(", ".join(p.relative_to(root).as_posix() for p in notebooks[:3])))
    seen = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())[:5]
    return _("no submission found: no exercises folder and no chNN_*.py file (found: {files})",
             files=verbatim(", ".join(seen) or "-"))


def _encoding_notes(folder: Path) -> list[str]:
    notes = []
    for p in _exercise_files(folder):
        try:
            p.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            notes.append(_("exercises/{file} is not saved as UTF-8, so Python cannot import it in a notebook.",
                           file=p.name) + " " + utf8_advice())
    return notes


def _from_root(student: str, root: Path, via: str = "") -> Submission:
    folder, layout = locate(root)
    if folder is None:
        return Submission(student, reason=_why_nothing(root), layout=via)
    return Submission(student, folder, f"{via}: {layout}" if via else layout, notes=_encoding_notes(folder))


def find_submissions(class_dir: Path, scratch: Path) -> list[Submission]:
    """One Submission per entry of `class_dir` (a folder, or an archive named after the student), sorted by name;
    archives are unpacked into `scratch/<student>/`."""
    out: dict[str, Submission] = {}
    for entry in sorted(class_dir.iterdir()):
        if entry.name.startswith(".") or entry.is_symlink():
            continue
        if entry.is_dir():
            out[entry.name] = _student_folder(entry, scratch / entry.name)
        elif _archive_name(entry):
            student = _stem(entry)
            if student not in out:
                out[student] = _archive(student, entry, scratch / student)
            else:  # sorted: the folder came first and is the one graded
                out[student].notes.append(_("{archive} beside the folder {student}/ was not graded (the folder was)",
                                            archive=verbatim(entry.name), student=verbatim(student)))
    return [out[k] for k in sorted(out)]


def _student_folder(folder: Path, scratch: Path) -> Submission:
    found, layout = locate(folder)
    if found is not None:
        return Submission(folder.name, found, layout, notes=_encoding_notes(found))
    archives = [p for p in folder.iterdir() if _archive_name(p)]
    if len(archives) > 1:
        return Submission(folder.name, reason=_("{n} archives ({files}): hand in one .zip or .tar.gz", n=len(archives),
                                                files=verbatim(", ".join(p.name for p in archives))))
    if archives:
        return _archive(folder.name, archives[0], scratch)
    return Submission(folder.name, reason=_why_nothing(folder))


def _archive(student: str, archive: Path, scratch: Path) -> Submission:
    if scratch.exists():
        shutil.rmtree(scratch)
    try:
        unpack(archive, scratch)
    except ArchiveError as exc:
        shutil.rmtree(scratch, ignore_errors=True)
        return Submission(student, layout=archive.name,
                          reason=_("could not unpack {archive}: {error}", archive=verbatim(archive.name),
                                   error=str(exc)))
    return _from_root(student, scratch, archive.name)
