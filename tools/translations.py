"""Keep a translated edition of the notebooks (notebooks/<lang>/) in step with the English one.

    python tools/translations.py status zh        # what needs translating: missing, stale, extra cells
    python tools/translations.py sync zh          # copy code and outputs from English; keep translated prose
    python tools/translations.py done zh NB ID..  # mark cells of notebooks/zh/NB as translated from today's English
    python tools/translations.py contract zh NB ID FUNCTION  # that cell translates FUNCTION's stub docstring
    python tools/translations.py check zh         # exit 1 if anything is out of step (the test suite runs this)

A translated notebook has the English notebook's cells in the same order with the same ids. Code cells carry the
English code (comments may be translated) and outputs that carry exactly the English numbers (`same_numbers`): the
notebook is executed in its language, where lesson_utils translates what cells print (output_text.py) and labels
figures, each figure recording a summary of its data (figure_data.py); nbval runs the English one. Each
markdown cell records in its metadata the hash of the English source it translates, so an English edit makes it
stale until a translator looks at it again.
"""
from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import re
import sys
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("figure_data", ROOT / "lesson_utils" / "figure_data.py")
figure_data = importlib.util.module_from_spec(_spec)  # numpy only: not lesson_utils/__init__, which loads torch
_spec.loader.exec_module(figure_data)
NOTEBOOKS = ROOT / "notebooks"
KEY = "translation"  # cell metadata: {"sha": hash of the English source this cell translates}
CONTRACTS = "contracts"  # in KEY: [{"function": name, "sha": hash of the stub docstring the cell translates}, ...]
HEADING = re.compile(r"^(#{1,6})\s", re.M)
ANCHOR = re.compile(r"<a\s+(?:id|name)=[\"']([^\"']+)[\"']|\]\((#[^)\s]+|[\w./-]+\.ipynb(?:#[^)\s]*)?)\)")


NUMBER = re.compile(r"\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")
TEXT_MIMES = ("text/plain", "text/html", "text/markdown", "text/latex")
IMAGE_MIMES = ("image/png", "image/jpeg", "image/svg+xml")
VOLATILE = "NBVAL_IGNORE_OUTPUT"  # a cell whose outputs nbval does not compare: timings, the environment


def _numbers(text: str | list[str]) -> list[str]:
    return sorted(NUMBER.findall(text if isinstance(text, str) else "".join(text)))


def coalesce_streams(outputs: list[dict]) -> list[dict]:
    """Consecutive outputs of one stream as one (as nbval compares them): where a kernel cut what a cell printed
    depends on timing, not on the cell."""
    out: list[dict] = []
    for o in outputs:
        if o.get("output_type") == "stream" and out and out[-1].get("output_type") == "stream" and (
                out[-1].get("name") == o.get("name")):
            out[-1] = dict(out[-1], text="".join(out[-1].get("text", "")) + "".join(o.get("text", "")))
        else:
            out.append(o)
    return out


def _same_figure_data(english: dict, translated: dict) -> bool:
    """Two figures draw the same numbers: both record the summary of their data (lesson_utils/figure_data.py), and
    the summaries agree."""
    return figure_data.same_data(english.get("metadata", {}).get(figure_data.KEY),
                                 translated.get("metadata", {}).get(figure_data.KEY))


def same_numbers(english: list[dict], translated: list[dict], numbers: bool = True) -> bool:
    """True if a translated cell's outputs are the English ones in other words: the same outputs, kinds and
    execution counts, every non-text payload identical except a figure whose recorded data summary is the English
    figure's (its words translated), every text carrying the same numbers (as a multiset: a translation may
    reorder a sentence, never change or drop a number). numbers=False: a cell whose numbers differ from run to run
    (timings, marked for nbval with VOLATILE) is compared in everything but its numbers and its figures' data."""
    english, translated = coalesce_streams(english), coalesce_streams(translated)
    if len(english) != len(translated):
        return False
    for e, t in zip(english, translated):
        if (e.get("output_type"), e.get("name"), e.get("execution_count")) != (
                t.get("output_type"), t.get("name"), t.get("execution_count")):
            return False
        if e.get("output_type") == "stream":
            if numbers and _numbers(e.get("text", "")) != _numbers(t.get("text", "")):
                return False
            continue
        ed, td = e.get("data", {}), t.get("data", {})
        if set(ed) != set(td) or any(ed[k] != td[k] for k in ed if k not in TEXT_MIMES and not (
                k in IMAGE_MIMES and (not numbers or _same_figure_data(e, t)))):
            return False
        if numbers and any(_numbers(ed[k]) != _numbers(td[k]) for k in ed if k in TEXT_MIMES):
            return False
        if e.get("ename") != t.get("ename"):
            return False
    return True


