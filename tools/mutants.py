"""The mutant proof: every plausible wrong answer kept in mutants/ must fail its checks.

A mutant is `mutants/<chapter module>/<exercise>__<slug>.py`: header constants EXERCISE, MISTAKE and
EXPECT (plain literals, read with `ast`), then a function named EXERCISE (see mutants/README.md).

Grading is batched: round r takes the r-th mutant of every exercise and writes, per chapter, one file
made of the reference solution followed by those mutants, each executed in its own copy of the
solution's namespace (so a mutant that calls another exercise calls the correct reference). All the
chapters of a round are graded by one `scheduler.grade_many` call with a shared Checker.

    python -m tools.mutants              every chapter
    python -m tools.mutants 04 -v        one chapter (or one exercise), with each mutant's result
"""
from __future__ import annotations

import argparse
import ast
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from grading import catalog, i18n, model

REPO = Path(__file__).resolve().parent.parent
MUTANTS = REPO / "mutants"
HEADER = ("EXERCISE", "MISTAKE", "EXPECT")
MIN_PER_EXERCISE = 5


@dataclass
class Mutant:
    chapter_module: str  # the folder name, e.g. "ch04_sampling"
    exercise: str
    mistake: str
    expect: str | None
    path: Path

    @property
    def slug(self) -> str:
        return self.path.stem.split("__", 1)[-1]

    @property
    def label(self) -> str:
        return f"{self.chapter_module}/{self.path.name}"


@dataclass
class MutantResult:
    mutant: Mutant
    status: str
    ok: bool
    problem: str = ""
    named: str = ""  # the mistakes the judge NAMED for it ("Likely mistake: ..." lines), one per line
    named_zh: str = ""  # the same in Chinese, rendered from the same run
    own_zh: str = ""  # the Chinese of the named mistake that carries its EXPECT (the cross test in Chinese)


class MutantFormatError(ValueError):
    pass


def parse(path: Path) -> Mutant:
    """Read a mutant file's header without executing it; raise MutantFormatError if it is malformed."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except SyntaxError as exc:
        raise MutantFormatError(f"{path}: not valid Python ({exc.msg}, line {exc.lineno})") from None
    values: dict[str, object] = {}
    defined: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if node.targets[0].id in HEADER:
                try:
                    values[node.targets[0].id] = ast.literal_eval(node.value)
                except ValueError as exc:
                    raise MutantFormatError(f"{path}: {node.targets[0].id} must be a plain literal") from exc
        elif isinstance(node, ast.FunctionDef):
            defined.add(node.name)
    missing = [h for h in HEADER if h not in values]
    if missing:
        raise MutantFormatError(f"{path}: missing header constant(s) {', '.join(missing)}")
    exercise, mistake, expect = (values[h] for h in HEADER)
    if not isinstance(exercise, str) or not path.stem.startswith(exercise + "__"):
        raise MutantFormatError(f"{path}: the file name must start with EXERCISE + '__' ({exercise!r})")
    if not isinstance(mistake, str) or not mistake.strip():
        raise MutantFormatError(f"{path}: MISTAKE must be a non-empty string")
    if expect is not None and (not isinstance(expect, str) or not expect):
        raise MutantFormatError(f"{path}: EXPECT must be a non-empty string or None")
    if exercise not in defined:
        raise MutantFormatError(f"{path}: defines no function {exercise}()")
    return Mutant(path.parent.name, exercise, mistake, expect, path)


def discover(root: Path = MUTANTS, errors: list[str] | None = None) -> list[Mutant]:
    """Every mutant under `root`, sorted by chapter and file name. A malformed file raises MutantFormatError,
    or, when `errors` is a list, is reported there and skipped."""
    found = []
    for p in (p for d in sorted(root.iterdir()) if d.is_dir() and d.name[:2] == "ch" for p in sorted(d.glob("*__*.py"))):
        try:
            found.append(parse(p))
        except MutantFormatError as exc:
            if errors is None:
                raise
            errors.append(str(exc))
    return found


def round_source(solution: str, mutants: list[Mutant]) -> str:
    """The reference solution followed by `mutants`, each loaded into its own copy of the solution's namespace."""
    parts = [solution, "\n\n# ---- mutants (tools/mutants.py) ----\n",
             "def _load_mutant(_source, _name, _label):\n"
             "    _ns = {k: v for k, v in globals().items() if not k.startswith('_mutant')}\n"
             "    exec(compile(_source, _label, 'exec'), _ns)\n"
             "    return _ns[_name]\n\n",
             "_mutant_functions = {}\n"]
    for m in mutants:
        parts.append(f"_mutant_functions[{m.exercise!r}] = _load_mutant({m.path.read_text(encoding='utf-8')!r}, "
                     f"{m.exercise!r}, {('mutant ' + m.label)!r})\n")
    parts.append("globals().update(_mutant_functions)\n")
    return "".join(parts)


