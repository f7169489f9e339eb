"""The judge's message catalogs (grading/i18n.py), kept with Babel: one domain per chapter's checks module
(grading/checks/chNN_*), `judge` for the rest of grading/ and judge.py, and `course` for course.py, lesson_utils/
(translated at once by lesson_utils/edition.py, with the standard library's gettext) and COURSE_IN_GRADING, and
`outputs` for what the notebooks' code cells print and draw (lesson_utils/output_text.py): its msgids are the
lines and table cells of the English notebooks' saved outputs and the words of their figures, numbers taken out as
{0}, {1}, ...; a line that stays as it is in Chinese (code, a token, data) is translated as itself.

    python -m tools.messages extract    list every domain's messages found in the sources
    python -m tools.messages update     merge them into grading/locale/<lang>/LC_MESSAGES/<domain>.po (new ones
                                        empty, removed ones dropped), then translate the empty entries
    python -m tools.messages compile    write each .po's .mo (committed with it)
    python -m tools.messages check      what is missing: untranslated, fuzzy or obsolete entries, placeholders
                                        that differ, a stale .mo (exit 1 on any; tests/test_i18n.py runs it)

After editing a message in the sources: update, translate, compile, commit the .po and .mo together.
"""
from __future__ import annotations

import io
import json
import string
import sys
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_file
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

from lesson_utils import output_text
from lesson_utils.edition import course_notebooks
from lesson_utils.figure_text import KEY as FIGURE_TEXT

REPO = Path(__file__).resolve().parent.parent
GRADING = REPO / "grading"
LOCALE = GRADING / "locale"
TRANSLATED = ("zh",)  # English is the msgids themselves
KEYWORDS = {"_": None, "N_": None}  # _(msgid, **kwargs) and N_(msgid): the first argument is the message
JUDGE = "judge"
COURSE = "course"
COURSE_IN_GRADING = ("contracts.py", "usage.py")  # grading/ modules whose messages are in `course`, not `judge`
OUTPUTS = "outputs"


def _chapter_domain(path: Path) -> str | None:
    """The chapter domain a source file belongs to (grading/checks/chNN_*), else None."""
    rel = path.relative_to(GRADING).parts
    if len(rel) >= 2 and rel[0] == "checks" and rel[1][:2] == "ch" and rel[1][2:4].isdigit():
        return rel[1].removesuffix(".py")
    return None


def sources() -> dict[str, list[Path]]:
    """Domain -> its Python source files."""
    out: dict[str, list[Path]] = {JUDGE: [REPO / "judge.py"]}
    course = [GRADING / name for name in COURSE_IN_GRADING]
    for path in sorted(GRADING.rglob("*.py")):
        if path not in course:
            out.setdefault(_chapter_domain(path) or JUDGE, []).append(path)
    out[COURSE] = [REPO / "course.py", *sorted((REPO / "lesson_utils").rglob("*.py")), *course]
    out[OUTPUTS] = course_notebooks(REPO / "notebooks")
    return out


def notebook_messages(notebooks: list[Path]) -> Catalog:
    """The `outputs` msgids: what the English notebooks' code cells print to stdout, line by line or, in a
    print_table table, cell by cell (the quiz cells print through `course` already), and the words of their
    figures; each with every notebook and cell that prints it, so a translator sees all its uses."""
    cat = Catalog(domain=OUTPUTS, project="llm-course judge", fuzzy=False)
    for path in notebooks:
        where = (f"notebooks/{path.name}", 0)
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] != "code" or "show_quiz(" in "".join(cell["source"]):
                continue
            for out in cell.get("outputs", []):
                msgids = out.get("metadata", {}).get(FIGURE_TEXT, [])  # a figure's words (lesson_utils/kernel_hooks.py)
                if out.get("output_type") == "stream" and out.get("name") == "stdout":
                    msgids = output_text.catalog_entries("".join(out["text"]))
                for msgid in msgids:
                    if msgid not in cat:
                        cat.add(msgid, locations=[where], auto_comments=[cell["id"]])
                        continue
                    seen = cat[msgid]  # every use is listed: one msgid is one translation, whatever it means there
                    if where not in seen.locations:
                        seen.locations.append(where)
                    if cell["id"] not in seen.auto_comments:
                        seen.auto_comments.append(cell["id"])
    return cat


def extract(domain: str, files: list[Path]) -> Catalog:
    """The messages marked with _() or N_() in `files` (for `outputs`: printed by the notebooks `files`), as a
    Babel template catalog."""
    if domain == OUTPUTS:
        return notebook_messages(files)
    cat = Catalog(domain=domain, project="llm-course judge", fuzzy=False)
    for path in files:
        for lineno, msgid, comments, context in extract_from_file("python", str(path), keywords=KEYWORDS):
            if isinstance(msgid, tuple):
                msgid = msgid[0]
            if msgid:
                cat.add(msgid, locations=[(str(path.relative_to(REPO)), lineno)], auto_comments=comments,
                        context=context)
    return cat