def english_hash(source: str) -> str:
    """The short hash a translated cell records for the English text it translates."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]


def code_tokens(source: str) -> list[str]:
    """Code without its comments and layout, so a cell with translated comments still equals the English one."""
    try:
        tokens = tokenize.generate_tokens(io.StringIO(source).readline)
        return [t.string for t in tokens if t.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE,
                                                           tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return [line.split("#", 1)[0].rstrip() for line in source.splitlines()]


def stub_docstrings(exercises: Path = ROOT / "exercises") -> dict[str, str]:
    """Every exercise stub's docstring (its contract), by function or class name."""
    import ast

    out = {}
    for path in sorted(exercises.glob("ch*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and ast.get_docstring(node):
                out[node.name] = ast.get_docstring(node)
    return out


def contract_problems(lang: str, folder: Path = NOTEBOOKS) -> list[str]:
    """Exercise contracts with no translation in notebooks/<lang>/, or translating an older docstring."""
    docs = stub_docstrings(folder.parent / "exercises")
    seen: dict[str, str] = {}
    out = []
    for path in sorted((folder / lang).glob("*.ipynb")):
        for cell in _load(path)["cells"]:
            for entry in (cell.get("metadata", {}).get(KEY) or {}).get(CONTRACTS, []):
                seen[entry["function"]] = entry["sha"]
                if entry["function"] not in docs:
                    out.append(f"{path.name}: cell {cell.get('id')} translates the contract of {entry['function']}, "
                               "which no exercise stub defines")
    for name, doc in docs.items():
        if name not in seen:
            out.append(f"exercise {name}: its contract (the stub's docstring) has no translation in any "
                       f"notebooks/{lang}/ 'your turn' cell")
        elif seen[name] != english_hash(doc):
            out.append(f"exercise {name}: the stub's docstring changed since its contract was translated")
    return out


def mark_contract(english: Path, lang: str, cell_id: str, function: str) -> None:
    """Record that a translated 'your turn' cell carries the contract of `function` as its stub says it today."""
    doc = stub_docstrings(english.parent.parent / "exercises").get(function)
    if doc is None:
        raise SystemExit(f"no exercise stub named {function} has a docstring")
    target = translated_path(english, lang)
    tr = _load(target)
    for cell in tr["cells"]:
        if cell.get("id") == cell_id:
            entries = cell.setdefault("metadata", {}).setdefault(KEY, {}).setdefault(CONTRACTS, [])
            entries[:] = [e for e in entries if e["function"] != function]
            entries.append({"function": function, "sha": english_hash(doc)})
    _save(tr, target)


def _source(cell: dict) -> str:
    s = cell["source"]
    return s if isinstance(s, str) else "".join(s)


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _save(nb: dict, path: Path) -> None:
    import nbformat  # writes exactly as Jupyter does, so opening the file in JupyterLab changes nothing

    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nbformat.from_dict(nb), str(path))


def translated_path(english: Path, lang: str) -> Path:
    return english.parent / lang / english.name


@dataclass
class Report:
    """What is out of step in one translated notebook."""
    notebook: str
    missing_notebook: bool = False
    untranslated: list[str] = field(default_factory=list)  # markdown cells never translated
    stale: list[str] = field(default_factory=list)  # English text changed since the translation
    layout: list[str] = field(default_factory=list)  # cells, code, outputs, headings or anchors that differ

    @property
    def ok(self) -> bool:
        return not (self.missing_notebook or self.untranslated or self.stale or self.layout)

    def lines(self) -> list[str]:
        if self.missing_notebook:
            return [f"{self.notebook}: no translation yet (run: python tools/translations.py sync LANG)"]
        out = [f"{self.notebook}: cell {cid} is not translated yet" for cid in self.untranslated]
        out += [f"{self.notebook}: cell {cid} translates an older English text: re-translate it, then mark it done"
                for cid in self.stale]
        return out + [f"{self.notebook}: {problem}" for problem in self.layout]


def compare(english: Path, lang: str) -> Report:
    """Check one translated notebook against its English original."""
    report = Report(english.name)
    target = translated_path(english, lang)
    if not target.exists():
        report.missing_notebook = True
        return report
    en, tr = _load(english), _load(target)
    en_ids = [c.get("id") for c in en["cells"]]
    tr_ids = [c.get("id") for c in tr["cells"]]
    if en_ids != tr_ids:
        only_en = [i for i in en_ids if i not in tr_ids]
        only_tr = [i for i in tr_ids if i not in en_ids]
        report.layout.append(f"cells differ from the English edition (only in English: {only_en}, only here: "
                             f"{only_tr}; or the order differs): run sync")
        return report
    for e, t in zip(en["cells"], tr["cells"]):
        cid, es, ts = e.get("id"), _source(e), _source(t)
        if e["cell_type"] != t["cell_type"]:
            report.layout.append(f"cell {cid} is {t['cell_type']} here but {e['cell_type']} in English")
        elif e["cell_type"] == "code":
            if code_tokens(es) != code_tokens(ts):
                report.layout.append(f"cell {cid}: the code differs from the English edition (only comments may)")
            if e.get("outputs") != t.get("outputs") and not same_numbers(e.get("outputs", []), t.get("outputs", []),
                                                                         numbers=VOLATILE not in es):
                report.layout.append(f"cell {cid}: the outputs differ from the English edition (not only in their "
                                     "words: in kind, numbers or figures): run sync, or run the cell again")
        elif e["cell_type"] == "markdown":
            recorded = (t.get("metadata", {}).get(KEY) or {}).get("sha")
            if recorded is None:
                report.untranslated.append(cid)
                continue
            if recorded != english_hash(es):
                report.stale.append(cid)
            if [len(h) for h in HEADING.findall(es)] != [len(h) for h in HEADING.findall(ts)]:
                report.layout.append(f"cell {cid}: its headings do not line up with the English cell's")
            if sorted(ANCHOR.findall(es)) != sorted(ANCHOR.findall(ts)):
                report.layout.append(f"cell {cid}: its anchors or notebook links differ from the English cell's")
    return report


def sync(english: Path, lang: str) -> Report:
    """Rebuild the translated notebook on the English one: English code, outputs and order; translated prose kept."""
    target = translated_path(english, lang)
    en = _load(english)
    old = {c.get("id"): c for c in _load(target)["cells"]} if target.exists() else {}
    cells = []
    for e in en["cells"]:
        cell = json.loads(json.dumps(e))
        t = old.get(e.get("id"))
        if t is not None and t["cell_type"] == e["cell_type"]:
            if e["cell_type"] == "code" and code_tokens(_source(t)) == code_tokens(_source(e)):
                cell["source"] = t["source"]  # keep translated comments
                if same_numbers(e.get("outputs", []), t.get("outputs", []), numbers=VOLATILE not in _source(e)):
                    cell["outputs"] = t["outputs"]  # outputs in the edition's language, with the English numbers
            elif e["cell_type"] != "code":
                cell["source"] = t["source"]
                if KEY in t.get("metadata", {}):
                    cell.setdefault("metadata", {})[KEY] = t["metadata"][KEY]
        cells.append(cell)
    _save(dict(en, cells=cells), target)
    return compare(english, lang)


def mark_done(english: Path, lang: str, cell_ids: list[str]) -> None:
    """Record that these translated cells now translate today's English text."""
    target = translated_path(english, lang)
    en = {c.get("id"): _source(c) for c in _load(english)["cells"]}
    tr = _load(target)
    unknown = set(cell_ids) - set(en)
    if unknown:
        raise SystemExit(f"{english.name} has no cells {sorted(unknown)}")
    for cell in tr["cells"]:
        if cell.get("id") in cell_ids:
            cell.setdefault("metadata", {}).setdefault(KEY, {})["sha"] = english_hash(en[cell["id"]])
    _save(tr, target)


def translate(english: Path, lang: str, texts: dict[str, str]) -> None:
    """Write translated markdown for the given cell ids and mark them done (the API translators' scripts use)."""
    target = translated_path(english, lang)
    if not target.exists():
        sync(english, lang)
    tr = _load(target)
    for cell in tr["cells"]:
        if cell.get("id") in texts:
            if cell["cell_type"] != "markdown":
                raise SystemExit(f"{english.name}: cell {cell['id']} is code; translate its comments in place")
            cell["source"] = texts[cell["id"]]
    _save(tr, target)
    mark_done(english, lang, list(texts))


def _notebook(name: str) -> Path:
    """notebooks/NAME, with or without '.ipynb'; a clear exit when there is no such English notebook."""
    path = NOTEBOOKS / (name if name.endswith(".ipynb") else name + ".ipynb")
    if not path.is_file():
        names = ", ".join(p.stem for p in sorted(NOTEBOOKS.glob("*.ipynb")))
        raise SystemExit(f"no notebook {path.name} in notebooks/: give one of {names}")
    return path


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] not in ("status", "sync", "done", "contract", "check"):
        print(__doc__)
        return 2
    command, lang = argv[0], argv[1]
    if command == "done":
        mark_done(_notebook(argv[2]), lang, argv[3:])
        return 0
    if command == "contract":  # contract LANG NB CELL_ID FUNCTION
        mark_contract(_notebook(argv[2]), lang, argv[3], argv[4])
        return 0
    reports = [(sync if command == "sync" else compare)(nb, lang) for nb in sorted(NOTEBOOKS.glob("*.ipynb"))]
    extra = sorted({p.name for p in (NOTEBOOKS / lang).glob("*.ipynb")} - {p.name for p in NOTEBOOKS.glob("*.ipynb")})
    lines = [line for r in reports for line in r.lines()]
    lines += [f"{name}: exists only in notebooks/{lang}/ (no English original)" for name in extra]
    if command != "sync":
        lines += contract_problems(lang)
    print("\n".join(lines) if lines else f"notebooks/{lang}/ is in step with the English edition")
    return 1 if (lines and command in ("check", "status")) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
