"""Generate the learners' stubs (exercises/) from the reference solutions (solutions/), the one source.

    python -m tools.stubs write [CHAPTER ...]    write exercises/chNN_*.py from solutions/chNN_*.py
    python -m tools.stubs check [CHAPTER ...]    exit 1 if a committed stub differs from the generated one

A solution file is its stub plus the answer, marked with comments (Python ignores them, so the solution runs as is):

    # BEGIN SOLUTION           the lines up to `# END SOLUTION` are the answer: the stub gets one line
    ...                        `raise NotImplementedError` instead, indented like the BEGIN marker
    # END SOLUTION
    # BEGIN SOLUTION NO PROMPT the lines up to `# END SOLUTION` are left out of the stub (helpers, blank lines)
    code  # SOLUTION           a line ending so is left out of the stub (an import or decorator the answer needs,
                               the QUIZ with its answers)
    # PROMPT: text             the stub gets `text` (same indentation); the solution ignores it (the blank QUIZ)

Everything else (module docstring, imports, the contract docstrings, comments, constants) is copied byte for byte.
A generated stub must parse and its every function and method must be only a docstring and
`raise NotImplementedError`: anything else is a forgotten marker that would hand an answer out.
"""
from __future__ import annotations

import argparse
import ast
import difflib
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SOLUTIONS, EXERCISES = REPO / "solutions", REPO / "exercises"
BEGIN, BEGIN_DROP, END = "# BEGIN SOLUTION", "# BEGIN SOLUTION NO PROMPT", "# END SOLUTION"
LINE_MARK, PROMPT = "  # SOLUTION", "# PROMPT: "
STUB_BODY = "raise NotImplementedError"


class StubError(Exception):
    """A solution file's markers cannot be turned into a stub (the message names the file and line)."""


def generate(solution: str, name: str = "<solution>") -> str:
    """The stub made from a solution file's text (see the module docstring for the markers)."""
    out: list[str] = []
    block: int | None = None  # the line of the open BEGIN marker
    for number, line in enumerate(solution.splitlines(keepends=True), start=1):
        text = line.strip()
        indent = line[:len(line) - len(line.lstrip())]
        newline = line[len(line.rstrip("\r\n")):]
        if text in (BEGIN, BEGIN_DROP):
            if block:
                raise StubError(f"{name}:{number}: {text} inside the block opened at line {block}; "
                                f"close that one with {END!r} first")
            block = number
            if text == BEGIN:
                out.append(f"{indent}{STUB_BODY}{newline}")
        elif text == END:
            if not block:
                raise StubError(f"{name}:{number}: {END} without a {BEGIN!r} before it")
            block = None
        elif block:
            continue
        elif text.startswith(PROMPT.strip()):
            if not line.lstrip().startswith(PROMPT):
                raise StubError(f"{name}:{number}: write a prompt line as '{PROMPT}text' (one space after the colon)")
            out.append(indent + line.lstrip()[len(PROMPT):])
        elif line.rstrip("\r\n").endswith(LINE_MARK):
            continue
        elif "SOLUTION" in line and re.search(r"#\s*(BEGIN|END)?\s*SOLUTION", line):
            raise StubError(f"{name}:{number}: a marker the generator does not know: {text!r} (markers: "
                            f"{BEGIN!r}, {BEGIN_DROP!r}, {END!r}, a line ending with {LINE_MARK.strip()!r}, "
                            f"'{PROMPT}...')")
        else:
            out.append(line)
    if block:
        raise StubError(f"{name}:{block}: the block opened here has no {END!r}")
    stub = "".join(out)
    _check_stub(stub, name)
    return stub