def po_path(lang: str, domain: str) -> Path:
    return LOCALE / lang / "LC_MESSAGES" / f"{domain}.po"


def read(path: Path, lang: str) -> Catalog:
    with path.open("rb") as f:
        return read_po(f, locale=lang)


def write(cat: Catalog, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        write_po(f, cat, width=120, omit_header=False, sort_output=False, ignore_obsolete=True)


def compiled(cat: Catalog) -> bytes:
    buf = io.BytesIO()
    write_mo(buf, cat, use_fuzzy=False)
    return buf.getvalue()


def update(domains: dict[str, list[Path]] | None = None) -> list[Path]:
    """Merge the sources' messages into every language's .po (created when missing); the paths written."""
    written = []
    for domain, files in (domains or sources()).items():
        template = extract(domain, files)
        for lang in TRANSLATED:
            path = po_path(lang, domain)
            if not path.exists() and not len(template):
                continue  # a domain with nothing marked yet gets no empty catalog
            if path.exists():
                cat = read(path, lang)
                cat.update(template, no_fuzzy_matching=True)
                cat.obsolete.clear()
            else:
                cat = Catalog(locale=lang, domain=domain, project="llm-course judge", fuzzy=False)
                cat.update(template, no_fuzzy_matching=True)
            write(cat, path)
            written.append(path)
    return written


def compile_all(root: Path = LOCALE) -> list[Path]:
    """Write the .mo of every .po under `root`; the paths written."""
    written = []
    for path in sorted(root.glob("*/LC_MESSAGES/*.po")):
        mo = path.with_suffix(".mo")
        mo.write_bytes(compiled(read(path, path.parent.parent.name)))
        written.append(mo)
    return written


def placeholders(text: str) -> set[str]:
    """The `str.format` fields of a message ({name}, {n:.1f} -> name, n)."""
    try:
        return {f for _lit, f, _spec, _conv in string.Formatter().parse(text) if f is not None}
    except ValueError:
        return {"<unbalanced braces>"}


def check(domains: dict[str, list[Path]] | None = None, root: Path = LOCALE,
          only_existing: bool = False) -> list[str]:
    """Every problem of the catalogs under `root` against the sources; [] when they are complete and compiled.
    only_existing: skip a domain that has no catalog at all yet (one being written elsewhere)."""
    problems = []
    for domain, files in (domains or sources()).items():
        wanted = {m.id for m in extract(domain, files) if m.id}
        for lang in TRANSLATED:
            path = root / lang / "LC_MESSAGES" / f"{domain}.po"
            if not path.exists():
                if not only_existing and wanted:
                    problems.append(f"{path.relative_to(root.parent)}: missing ({len(wanted)} messages)")
                continue
            cat = read(path, lang)
            have = {m.id: m for m in cat if m.id}
            problems += [f"{domain} ({lang}): not in the catalog: {m!r}" for m in sorted(wanted - set(have))]
            problems += [f"{domain} ({lang}): obsolete (no longer in the sources): {m!r}"
                         for m in sorted(set(have) - wanted)]
            for msgid, m in have.items():
                if msgid not in wanted:
                    continue
                if not m.string or m.fuzzy:
                    problems.append(f"{domain} ({lang}): {'fuzzy' if m.fuzzy else 'untranslated'}: {msgid!r}")
                elif placeholders(msgid) != placeholders(m.string):
                    problems.append(f"{domain} ({lang}): placeholders differ: {msgid!r} -> {m.string!r}")
            mo = path.with_suffix(".mo")
            if not mo.exists() or mo.read_bytes() != compiled(cat):
                problems.append(f"{mo.relative_to(root.parent)}: stale or missing: run python -m tools.messages compile")
    return problems


def main(argv: list[str]) -> int:
    command = argv[0] if argv else ""
    if command == "extract":
        for domain, files in sources().items():
            print(f"{domain}: {len(extract(domain, files))} messages")
        return 0
    if command == "update":
        print("\n".join(f"wrote {p.relative_to(REPO)}" for p in update()))
        return 0
    if command == "compile":
        print("\n".join(f"wrote {p.relative_to(REPO)}" for p in compile_all()))
        return 0
    if command == "check":
        problems = check()
        print("\n".join(problems) or "Every message has a translation and every .mo is up to date.")
        return 1 if problems else 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    sys.exit(main(sys.argv[1:]))