def rounds(mutants: list[Mutant]) -> list[dict[str, list[Mutant]]]:
    """[{chapter module: the mutants of that round (at most one per exercise)}, ...]."""
    by_exercise: dict[tuple[str, str], list[Mutant]] = {}
    for m in mutants:
        by_exercise.setdefault((m.chapter_module, m.exercise), []).append(m)
    n = max((len(v) for v in by_exercise.values()), default=0)
    out = []
    for r in range(n):
        chapters: dict[str, list[Mutant]] = {}
        for (chapter, _), ms in by_exercise.items():
            if r < len(ms):
                chapters.setdefault(chapter, []).append(ms[r])
        out.append(chapters)
    return out


def translated(module: str, lang: str = "zh") -> bool:
    """Whether chapter `module` has its `lang` catalog yet (the Chinese check applies from then on)."""
    return i18n.has_catalog(module, lang)


def _named(mistakes: list[str], lang: str) -> list[str]:
    """The named mistakes (CaseResult.mistake, marked), rendered in `lang`."""
    return [i18n.render(k, lang) for k in mistakes]


def judge_mutant(m: Mutant, result) -> MutantResult:
    """Whether the judge's result for the mutant's exercise proves the mutant wrong and names it, in English (EXPECT)
    and in Chinese (the message that carries the mistake entirely from the catalog). `result` is marked
    (grade(..., lang=i18n.MARKED)); a rendered one is checked in English only."""
    if result is None:
        return MutantResult(m, "missing", False, "the judge returned no result for this exercise")
    if result.status == model.PASSED:
        return MutantResult(m, result.status, False, "the mutant PASSES the checks")
    if result.status == model.NOT_ATTEMPTED:
        return MutantResult(m, result.status, False, "the mutant counts as not attempted (NotImplementedError?)")
    marked = [c.full_message for c in result.cases if not c.passed] + [result.message]
    english = [i18n.render(msg, "en") for msg in marked]
    messages = "\n".join(english)
    own = [c.mistake for c in result.cases if not c.passed and c.mistake]  # what the checks named, as data
    named = "\n".join(k.split("\n", 1)[0].strip() for k in _named(own, "en"))
    named_zh = "\n".join(_named(own, "zh"))
    if m.expect is not None and m.expect not in messages:
        first = next((c for c in result.cases if not c.passed), None)
        shown = f"{i18n.render(first.name, 'en')}: {i18n.render(first.full_message, 'en')}" if first else messages
        return MutantResult(m, result.status, False, f"fails, but no message contains {m.expect!r}; first failure: "
                                                     f"{shown[:600]}", named, named_zh)
    if m.expect is not None and translated(m.chapter_module):
        carrier = next(msg for msg, en in zip(marked, english) if m.expect in en)
        untranslated = i18n.leaks(carrier, "zh") if i18n.START in carrier else []
        if untranslated:
            return MutantResult(m, result.status, False, f"names its mistake in English, but not all in Chinese: "
                                                         f"no translation for {untranslated[0][:300]!r}", named,
                                named_zh)
    own_zh = next((i18n.render(k, "zh") for k in own if m.expect and m.expect in i18n.render(k, "en")), "")
    return MutantResult(m, result.status, True, "", named, named_zh, own_zh)


def cross_check(results: list[MutantResult]) -> list[MutantResult]:
    """Mark every mutant whose NAMED mistakes carry another mutant's EXPECT (same exercise): the judge told it
    a mistake it did not make. Possible-cause lists are not names and are not checked."""
    by_exercise: dict[tuple[str, str], list[MutantResult]] = {}
    for r in results:
        by_exercise.setdefault((r.mutant.chapter_module, r.mutant.exercise), []).append(r)
    for group in by_exercise.values():
        for r in group:
            wrong = [o.mutant for o in group if o is not r and o.mutant.expect and o.mutant.expect != r.mutant.expect
                     and (o.mutant.expect in r.named or (o.own_zh and o.own_zh in r.named_zh.splitlines()))]
            if wrong and r.ok:
                r.ok = False
                r.problem = (f"its message names another mutant's mistake: {wrong[0].expect!r} "
                             f"({wrong[0].path.name}); named: {r.named[:300]!r}")
    return results