def _check_stub(stub: str, name: str) -> None:
    """Refuse a stub that does not parse or whose functions still hold code."""
    try:
        tree = ast.parse(stub)
    except SyntaxError as exc:
        raise StubError(f"{name}: the generated stub does not parse ({exc.msg}, its line {exc.lineno}): "
                        "check the markers around that place") from None
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    for outside in (s for body in [tree.body] + [c.body for c in classes] for s in body if isinstance(s, ast.Raise)):
        raise StubError(f"{name}: the stub's line {outside.lineno} raises outside a function, so importing it "
                        f"fails: outside functions, mark solution-only lines with {BEGIN_DROP!r} or "
                        f"{LINE_MARK.strip()!r}")
    functions = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for cls in classes:
        functions += [n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for fn in functions:
        body = fn.body[1:] if ast.get_docstring(fn, clean=False) is not None else fn.body
        if [ast.unparse(s) for s in body] != [STUB_BODY]:
            raise StubError(f"{name}: in the stub, {fn.name} (line {fn.lineno}) would run code instead of "
                            f"`{STUB_BODY}`: wrap its body in {BEGIN!r} / {END!r} (or the whole function in "
                            f"{BEGIN_DROP!r} / {END!r} if learners do not write it)")


def pairs(chapters: list[str] | None = None, solutions: Path = SOLUTIONS,
          exercises: Path = EXERCISES) -> list[tuple[Path, Path]]:
    """(solution, stub) paths of every chapter file, or of the chapters named ("04" or "ch04_sampling")."""
    if not solutions.is_dir():
        raise StubError(f"{solutions} does not exist: the stubs are generated in the course repository (a "
                        "students' hand-out has no solutions/)")
    found = sorted(solutions.glob("ch[0-9][0-9]_*.py"))
    if chapters:
        wanted = {c[2:4] if c.startswith("ch") else c.zfill(2) for c in chapters}
        unknown = wanted - {p.name[2:4] for p in found}
        if unknown:
            raise StubError(f"no solution file for chapter(s) {', '.join(sorted(unknown))} in {solutions} "
                            f"(there are: {', '.join(p.name[2:4] for p in found)})")
        found = [p for p in found if p.name[2:4] in wanted]
    return [(p, exercises / p.name) for p in found]


def _generated(solution: Path) -> str:
    """The stub of a solution file, read as bytes: its line endings (a Windows checkout's CRLF too) are kept."""
    return generate(solution.read_bytes().decode("utf-8"), f"{solution.parent.name}/{solution.name}")


def drift(chapters: list[str] | None = None, solutions: Path = SOLUTIONS, exercises: Path = EXERCISES) -> list[str]:
    """One message (with a short diff) for every committed stub that differs from the one its solution generates."""
    problems = []
    for solution, stub in pairs(chapters, solutions, exercises):
        rel = f"{exercises.name}/{stub.name}"
        want = _generated(solution)
        if not stub.exists():
            problems.append(f"{rel} is missing")
            continue
        have = stub.read_bytes().decode("utf-8")
        if have != want:
            diff = difflib.unified_diff(have.splitlines(keepends=True), want.splitlines(keepends=True),
                                        f"{rel} (committed)", f"{rel} (generated)", n=1)
            problems.append(f"{rel} differs from what {solutions.name}/{solution.name} generates:\n"
                            + "".join(list(diff)[:40]))
    for stub in sorted(exercises.glob("ch[0-9][0-9]_*.py")):
        if not (solutions / stub.name).exists():
            problems.append(f"{exercises.name}/{stub.name} has no solution {solutions.name}/{stub.name} to come from")
    return problems


def write(chapters: list[str] | None = None, solutions: Path = SOLUTIONS, exercises: Path = EXERCISES) -> list[Path]:
    """Write the generated stubs; return the files that changed."""
    changed = []
    for solution, stub in pairs(chapters, solutions, exercises):
        text = _generated(solution)
        if not stub.exists() or stub.read_bytes() != text.encode("utf-8"):
            stub.write_bytes(text.encode("utf-8"))  # bytes: the line endings are the solution's, on every OS
            changed.append(stub)
    return changed


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.stubs", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=("write", "check"), help="write the stubs, or check the committed ones")
    p.add_argument("chapters", nargs="*", help="chapter numbers (04) or modules (ch04_sampling); default: all")
    args = p.parse_args(argv)
    try:
        if args.command == "write":
            changed = write(args.chapters or None)
            print("\n".join(f"wrote {c.relative_to(REPO)}" for c in changed) or "The stubs were up to date.")
            return 0
        problems = drift(args.chapters or None)
    except StubError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if problems:
        print("\n".join(problems) + "\nEdit solutions/ (the one source), then run: python -m tools.stubs write",
              file=sys.stderr)
        return 1
    print("Every stub in exercises/ is what its solution generates.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