def prove(target: str | None = None, *, memory_mb: int = 6144, verbose: bool = False,
          checker=None, root: Path = MUTANTS) -> tuple[list[MutantResult], list[str]]:
    """Grade every mutant (of a chapter or exercise, if `target`); return (results, notes)."""
    from grading.engine import scheduler
    from grading.engine.checker import Checker

    chapters = {c.module: c for c in catalog.load_chapters()}
    notes: list[str] = []
    mutants = []
    broken: list[str] = []
    found = discover(root, broken)
    results: list[MutantResult] = [MutantResult(Mutant(Path(e.split(":")[0]).parent.name, "?", "malformed mutant file",
                                                       None, Path(e.split(":")[0])), "malformed", False, e)
                                   for e in broken]
    for m in found:
        chapter = chapters.get(m.chapter_module)
        if chapter is None:
            if f"mutants/{m.chapter_module}" not in " ".join(notes):
                notes.append(f"mutants/{m.chapter_module}/ has no chapter module grading/checks/{m.chapter_module} yet: "
                             "skipped")
            continue
        if target and not (chapter.number == catalog.chapter_number(target)
                           or target in (chapter.module, m.exercise)):
            continue
        if m.exercise not in {e.name for e in chapter.exercises}:
            notes.append(f"{m.label}: chapter {chapter.number} has no exercise {m.exercise!r}")
            continue
        mutants.append(m)
    checker = checker or Checker()
    plans = rounds(mutants)
    with tempfile.TemporaryDirectory(prefix="mutants-") as tmp:
        folders = []
        for r, plan in enumerate(plans):
            folder = Path(tmp) / f"round{r}" / "exercises"
            folder.mkdir(parents=True)
            for module, ms in plan.items():
                solution = (REPO / "solutions" / f"{module}.py").read_text(encoding="utf-8")
                (folder / f"{module}.py").write_text(round_source(solution, ms), encoding="utf-8")
            folders.append(folder)
        start = time.perf_counter()
        target_arg = None  # grade only what the mutants need: one exercise, one chapter, or everything
        if len({(m.chapter_module, m.exercise) for m in mutants}) == 1:
            target_arg = mutants[0].exercise
        elif len({m.chapter_module for m in mutants}) == 1:
            target_arg = chapters[mutants[0].chapter_module].number
        # warm workers: every round's folders in one call
        graded_rounds = scheduler.grade_many(folders, target_arg, memory_mb=memory_mb, checker=checker,
                                             lang=i18n.MARKED)  # one run, checked in English and Chinese
        for plan, graded_list in zip(plans, graded_rounds):
            graded = {(res.chapter, res.name): res for res in graded_list}
            for module, ms in plan.items():
                for m in ms:
                    res = judge_mutant(m, graded.get((chapters[module].number, m.exercise)))
                    results.append(res)
                    if verbose:
                        mark = "ok " if res.ok else "BAD"
                        print(f"  [{mark}] {m.label:<62} {res.status}{'  ' + res.problem if res.problem else ''}")
        cross_check(results)
        if verbose:
            for res in results:
                if not res.ok and res.problem.startswith("its message names"):
                    print(f"  [BAD] {res.mutant.label:<62} {res.problem}")
            print(f"  {len(results)} mutants in {len(plans)} rounds graded in {time.perf_counter() - start:.1f} s",
                  flush=True)
    return results, notes


def counts(chapters=None, root: Path = MUTANTS) -> dict[str, int]:
    """Mutants per exercise name, for every non-quiz exercise of the loaded chapters (0 where none)."""
    chapters = chapters or catalog.load_chapters()
    found: dict[tuple[str, str], int] = {}
    for m in discover(root, []):
        found[(m.chapter_module, m.exercise)] = found.get((m.chapter_module, m.exercise), 0) + 1
    return {e.name: found.get((c.module, e.name), 0) for c in chapters for e in c.exercises if not e.is_quiz}


def problems(results: list[MutantResult], per_exercise: dict[str, int] | None = None) -> list[str]:
    """Human-readable problems: surviving or unnamed mutants, and exercises with too few mutants."""
    out = [f"mutant {r.mutant.label} ({r.mutant.mistake}): {r.problem}" for r in results if not r.ok]
    out += [f"exercise {name} has {n} mutants in mutants/; it needs at least {MIN_PER_EXERCISE}"
            for name, n in (per_exercise or {}).items() if n < MIN_PER_EXERCISE]
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Prove that every mutant in mutants/ fails its checks.")
    p.add_argument("target", nargs="?", help="a chapter number or exercise name")
    p.add_argument("-v", "--verbose", action="store_true", help="print each mutant's result")
    args = p.parse_args(argv)
    start = time.perf_counter()
    results, notes = prove(args.target, verbose=args.verbose)
    per = counts() if not args.target else None
    found = problems(results, per)
    for n in notes:
        print("note:", n)
    print(f"{sum(r.ok for r in results)}/{len(results)} mutants fail as they should "
          f"({time.perf_counter() - start:.1f} s).")
    if found:
        print("PROBLEMS:\n  " + "\n  ".join(found))
        return 1
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    sys.exit(main())
